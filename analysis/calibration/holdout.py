"""The seed-noise model held to its word on real seeds: ``k`` of a cell's seeds give an interval; how often does it
miss the value of all the seeds, or of the other seeds? (bench/coverage.py, tests/test_interval_coverage.py)

For every subset of ``k`` of the seeds of per-seed rows (the authors' release: 5 seeds, so 10 subsets of 2, 10 of 3
and 5 of 4), every cell's interval is computed from those ``k`` seeds alone, by the one interval function every
verdict reads (:func:`analysis.stats.intervals.cell.g_interval`, from :mod:`analysis.stats.noise`'s standard error of
the cell's G), and held against:

* **all seeds** - G over every seed of the cell: the interval of G at ``k`` seeds is a statement about the value
  more seeds approach, and all the seeds are the nearest the data comes to it (all seeds share the ``k``, so a
  correct interval misses them less often than it states);
* **the other seeds** - G over the seeds left out, held against the prediction interval the same noise model gives
  for them (``G ± t sqrt(var (1 / k + 1 / (n - k)))``, its upper end raised by G's lift: the other seeds' G picks its
  best evaluation too): this one misses at the stated rate if the model is right.

Per cell, the misses are also counted within two strata where the noise model works hardest, read off all the seeds:
**split** cells (their seeds' spread at the best evaluations above :data:`SPLIT_SD`: some learn, some do not) and
**cliff** cells (not split, but G jumps by :data:`CLIFF` or more to a grid neighbour: where a cell's next seeds may
land on the other side). A model whose prior were too small, trusted too far, or blind to cliffs misses more there
than it states, while the pooled rate can hide it among the many easy cells.

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

from analysis.stats.intervals.cell import g_interval
from analysis.stats.intervals.errors import Errors
from analysis.stats.noise import NoiseModel
from analysis.stats.table import CellTable, Column, Floats, cell_table
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
    #: per stratum (``split``, ``cliff``): its cell x subset pairs, and their misses of all seeds and of the others
    strata: tuple[tuple[int, int, int], tuple[int, int, int]] = ((0, 0, 0), (0, 0, 0))

    def stratum(self, name: str) -> tuple[int, int, int]:
        """(cells, misses of all seeds, of the other seeds) of stratum ``name`` (``split`` or ``cliff``)."""
        return self.strata[("split", "cliff").index(name)]

    def row(self) -> dict[str, str | int | float]:
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
    every = training_stats(rows, fixed, report=False)
    panel = every.axes.panel
    whole = {m: _table(every.finding_cells(), m) for m in metrics}
    out = []
    strata = {m: _strata(whole[m]) for m in metrics}
    for k in ks:
        counts = {m: np.zeros(12, dtype=int) for m in metrics}
        for chosen in itertools.combinations(seeds, k):
            some = training_stats(rows.filter(pl.col("seed").is_in(list(chosen))), fixed, report=False).finding_cells()
            rest = training_stats(rows.filter(~pl.col("seed").is_in(list(chosen))), fixed, report=False).finding_cells()
            for m in metrics:
                counts[m] += _misses(_table(some, m), (whole[m], strata[m]), _table(rest, m), m, panel, alpha,
                                     noise, len(seeds) - k).astype(int)
        for m in metrics:
            c = [int(x) for x in counts[m]]
            out.append(Misses(m, k, c[0], c[1], c[2], c[3], c[4], c[5], ((c[6], c[7], c[8]), (c[9], c[10], c[11]))))
    return out


def _misses(mine: CellTable, whole: tuple[CellTable, pl.DataFrame], rest: CellTable, metric: str, panel: str,
            alpha: float, noise: type[NoiseModel], left: int) -> Floats:
    """(cells, cell misses of all, of rest, families, family misses of all, of rest, then per stratum its cells and
    their misses of all and of rest) of one subset: each interval the one a verdict reads
    (:func:`analysis.stats.intervals.cell.g_interval`), the other seeds' a prediction interval."""
    keys = list(mine.keys)
    table, strata = whole
    joined = (mine.frame.join(table.frame.select(*keys, pl.col(Column.G).alias("_all")), on=keys, how="inner",
                              nulls_equal=True)
              .join(rest.frame.select(*keys, pl.col(Column.G).alias("_rest")), on=keys, how="inner", nulls_equal=True)
              .join(strata, on=keys, how="left", nulls_equal=True))
    model = noise.fit(mine)
    cells = model.annotate(mine.replace(joined))
    se = model.standard_errors(cells)
    values = (joined.get_column("_all").to_numpy(), joined.get_column("_rest").to_numpy())
    panel_cells = joined.get_column(panel).to_frame().join(joined.group_by(panel).len(), on=panel, how="left") \
        .get_column("len").to_numpy().astype(float)
    each_end = Errors(alpha / 2, alpha / 2)
    outside = []
    for union in (1.0, panel_cells):  # per cell; per panel value, every cell of it at once (Bonferroni)
        for value, others in zip(values, (None, left), strict=True):
            low, high = g_interval(cells, se, each_end, metric, (union, union), others=others)
            outside.append((value < low - 1e-12) | (value > high + 1e-12))
    family = joined.select(panel).with_columns(a=pl.Series(outside[2]), r=pl.Series(outside[3])) \
        .group_by(panel).agg(pl.col("a").any(), pl.col("r").any())
    split, cliff = (joined.get_column(c).fill_null(False).to_numpy() for c in ("_split", "_cliff"))
    return np.array([joined.height, outside[0].sum(), outside[1].sum(), family.height, family.get_column("a").sum(),
                     family.get_column("r").sum(), split.sum(), (outside[0] & split).sum(), (outside[1] & split).sum(),
                     cliff.sum(), (outside[0] & cliff).sum(), (outside[1] & cliff).sum()], dtype=float)


