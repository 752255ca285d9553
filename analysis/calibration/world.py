"""The calibration's world: studies whose truth is known, built from the authors' own cells
(tests/test_budget_calibration.py, bench/calibration.py).

Every cell of a release file (all five seeds' learning curves of one configuration: cells whose seeds all learn, all
fail, and the mixed ones where some do and some do not) is a population: a replay's seed of that cell is one of its
five curves drawn at random (the bootstrap), plus the evaluation noise of a finite validation set (binomial, each
evaluation anew); the truth of a cell is the G of its whole population, the best over training of the mean of its five
curves. A seed of a replay is rows in the results schema, and everything from there (G as the best over training of
the seeds' mean, the seed noise, the intervals, the budget's looks) is the project's own runtime code: this package
imports it and is never imported by it.

**Hidden splits** (:meth:`World.with_hidden_splits`). A cell whose five seeds agree never splits in a bootstrap of
them, yet the release's splits come in bands: a cell next to cells whose seeds split may split too, and five seeds that
agree are a sample, not the cell. So the world lets such a cell split at the rate its grid neighbours do (the share of
its neighbours - same architecture, one grid step along each numeric axis - whose five seeds split, sd of their bests
above :data:`SPLIT_SD`): with that chance one of its five curves is replaced by the curve of a split neighbour that
lies farthest from the cell's own (the other side of the split). The truth is then that population's, and a replay's
two seeds that agree may hide it, as they may in a real study.

**Files the constants were not chosen on.** The noise model's constants (``PRIOR_DF``, ``JUMP_SHARE``) and the
futility shares were chosen on the var_dim files of the release (Figs. 3, 5, 7); :data:`HELD_OUT` is a file none of
them saw (mode finding over the vocabulary size, Fig. 16), its cells a world of their own.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt
import polars as pl

from analysis.data.reference import open_reference
from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.evaluate import Verdict, evaluate_findings
from search_spaces import Finding, Plot
from search_spaces.record import StudyRecord

#: The file the constants were chosen on (mode finding over d, Fig. 7), and one none of them saw (over S, Fig. 16).
CHOSEN_ON = "richter2020/mode__var_dim"
HELD_OUT = "richter2020/mode__var_vocab"
METRIC = "val_accuracy"
#: Validation examples behind one evaluation of the release's mode task (N = 256 sequences x 4 per batch).
EVALUATION_EXAMPLES = 1024
#: A cell's five seeds split when their bests' standard deviation exceeds this (learners beside failures).
SPLIT_SD = 0.05


@dataclass(frozen=True)
class World:
    """Real cells as populations: per cell (``cells``: architecture, the grid's x, learning rate) its seeds' curves
    (``curves``: cells x seeds x evaluations) at the evaluations ``steps``."""

    cells: pl.DataFrame
    curves: npt.NDArray[np.float64]
    steps: npt.NDArray[np.float64]
    #: :meth:`truth` per ``draws``, computed once (its noise comes from a fixed RNG seed: the same frame every call)
    _truths: dict[int, pl.DataFrame] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def keys(self) -> tuple[str, ...]:
        """The configuration columns: architecture, the grid's x (d_model, vocab_size), learning_rate."""
        return tuple(self.cells.columns)

    @property
    def x(self) -> str:
        """The grid's x column."""
        return self.keys[1]

    @classmethod
    def of_release(cls, name: str = CHOSEN_ON, architectures: Sequence[str] | None = None) -> World:
        """The cells of a shipped release file (``architectures``: a subset of its panel values). A file whose cells
        evaluate at different steps (Fig. 16's steps grow with S) is put on its evaluations' index, 1, 2, ..."""
        lf, _ = open_reference(name)
        names = lf.collect_schema().names()
        x = next(c for c in ("d_model", "vocab_size", "n_layers") if c in names)
        keys = ("architecture", x, "learning_rate")
        if architectures:
            lf = lf.filter(pl.col("architecture").is_in(list(architectures)))
        rows = lf.select(*keys, "seed", "step", METRIC).collect().sort([*keys, "seed", "step"])
        cells = rows.select(keys).unique(maintain_order=True)
        seeds = rows.get_column("seed").n_unique()
        evaluations = rows.height // (cells.height * seeds)
        steps = np.sort(rows.get_column("step").unique().to_numpy()).astype(float)
        if len(steps) != evaluations:
            steps = np.arange(1, evaluations + 1, dtype=float)
        values = rows.get_column(METRIC).to_numpy().reshape(cells.height, seeds, evaluations)
        return cls(cells, np.nan_to_num(values, nan=0.0), steps)

    def split(self) -> npt.NDArray[np.bool_]:
        """Per cell: whether its seeds split (:data:`SPLIT_SD`)."""
        return np.asarray(self.curves.max(axis=2).std(axis=1, ddof=1) > SPLIT_SD)

    def neighbours(self) -> list[list[int]]:
        """Per cell the indices of its grid neighbours: same architecture, at most one step away along x and the
        learning rate (itself left out)."""
        ranks = self.cells.with_columns(pl.col(self.x).rank("dense").alias("_x"),
                                        pl.col("learning_rate").rank("dense").alias("_l"))
        at = {(r["architecture"], r["_x"], r["_l"]): i for i, r in enumerate(ranks.iter_rows(named=True))}
        return [[at[(r["architecture"], r["_x"] + dx, r["_l"] + dl)] for dx in (-1, 0, 1) for dl in (-1, 0, 1)
                 if (dx or dl) and (r["architecture"], r["_x"] + dx, r["_l"] + dl) in at]
                for r in ranks.iter_rows(named=True)]

    def with_hidden_splits(self, seed: int = 0) -> World:
        """The world where a cell whose seeds agree splits at the rate its neighbours do (module docstring)."""
        rng = np.random.default_rng(seed)
        split, curves = self.split(), self.curves.copy()
        best = self.curves.max(axis=2)
        for i, around in enumerate(self.neighbours()):
            splitting = [j for j in around if split[j]]
            if split[i] or not splitting or rng.random() >= len(splitting) / len(around):
                continue
            j = splitting[rng.integers(len(splitting))]
            far = int(np.argmax(np.abs(best[j] - best[i].mean())))  # the neighbour's seed on the other side
            curves[i, rng.integers(curves.shape[1])] = self.curves[j, far]
        return replace(self, curves=curves)

    def truth(self, draws: int = 32) -> pl.DataFrame:
        """Per cell the population's G (the best over training of its curves' mean: the evaluation noise averages
        out), its best curve's best (``b``) and the mean absolute difference of two seeds' bests drawn from it
        (``gmd``, by simulation: ``draws`` noisy copies of each curve, since a seed's best over noisy evaluations is
        itself noisy): a cell table of infinitely many seeds (``sd`` 0)."""
        if draws not in self._truths:
            self._truths[draws] = self._truth(draws)
        return self._truths[draws]

    def _truth(self, draws: int) -> pl.DataFrame:
        rng = np.random.default_rng(0)
        noisy = rng.binomial(EVALUATION_EXAMPLES, np.clip(np.repeat(self.curves, draws, axis=1), 0.0, 1.0))
        best = (noisy / EVALUATION_EXAMPLES).max(axis=2)
        gmd = np.abs(best[:, :, None] - best[:, None, :]).mean(axis=(1, 2))
        return self.cells.with_columns(g=pl.Series(self.curves.mean(axis=1).max(axis=1)), r=pl.lit(None, pl.Float64),
                                       b=pl.Series(self.curves.max(axis=(1, 2))), sd=pl.lit(0.0), gmd=pl.Series(gmd),
                                       gmd_var=pl.lit(0.0), n=pl.lit(10**9, pl.Int64))

    def draw(self, rng: np.random.Generator, seeds: int) -> npt.NDArray[np.float64]:
        """One replay's seeds: cells x seeds x evaluations, each seed one of its cell's curves drawn at random (the
        bootstrap: the cell's five curves are its population) plus binomial evaluation noise."""
        cells, curves, _ = self.curves.shape
        chosen = rng.integers(0, curves, (cells, seeds))
        values = np.take_along_axis(self.curves, chosen[:, :, None], axis=1)
        noisy = rng.binomial(EVALUATION_EXAMPLES, np.clip(values, 0.0, 1.0)) / EVALUATION_EXAMPLES
        return np.asarray(noisy, dtype=float)

    def rows(self, values: npt.NDArray[np.float64], given: npt.NDArray[np.int64]) -> pl.LazyFrame:
        """The results rows of the first ``given[c]`` seeds of every cell ``c``."""
        given_mask = np.arange(values.shape[1])[None, :, None] < given[:, None, None]
        cell, seed, step = np.nonzero(np.broadcast_to(given_mask, values.shape))
        frame = self.cells.with_row_index("_cell")
        return pl.DataFrame({"_cell": cell.astype(np.uint32), "seed": seed, "step": self.steps[step],
                             METRIC: values[cell, seed, step]}).join(frame, on="_cell").with_columns(
            trial_key=pl.col("_cell").cast(pl.String), status=pl.lit("ok")).drop("_cell").lazy()


#: Seeds a cell of the truth has for ``worst_beats_best``: relabeling 10 equal seeds a side separates the sides as far
#: 1 time in C(20, 10) = 184,756 at one cell, never in a permutation test's 4,999 relabelings.
TRUE_SEEDS = 10


def study(findings: Sequence[Finding], world: World, budget: str = "fixed", seeds: int = 5) -> StudyRecord:
    """The record of a study of ``world``'s grid (architecture x its x x learning rate) with ``findings``."""
    axes = {c: tuple(sorted(world.cells.get_column(c).unique().to_list())) for c in world.keys}
    return StudyRecord(name="calibration", goal="known truth", tasks=("mode",), metric=METRIC,
                       scientific={"architecture": axes["architecture"], world.x: axes[world.x]},
                       nuisance={"learning_rate": axes["learning_rate"]}, findings=tuple(findings),
                       seeds=tuple(range(seeds)), budget=budget, plot=Plot(x=world.x))


def true_verdicts(meta: StudyRecord, world: World) -> list[Verdict]:
    """The verdicts on the truth (no seed noise: every bound decided exactly). A time-axis bound reads a cell's
    population mean curve (two seeds that agree exactly: an interval of width 0); ``worst_beats_best`` reads every
    seed at its cell's G (its truth the sign of the true lead, :mod:`analysis.calibration.time_findings`), with
    :data:`TRUE_SEEDS` seeds a cell (no relabeling of them separates as far by chance)."""
    truth = world.truth()
    if any(f.worst_beats_best for f in meta.findings):
        truth = truth.with_columns(seeds=pl.concat_list([pl.col("g")] * TRUE_SEEDS), n=pl.lit(TRUE_SEEDS, pl.Int64))
    evaluations = None
    if any(f.timed() for f in meta.findings):
        mean = np.repeat(world.curves.mean(axis=1, keepdims=True), 2, axis=1)
        evaluations = world.rows(mean, np.full(world.cells.height, 2)).collect()
    data = FindingData(cells={METRIC: truth}, panel="architecture", select_metric=METRIC, max_seeds=10**9,
                       evaluations=evaluations)
    return evaluate_findings(meta.replace(budget="fixed"), data)


#: The calibration's worlds: the release's cells as they are (the chosen-on file); the same with hidden splits; and a
#: file none of the constants was chosen on, with hidden splits. (name -> what it is)
WORLDS = {"release": "mode finding over d (Fig. 7), the release's cells as they are",
          "hidden": "the same cells, a cell whose seeds agree splitting at its neighbours' rate",
          "held_out": "mode finding over S (Fig. 16, no constant chosen on it), with hidden splits"}


@functools.cache
def world(name: str) -> World:
    """One of :data:`WORLDS` (built once per process)."""
    if name not in WORLDS:
        raise ValueError(f"invalid world {name!r}; allowed: {', '.join(WORLDS)}")
    plain = World.of_release(HELD_OUT if name == "held_out" else CHOSEN_ON)
    return plain if name == "release" else plain.with_hidden_splits(0)
