"""`study reproduction NAME`: a run against the authors' released seeds (docs/richter2020.md). The cell test is checked
against the one interval function on cells of known numbers; the command on a real smoke study of richter2020.fig7
against the shipped release."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from analysis.stats.intervals.reproduction import cell_test, format_cell_test
from tests.cli import run_cli


def _cells(cells: dict[tuple[str, int, float], tuple[float, float, int]]) -> dict[str, pl.DataFrame]:
    """A side's cells of val_accuracy: per (architecture, d_model, learning rate) its G, seed sd and seeds."""
    return {"val_accuracy": pl.DataFrame([{"architecture": a, "d_model": d, "learning_rate": lr, "g": g, "sd": sd,
                                           "n_seeds": n} for (a, d, lr), (g, sd, n) in cells.items()])}


def test_a_cell_excludes_the_authors_g_outside_the_interval_a_verdict_reads() -> None:
    """The cells both sides ran, each with the interval of G every verdict reads (the one interval function, the
    noise model fitted on this run's cells, each end at 2.5%): a cell excludes when the authors' G lies outside it; a
    cell with one seed has none and is left out of the shares; learning rates match to 6 digits."""
    from analysis.stats.intervals.cell import g_interval
    from analysis.stats.intervals.errors import Errors
    from analysis.stats.noise import NoiseModel
    from analysis.stats.table import cell_table

    ours = _cells({("NAP", 8, 0.027): (0.6, 0.1, 3), ("NAP", 16, 0.027): (0.8, 0.01, 3),
                   ("max", 8, 0.027): (0.1, 0.0, 1), ("max", 16, 0.0081): (0.13, 0.01, 2)})
    authors = _cells({("NAP", 8, 0.027): (0.9, 0.01, 5), ("NAP", 16, 0.027000000001): (0.8, 0.01, 5),
                      ("max", 8, 0.027): (0.2, 0.01, 5), ("max", 16, 0.0081): (0.13, 0.01, 5)})
    test = cell_test(ours, authors, "val_accuracy", "architecture")
    cells = test.cells.sort("architecture", "d_model")
    assert cells.get_column("n").to_list() == [3, 3, 1, 2] and cells.get_column("authors_n").to_list() == [5] * 4
    table = cell_table(ours, "val_accuracy")
    assert table is not None
    noise = NoiseModel.fit(table)
    annotated = noise.annotate(table)
    low, high = g_interval(annotated, noise.standard_errors(annotated), Errors(0.025, 0.025), "val_accuracy")
    expected = annotated.frame.with_columns(lo=pl.Series(low), hi=pl.Series(high)).sort("architecture", "d_model")
    assert cells.get_column("lo").to_list() == pytest.approx(expected.get_column("lo").to_list())  # the one interval
    assert cells.get_column("hi").to_list() == pytest.approx(expected.get_column("hi").to_list())
    assert cells.get_column("excludes").to_list() == [True, False, False, False]  # 0.9 above NAP 8's; one seed: none
    shares = {r["architecture"]: (r["exclude"], r["cells"]) for r in test.shares().iter_rows(named=True)}
    assert shares == {"NAP": (1, 2), "max": (0, 1), "all": (1, 3)}
    text = format_cell_test(test, 0.95)
    assert "     NAP:   1 of   2 cells (50%)" in text and "     all:   1 of   3 cells (33%)" in text
    assert "architecture=NAP, d_model=8, learning_rate=0.027: 0.600 [" in text
    assert "(3 seeds) vs 0.900 (5 seeds)" in text


@pytest.mark.slow
def test_the_command_puts_a_smoke_run_beside_the_release(fig7_smoke: Path) -> None:
    storage = fig7_smoke.parent  # a finished smoke run (tests/conftest.py)
    done = run_cli("reproduction", "richter2020.fig7", "--scale", "smoke", "--storage", str(storage))
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "against the authors' seeds (published:richter2020/mode__var_dim)" in out
    # part 1: best G and robustness per architecture beside the authors' (B): the release's numbers are fixed
    mte = next(line for line in out.splitlines() if line.startswith("val_accuracy  MTE"))
    assert "63.2  d_model=16, learning_rate=0.027" in mte and mte.rstrip().endswith("4/4")
    # part 2: 2 architectures x 2 sizes x 2 rates, 2 seeds each: every cell has an interval
    shares = [line for line in out.splitlines() if line.endswith("%)") and " cells (" in line]
    assert [line.split(":")[0].strip() for line in shares] == ["MTE", "max", "all"]
    assert all(" of   4 cells" in line for line in shares[:2]) and " of   8 cells" in shares[2]
    # part 3: every finding beside the authors' verdict (not checked at smoke scale, on either side)
    assert "findings: this run | the authors' data" in out
    assert "  NOT CHECKED | NOT CHECKED agree: Fig. 7 (Sec. 5.3, obs. 1): sum pooling works well" in out
    assert "4 of 4 finding(s) reach the same verdict on both" in out
    bad = run_cli("reproduction", "richter2020.fig7", "--scale", "smoke", "--storage", str(storage),
                  "--confidence", "1.5")
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "Error: invalid --confidence 1.5; allowed: a number between 0 and 1"]