#: A cell whose seeds' spread at its best evaluations (all seeds) exceeds this splits: some learn, some do not.
SPLIT_SD = 0.05
#: A cell not split whose G (all seeds) differs by this much or more from a grid neighbour's sits at a cliff.
CLIFF = 0.2


def _strata(whole: CellTable) -> pl.DataFrame:
    """Per cell of ``whole`` (all seeds): its keys, ``_split`` and ``_cliff`` (module docstring). A cell's neighbours
    share its categorical keys and lie at most one rank away along each numeric one."""
    frame, keys = whole.frame, list(whole.keys)
    numeric = [c for c in keys if frame.schema[c].is_numeric()]
    ranked = frame.with_columns(pl.col(c).rank("dense").cast(pl.Int64).alias(f"_r{c}") for c in numeric)
    position = [*(c for c in keys if c not in numeric), *(f"_r{c}" for c in numeric)]
    other = ranked.select(*position, pl.col(Column.G).alias("_gj"))
    jumps = [ranked.join(other.with_columns(pl.col(f"_r{c}") - o for c, o in zip(numeric, offset, strict=True)),
                         on=position, how="inner", nulls_equal=True)
             for offset in itertools.product((-1, 0, 1), repeat=len(numeric)) if any(offset)]
    jump = pl.concat(jumps).group_by(keys).agg((pl.col("_gj") - pl.col(Column.G)).abs().max().alias("_jump"))
    split = pl.col(Column.SD).fill_null(0.0) > SPLIT_SD
    return (frame.join(jump, on=keys, how="left", nulls_equal=True)
            .select(*keys, split.alias("_split"), (~split & (pl.col("_jump").fill_null(0.0) >= CLIFF)).alias("_cliff")))


def _table(cells: dict[str, pl.DataFrame], metric: str) -> CellTable:
    table = cell_table(cells, metric)
    if table is None:
        raise ValueError(f"the rows have no column of {metric}")
    return table


def finding_metrics(meta: StudyRecord, columns: Sequence[str]) -> list[str]:
    """The metrics the study's findings read (at its scale) that ``columns`` can give: what its intervals cover."""
    from search_spaces.finding import metric_columns

    wanted = dict.fromkeys(f.metric_of(meta.metric) for f in meta.findings if f.checked_at(meta.scale))
    return [m for m in wanted if all(c in columns for c in metric_columns(m))]


def pooled(found: Sequence[Misses], k: int) -> dict[str, int]:
    """The counts of every metric at ``k`` seeds, summed: cells, families and their misses."""
    rows = [m for m in found if m.k == k]
    return {name: sum(getattr(m, name) for m in rows)
            for name in ("cells", "cell_misses_all", "cell_misses_rest", "families", "family_misses_all",
                         "family_misses_rest")}
