"""`study reproduction NAME`: a run against the authors' released seeds (docs/richter2020.md). The cell test's numbers
are checked on rows whose answer is worked out by hand; the command on a real smoke study of richter2020.fig7 against
the shipped release."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from analysis.report.reproduction import cell_test, format_cell_test
from tests.cli import run_cli


def _rows(cells: dict[tuple[str, int, float], list[float]], steps: int = 2) -> pl.LazyFrame:
    """Rows of several evaluations per seed: each seed's best is the value given, reached at its last step."""
    out = []
    for (arch, d, rate), bests in cells.items():
        for seed, best in enumerate(bests):
            for step in range(1, steps + 1):
                out.append({"architecture": arch, "d_model": d, "learning_rate": rate, "seed": seed, "step": step,
                            "val_accuracy": best * step / steps})
    return pl.LazyFrame(out)


def test_a_cell_excludes_the_authors_mean_outside_its_t_interval() -> None:
    ours = _rows({("NAP", 8, 0.027): [0.5, 0.6, 0.7],  # mean 0.6, sd 0.1, t(0.975, 2) = 4.303: [0.3516, 0.8484]
                  ("NAP", 16, 0.027): [0.8, 0.8, 0.8],  # no spread: an interval of one point
                  ("max", 8, 0.027): [0.1],  # one seed: no interval, left out of the shares
                  ("max", 16, 0.0081): [0.12, 0.14]})
    authors = _rows({("NAP", 8, 0.027): [0.9] * 5, ("NAP", 16, 0.027000000001): [0.8] * 5,
                     ("max", 8, 0.027): [0.2] * 5, ("max", 16, 0.0081): [0.13, 0.13, 0.13, 0.13, 0.13]}, steps=3)
    test = cell_test(ours, authors, ["architecture", "d_model", "learning_rate"], "architecture", "val_accuracy")
    cells = test.cells.sort("architecture", "d_model")
    assert cells.get_column("n").to_list() == [3, 3, 1, 2]
    nap8 = cells.row(0, named=True)
    assert (nap8["n"], nap8["authors_n"]) == (3, 5)
    assert nap8["lo"] == pytest.approx(0.6 - 4.302653 * 0.1 / 3 ** 0.5, abs=1e-5)
    assert nap8["hi"] == pytest.approx(0.8484, abs=1e-4) and nap8["excludes"]
    assert cells.get_column("excludes").to_list() == [True, False, False, False]  # 0.8 in [0.8, 0.8]; 0.13 inside
    shares = {r["architecture"]: (r["exclude"], r["cells"]) for r in test.shares().iter_rows(named=True)}
    assert shares == {"NAP": (1, 2), "max": (0, 1), "all": (1, 3)}
    text = format_cell_test(test, 0.95)
    assert "     NAP:   1 of   2 cells (50%)" in text and "     all:   1 of   3 cells (33%)" in text
    assert "architecture=NAP, d_model=8, learning_rate=0.027: 0.600 [0.352, 0.848] (3 seeds) vs 0.900 (5 seeds)" in text


@pytest.mark.slow
def test_the_command_puts_a_smoke_run_beside_the_release(tmp_path: Path) -> None:
    ran = run_cli("run", "richter2020.fig7", "--scale", "smoke", "--storage", str(tmp_path))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    done = run_cli("reproduction", "richter2020.fig7", "--scale", "smoke", "--storage", str(tmp_path))
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
    bad = run_cli("reproduction", "richter2020.fig7", "--scale", "smoke", "--storage", str(tmp_path),
                  "--confidence", "1.5")
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "Error: invalid --confidence 1.5; allowed: a number between 0 and 1"]
