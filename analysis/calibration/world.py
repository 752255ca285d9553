"""The calibration's world: studies whose truth is known, built from the authors' own cells
(tests/test_budget_calibration.py, bench/calibration.py).

Every cell of a release file (all five seeds' learning curves of one configuration: cells whose seeds all learn, all
fail, and the mixed ones where some do and some do not) is a population: a replay's seed of that cell is one of its
five curves drawn at random (the bootstrap), plus the evaluation noise of a finite validation set (binomial, each
evaluation anew); the truth of a cell is the G of its whole population, the best over training of the mean of its five
curves. A seed of a replay is rows in the results schema, and everything from there (G as the best over training of
the seeds' mean, the seed noise, the intervals, the budget's looks) is the project's own runtime code: this package
imports it and is never imported by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from analysis.data.reference import open_reference
from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.evaluate import Verdict, evaluate_findings
from search_spaces import Finding
from search_spaces.record import StudyRecord

KEYS = ("architecture", "d_model", "learning_rate")
METRIC = "val_accuracy"
#: Validation examples behind one evaluation of the release's mode task (N = 256 sequences x 4 per batch).
EVALUATION_EXAMPLES = 1024
#: Offsets of a bound from the truth, in accuracy (a share: in cells): on it, and 0.5 and 2 points either side.


@dataclass(frozen=True)
class World:
    """Real cells as populations: per cell (``cells``) its seeds' curves (``curves``: cells x seeds x evaluations)."""

    cells: pl.DataFrame
    curves: np.ndarray
    steps: np.ndarray

    @classmethod
    def of_release(cls, name: str = "richter2020/mode__var_dim", architectures: Sequence[str] | None = None) -> World:
        """The cells of a shipped release file (``architectures``: a subset of its panel values)."""
        lf, _ = open_reference(name)
        if architectures:
            lf = lf.filter(pl.col("architecture").is_in(list(architectures)))
        rows = lf.select(*KEYS, "seed", "step", METRIC).collect().sort([*KEYS, "seed", "step"])
        cells = rows.select(KEYS).unique(maintain_order=True)
        seeds, steps = rows.get_column("seed").n_unique(), np.sort(rows.get_column("step").unique().to_numpy())
        curves = np.nan_to_num(rows.get_column(METRIC).to_numpy().reshape(cells.height, seeds, len(steps)), nan=0.0)
        return cls(cells, curves, steps)

    def truth(self, draws: int = 32) -> pl.DataFrame:
        """Per cell the population's G (the best over training of its curves' mean: the evaluation noise averages
        out), its best curve's best (``b``) and the mean absolute difference of two seeds' bests drawn from it
        (``gmd``, by simulation: ``draws`` noisy copies of each curve, since a seed's best over noisy evaluations is
        itself noisy): a cell table of infinitely many seeds (``sd`` 0)."""
        rng = np.random.default_rng(0)
        noisy = rng.binomial(EVALUATION_EXAMPLES, np.clip(np.repeat(self.curves, draws, axis=1), 0.0, 1.0))
        best = (noisy / EVALUATION_EXAMPLES).max(axis=2)
        gmd = np.abs(best[:, :, None] - best[:, None, :]).mean(axis=(1, 2))
        return self.cells.with_columns(g=pl.Series(self.curves.mean(axis=1).max(axis=1)), r=pl.lit(None, pl.Float64),
                                       b=pl.Series(self.curves.max(axis=(1, 2))), sd=pl.lit(0.0), gmd=pl.Series(gmd),
                                       gmd_var=pl.lit(0.0), n=pl.lit(10**9, pl.Int64))

    def draw(self, rng: np.random.Generator, seeds: int) -> np.ndarray:
        """One replay's seeds: cells x seeds x evaluations, each seed one of its cell's curves drawn at random (the
        bootstrap: the cell's five curves are its population) plus binomial evaluation noise."""
        cells, curves, _ = self.curves.shape
        chosen = rng.integers(0, curves, (cells, seeds))
        values = np.take_along_axis(self.curves, chosen[:, :, None], axis=1)
        noisy = rng.binomial(EVALUATION_EXAMPLES, np.clip(values, 0.0, 1.0)) / EVALUATION_EXAMPLES
        return np.asarray(noisy, dtype=float)

    def rows(self, values: np.ndarray, given: np.ndarray) -> pl.LazyFrame:
        """The results rows of the first ``given[c]`` seeds of every cell ``c``."""
        given_mask = np.arange(values.shape[1])[None, :, None] < given[:, None, None]
        cell, seed, step = np.nonzero(np.broadcast_to(given_mask, values.shape))
        frame = self.cells.with_row_index("_cell")
        return pl.DataFrame({"_cell": cell.astype(np.uint32), "seed": seed, "step": self.steps[step],
                             METRIC: values[cell, seed, step]}).join(frame, on="_cell").with_columns(
            trial_key=pl.col("_cell").cast(pl.String), status=pl.lit("ok")).drop("_cell").lazy()


def study(findings: Sequence[Finding], world: World, budget: str = "fixed", seeds: int = 5) -> StudyRecord:
    """The record of a study of ``world``'s grid (architecture x d_model x learning rate) with ``findings``."""
    axes = {c: tuple(sorted(world.cells.get_column(c).unique().to_list())) for c in KEYS}
    return StudyRecord(name="calibration", goal="known truth", tasks=("mode",), metric=METRIC,
                       scientific={"architecture": axes["architecture"], "d_model": axes["d_model"]},
                       nuisance={"learning_rate": axes["learning_rate"]}, findings=tuple(findings),
                       seeds=tuple(range(seeds)), budget=budget)


def true_verdicts(meta: StudyRecord, world: World) -> list[Verdict]:
    """The verdicts on the truth (no seed noise: every bound decided exactly). A time-axis bound reads a cell's
    population mean curve (two seeds that agree exactly: an interval of width 0); ``worst_beats_best`` reads every
    seed at its cell's G (its truth the sign of the true lead, :mod:`analysis.calibration.time_findings`), 500 seeds a
    cell (their separation chance below any error; 10**9 overflows it)."""
    truth = world.truth()
    if any(f.worst_beats_best for f in meta.findings):
        truth = truth.with_columns(worst_seed=pl.col("g"), best_seed=pl.col("g"), n=pl.lit(500, pl.Int64))
    evaluations = None
    if any(f.timed() for f in meta.findings):
        mean = np.repeat(world.curves.mean(axis=1, keepdims=True), 2, axis=1)
        evaluations = world.rows(mean, np.full(world.cells.height, 2)).collect()
    data = FindingData(cells={METRIC: truth}, panel="architecture", select_metric=METRIC, max_seeds=10**9,
                       evaluations=evaluations)
    return evaluate_findings(meta.replace(budget="fixed"), data)
