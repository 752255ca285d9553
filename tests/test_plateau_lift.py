"""G is the best of noisy evaluations, so it reads high: the lift (how far G lies above the mean of the cell's best
evaluations, analysis/stats/seed_stats.py) moves the inflated end of its interval back. Held here on cells of known
truth where it matters most - flat plateaus, every evaluation a noisy reading of the same level - through the
project's own rows, statistics and the one interval function: 80 cells of a grid, each a level between 30% and 80%,
three seeds (each with its own offset, sd 1 point) read at 32 evaluations of 1,024 examples (binomial).

Measured (2026-11-28): the lower end of G's interval (one-sided 5%) lies above the true level in 15 of 80 cells with
the lift, 28 without it (3 seeds). The lift does its work, but on flat plateaus not all of it: the mean of the three
best evaluations is itself a best of noisy readings, so the lift undershoots the inflation (a known gap, docs/budget.md
"Known gaps": a best over a long flat plateau at few seeds reads up to about 2 points high at the lower end)."""

from __future__ import annotations

from functools import cache

import numpy as np
import polars as pl
import pytest

from analysis.data.meta import parse_meta
from analysis.data.synthetic import synthetic_record
from analysis.stats.intervals.cell import g_interval
from analysis.stats.intervals.errors import Errors
from analysis.stats.noise import NoiseModel
from analysis.stats.table import CellTable, cell_table
from analysis.stats.training_stats import training_stats

D_MODELS = (8, 16, 32, 64, 128, 256, 512, 1024)
RATES = tuple(float(x) for x in np.round(np.geomspace(1e-5, 0.3, 10), 8))
SEEDS, EVALUATIONS, EXAMPLES = 3, 32, 1024
pytestmark = pytest.mark.slow  # a simulation: 80 cells x 3 seeds x 32 evaluations through the statistics


def _level(i: int, j: int) -> float:
    return 0.3 + 0.5 * (i * len(RATES) + j) / (len(D_MODELS) * len(RATES))


@cache
def _cells() -> tuple[CellTable, NoiseModel, np.ndarray]:
    """The plateaus' cell table (annotated), its noise model and each cell's true level."""
    rng = np.random.default_rng(57)
    rows = []
    for i, d in enumerate(D_MODELS):
        for j, lr in enumerate(RATES):
            for seed in range(SEEDS):
                p = float(np.clip(_level(i, j) + rng.normal(0.0, 0.01), 0.0, 1.0))
                values = rng.binomial(EXAMPLES, p, EVALUATIONS) / EXAMPLES
                rows += [{"architecture": "NAP", "d_model": d, "learning_rate": lr, "seed": seed, "step": 100 * (e + 1),
                          "epoch": e + 1, "val_accuracy": float(values[e]), "status": "ok", "trial_key": f"{i}-{j}"}
                         for e in range(EVALUATIONS)]
    meta = parse_meta(synthetic_record(scientific={"architecture": ("NAP",), "d_model": D_MODELS},
                                       nuisance={"learning_rate": RATES}, seeds=tuple(range(SEEDS))))
    table = cell_table(training_stats(pl.DataFrame(rows).lazy(), meta).finding_cells(), "val_accuracy")
    assert table is not None
    noise = NoiseModel.fit(table)
    annotated = noise.annotate(table)
    index = {(d, lr): _level(i, j) for i, d in enumerate(D_MODELS) for j, lr in enumerate(RATES)}
    truth = np.array([index[(d, round(lr, 8))] for d, lr in annotated.frame.select("d_model", "learning_rate")
                      .iter_rows()])
    return annotated, noise, truth


def _lower_ends_above_the_truth(without_lift: bool = False) -> int:
    cells, noise, truth = _cells()
    if without_lift:
        cells = cells.replace(cells.frame.with_columns(lift=pl.lit(0.0)))
    low, _ = g_interval(cells, noise.standard_errors(cells), Errors(0.05, 0.05), "val_accuracy")
    return int((low > truth).sum())


def test_the_lift_moves_the_inflated_end_of_a_plateau_s_g_back() -> None:
    """With the lift 15 of 80 lower ends above the true level (measured), without it 28: the lift must keep at least
    a third of that difference, and its gap must not grow (a regression guard: the measured 15, and a margin)."""
    with_lift, without = _lower_ends_above_the_truth(), _lower_ends_above_the_truth(without_lift=True)
    assert without >= 25 and with_lift <= 18 and without - with_lift >= 8, (with_lift, without)


@pytest.mark.xfail(strict=True, reason="known gap (docs/budget.md, Known gaps): on flat plateaus the lift undershoots "
                                       "the inflation of a best of noisy evaluations; 15 of 80 lower ends above the "
                                       "truth where at most 5% (plus chance) is stated")
def test_a_plateau_s_lower_end_holds_the_stated_error() -> None:
    assert _lower_ends_above_the_truth() <= 9  # 5% of 80 is 4; 9 allows for chance (binomial 99th percentile)
