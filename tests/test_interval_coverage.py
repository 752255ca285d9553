"""The seed-noise model held to its word on the authors' seeds (issue 48): on every release file the project ships,
every subset of k = 2, 3, 4 of a cell's five seeds gives the interval a verdict reads; it misses the value of all five
seeds, and (as a prediction) the value of the other seeds, at most at the stated 5% - per cell, and per panel value
with every cell at once (Bonferroni, as a best's lower end reads them). The tolerance: two binomial standard errors
of 5% at the number counted (seed subsets share seeds, so they are fewer independent draws than they look: the
tolerance is generous for it, never more). The per-cell rates are also held within the two strata where the model works
hardest (issue 57: pooled over every cell, the easy cells hid them): the cells whose seeds split, and the cells at a
cliff in G (analysis/calibration/holdout.py), each against all seeds. The noise prior this project used before (grouped
by each cell's observed G) fails the same check, so the test can fail; bench/guards.py shows which of these checks
catches each change of issue 57 (the prior halved or trusted too far, no cliff term)."""

from __future__ import annotations

import math

import pytest

from analysis.calibration.controls import LevelBinnedNoise
from analysis.calibration.holdout import finding_metrics, holdout, pooled
from search_spaces import get_study
from study.cli.findings import published_rows

pytestmark = pytest.mark.slow  # a long simulation: every seed subset of every cell of three release files

ALPHA = 0.05
#: The studies whose shipped published data are per-seed release runs (the other studies' are printed tables).
RELEASE = ("richter2020.fig3", "richter2020.fig5", "richter2020.fig7")


def _tolerated(count: int) -> float:
    return ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / count)


def _misses(name: str, **options: object) -> list:
    _, rows, meta, _ = published_rows(get_study(name), "published")
    rows = rows.collect().lazy()
    return holdout(meta, rows, finding_metrics(meta, rows.collect_schema().names()), **options)


@pytest.fixture(scope="module")
def found() -> list:
    return [m for name in RELEASE for m in _misses(name)]


@pytest.mark.parametrize("k", [2, 3, 4])
def test_k_seeds_cover_all_seeds_and_the_other_seeds_at_the_stated_rate(found: list, k: int) -> None:
    total = pooled(found, k)
    for what in ("all", "rest"):
        families, cells = total[f"family_misses_{what}"], total[f"cell_misses_{what}"]
        assert families / total["families"] <= _tolerated(total["families"]), (what, total)
        assert cells / total["cells"] <= ALPHA, (what, total)  # per cell: well inside


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("stratum", ["split", "cliff"])
def test_cells_whose_seeds_split_and_cells_at_a_cliff_are_covered_at_the_stated_rate(found: list, k: int,
                                                                                     stratum: str) -> None:
    """Measured (2026-11-28, bench/coverage.py): split cells 3.4%, 1.7%, 0.6% of all seeds' G outside the interval at
    k = 2, 3, 4 (5.1%, 4.6%, 4.5% of the other seeds', a prediction whose own spread in such a cell is bimodal:
    reported, not held), cliff cells 0.0%; the noise prior of before issue 48 10.1% on split cells at k = 2. Which of
    these checks catches each change of issue 57: bench/README.md section 13."""
    cells = sum(m.stratum(stratum)[0] for m in found if m.k == k)
    misses = sum(m.stratum(stratum)[1] for m in found if m.k == k)
    assert cells >= (500 if stratum == "split" else 1000)  # the strata hold enough cells to bind
    assert misses / cells <= _tolerated(cells), (stratum, k, misses, cells)


def test_every_metric_a_finding_reads_is_covered(found: list) -> None:
    metrics = {m.metric for m in found}
    assert {"val_accuracy", "train_accuracy", "train_first_accuracy"} <= metrics
    assert any(m.startswith("min(") for m in metrics) and all(m.families and m.cells for m in found)


def test_the_prior_grouped_by_observed_g_fails_the_same_check() -> None:
    old = pooled(_misses("richter2020.fig7", ks=(2,), noise=LevelBinnedNoise), 2)
    assert old["family_misses_all"] / old["families"] > _tolerated(old["families"]), old
