"""The seed-noise model held to its word on real seeds: ``k`` of a cell's seeds give an interval; how often does it
miss the value of all the seeds, or of the other seeds? (bench/coverage.py, tests/test_interval_coverage.py)

For every subset of ``k`` of the seeds of per-seed rows (the authors' release: 5 seeds, so 10 subsets of 2, 10 of 3
and 5 of 4), every cell's interval is computed from those ``k`` seeds alone, by the same code as every verdict
(:mod:`analysis.stats.seed_noise`: the cell's G and its standard error), and held against:

* **all seeds** - G over every seed of the cell: the interval of G at ``k`` seeds is a statement about the value
  more seeds approach, and all the seeds are the nearest the data comes to it (all seeds share the ``k``, so a
  correct interval misses them less often than it states);
* **the other seeds** - G over the seeds left out, held against the prediction interval the same noise model gives
  for them (``G ± t sqrt(var (1 / k + 1 / (n - k)))``, its upper end raised by G's lift: the other seeds' G picks its
  best evaluation too): this one misses at the stated rate if the model is right.

Each interval is a verdict's: its lower end from G less its lift (:mod:`analysis.stats.finding_intervals`).

Two levels, as verdicts read intervals: **per cell**, each end at ``alpha / 2`` (a bound that reads one cell: the
upper end of a best); **per panel value**, every cell of the panel value's grid at once, each end at
``alpha / (2 cells)`` (Bonferroni: a best's lower end, a share), where one miss anywhere counts. A miss rate is
reported with the families or cells it counts; the seed subsets share seeds, so they are not independent draws.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import stats

from analysis.stats.finding_cells import VALUES, cell_table
from analysis.stats.seed_noise import NoiseModel
from analysis.stats.training_stats import training_stats
from search_spaces.record import StudyRecord


@dataclass(frozen=True)
class Misses:
    """Miss counts of one (metric, k): per cell at ``alpha``, per panel value (one miss anywhere of its cells)."""

    metric: str
    k: int
    cells: int  # cell x subset pairs
    cell_misses_all: int  # G of all seeds outside the interval (either end)
    cell_misses_rest: int  # G of the other seeds outside the prediction interval
    families: int  # panel value x subset pairs
    family_misses_all: int
    family_misses_rest: int

    def row(self) -> dict:
        """The counts with their rates."""
        return {"metric": self.metric, "k": self.k, "cells": self.cells, "families": self.families,
                "cell_all": self.cell_misses_all / self.cells, "cell_rest": self.cell_misses_rest / self.cells,
                "family_all": self.family_misses_all / self.families,
                "family_rest": self.family_misses_rest / self.families,
                "family_misses_all": self.family_misses_all, "family_misses_rest": self.family_misses_rest}


def holdout(meta: StudyRecord, rows: pl.LazyFrame, metrics: Sequence[str], ks: Sequence[int] = (2, 3, 4),
            alpha: float = 0.05, noise: type[NoiseModel] = NoiseModel) -> list[Misses]:
    """The misses of every metric at every ``k`` over every subset of ``k`` of the rows' seeds (module docstring).
    ``noise``: the model under test (a wrong one is the test's negative control)."""
    seeds = sorted(rows.select(pl.col("seed").unique()).collect().get_column("seed").to_list())
    fixed = meta.replace(budget="fixed", seeds=tuple(seeds))
    every = training_stats(rows, fixed)
    panel = every.axes.panel
    whole = {m: cell_table(every.finding_cells(), m) for m in metrics}
    out = []
    for k in ks:
        counts = {m: np.zeros(6, dtype=int) for m in metrics}
        for chosen in itertools.combinations(seeds, k):
            some = training_stats(rows.filter(pl.col("seed").is_in(list(chosen))), fixed).finding_cells()
            rest = training_stats(rows.filter(~pl.col("seed").is_in(list(chosen))), fixed).finding_cells()
            for m in metrics:
                counts[m] += _misses(cell_table(some, m), whole[m], cell_table(rest, m), panel, alpha, noise,
                                     len(seeds) - k)
        out += [Misses(m, k, *(int(x) for x in counts[m])) for m in metrics]
    return out


def _misses(mine: pl.DataFrame, whole: pl.DataFrame, rest: pl.DataFrame, panel: str, alpha: float,
            noise: type[NoiseModel], left: int) -> np.ndarray:
    """(cells, cell misses of all, of rest, families, family misses of all, of rest) of one subset."""
    keys = [c for c in mine.columns if c not in VALUES]
    joined = mine.join(whole.select(*keys, pl.col("g").alias("_all")), on=keys, how="inner", nulls_equal=True).join(
        rest.select(*keys, pl.col("g").alias("_rest")), on=keys, how="inner", nulls_equal=True)
    model = noise.fit(mine)
    se, df = model.standard_errors(model.annotate(joined))
    g, k = joined.get_column("g").to_numpy(), joined.get_column("n").to_numpy().astype(float)
    lift = joined.get_column("lift").fill_null(0.0).to_numpy()
    values = (joined.get_column("_all").to_numpy(), joined.get_column("_rest").to_numpy())
    halves = (se, se * np.sqrt(1.0 + k / left))  # the other seeds' mean has its own noise besides the k seeds'
    lifts = ((lift, 0 * lift), (lift, lift))  # (below, above): the other seeds' G picks its best evaluation too
    cells = joined.get_column(panel).to_frame().join(joined.group_by(panel).len(), on=panel, how="left") \
        .get_column("len").to_numpy()
    per_cell = [_outside(v, g, stats.t.ppf(1 - alpha / 2, df) * h, up) for v, h, up in zip(values, halves, lifts,
                                                                                           strict=True)]
    per_family = [_outside(v, g, stats.t.ppf(1 - alpha / (2 * cells), df) * h, up)
                  for v, h, up in zip(values, halves, lifts, strict=True)]
    family = joined.select(panel).with_columns(a=pl.Series(per_family[0]), r=pl.Series(per_family[1])) \
        .group_by(panel).agg(pl.col("a").any(), pl.col("r").any())
    return np.array([len(g), per_cell[0].sum(), per_cell[1].sum(), family.height, family.get_column("a").sum(),
                     family.get_column("r").sum()])


def _outside(value: np.ndarray, g: np.ndarray, half: np.ndarray, lift: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Whether ``value`` lies outside ``[g - lift[0] - half, g + lift[1] + half]`` (the interval of a verdict: its
    lower end from G less its lift; clipping to the range changes nothing, the values share it)."""
    return (value < g - lift[0] - half - 1e-12) | (value > g + lift[1] + half + 1e-12)


def finding_metrics(meta: StudyRecord, columns: Sequence[str]) -> list[str]:
    """The metrics the study's findings read (at its scale) that ``columns`` can give: what its intervals cover."""
    from search_spaces.finding import metric_columns

    wanted = dict.fromkeys(f.metric_of(meta.metric) for f in meta.findings if f.checked_at(meta.scale))
    return [m for m in wanted if all(c in columns for c in metric_columns(m))]


def pooled(found: Sequence[Misses], k: int) -> dict:
    """The counts of every metric at ``k`` seeds, summed: cells, families and their misses."""
    rows = [m for m in found if m.k == k]
    return {name: sum(getattr(m, name) for m in rows)
            for name in ("cells", "cell_misses_all", "cell_misses_rest", "families", "family_misses_all",
                         "family_misses_rest")}
