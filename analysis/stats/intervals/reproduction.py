"""A reproduction against the authors' seeds, cell by cell: does the interval of each cell's G from the reproduction's
seeds hold the authors' G over theirs?

A cell is one configuration (architecture, the swept size, learning rate); its G on either side is the paper's (the
best over training of its seeds' mean). The reproduction's interval is the one every verdict reads (the one interval
function, :func:`analysis.stats.intervals.cell.g_interval`: the seed-noise model fitted on the reproduction's cells,
G's inflated end less its lift), two-sided at ``confidence`` (each end one-sided at half the rest). A cell
"excludes" when the authors' G lies outside it. Were the reproduction a draw of the authors' runs, the interval would
miss the *true* G in at most 1 - ``confidence`` of the cells; the authors' G over five seeds is noisy too (and reads
high, a best of noisy evaluations), so a share somewhat above that says "the same", and a large share, or one
architecture's, says where the two differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from analysis.stats.intervals.cell import g_interval
from analysis.stats.intervals.errors import Errors
from analysis.stats.noise import NoiseModel
from analysis.stats.table import CellTable, Column, cell_table

#: significant digits a float configuration value (a learning rate) is matched on (the release prints 6 or fewer)
MATCH_DIGITS = 6


@dataclass(frozen=True)
class CellTest:
    """Per cell: the reproduction's G [interval] and seeds, the authors' G and seeds, whether it excludes theirs."""

    cells: pl.DataFrame  # keys, n, g, lo, hi, authors_n, authors_g, excludes
    panel: str

    def shares(self) -> pl.DataFrame:
        """Per panel value (architecture) and overall: cells compared, cells that exclude, their share."""
        tested = self.cells.filter(pl.col("n") >= 2)
        per = (tested.group_by(self.panel).agg(pl.len().alias("cells"), pl.col("excludes").sum().alias("exclude"))
               .sort(self.panel))
        total = pl.DataFrame({self.panel: ["all"], "cells": [tested.height],
                              "exclude": [int(tested.get_column("excludes").sum())]})
        both = pl.concat([per.with_columns(pl.col(self.panel).cast(pl.String)), total], how="vertical_relaxed")
        return both.with_columns((pl.col("exclude") / pl.col("cells")).alias("share"))


def _matchable(table: CellTable) -> pl.DataFrame:
    """The table's frame, its float keys rounded for matching across the two sides."""
    floats = [k for k in table.keys if table.frame.schema[k].is_float()]
    return table.frame.with_columns(pl.col(k).round_sig_figs(MATCH_DIGITS) for k in floats)


def cell_test(ours: Mapping[str, pl.DataFrame], theirs: Mapping[str, pl.DataFrame], metric: str, panel: str,
              confidence: float = 0.95) -> CellTest:
    """The cells both sides ran (module docstring): ``ours`` and ``theirs`` are a study's cells per metric
    (:meth:`analysis.stats.training_stats.TrainingStats.finding_cells`); a cell with one seed of ours has no interval
    (n = 1, left out of the shares).

    Raises:
        ValueError: a side has no column of ``metric``.
    """
    mine, other = cell_table(ours, metric), cell_table(theirs, metric)
    if mine is None or other is None:
        raise ValueError(f"the {'run' if mine is None else 'release'} has no column of {metric}")
    noise = NoiseModel.fit(mine)
    cells = noise.annotate(mine)
    tail = (1 - confidence) / 2
    low, high = g_interval(cells, noise.standard_errors(cells), Errors(tail, tail), metric)
    keys = [k for k in mine.keys if k in other.keys]
    run = _matchable(cells).select(*keys, pl.col(Column.N).alias("n"), pl.col(Column.G).alias("g"),
                                   lo=pl.Series(low), hi=pl.Series(high))
    authors = _matchable(other).select(*keys, pl.col(Column.N).alias("authors_n"),
                                       pl.col(Column.G).alias("authors_g"))
    both = run.join(authors.with_columns(pl.col(k).cast(run.schema[k]) for k in keys), on=keys, how="inner")
    outside = (pl.col("authors_g") < pl.col("lo")) | (pl.col("authors_g") > pl.col("hi"))
    return CellTest(both.with_columns(pl.when(pl.col("n") >= 2).then(outside).otherwise(False).alias("excludes"))
                    .sort(keys), panel)


def format_cell_test(test: CellTest, confidence: float) -> str:
    """The shares per architecture, then the cells that exclude (at most 20, largest gap first)."""
    lines = [f"cells whose {confidence:.0%} interval of G over this run's seeds excludes the authors' G over theirs:"]
    for row in test.shares().iter_rows(named=True):
        lines.append(f"  {row[test.panel]:>8}: {row['exclude']:>3} of {row['cells']:>3} cells "
                     f"({row['share']:.0%})" if row["cells"] else f"  {row[test.panel]:>8}: no cell with 2+ seeds")
    away = test.cells.filter(pl.col("excludes")).with_columns(
        (pl.col("g") - pl.col("authors_g")).abs().alias("gap")).sort("gap", descending=True)
    keys = [c for c in test.cells.columns if c not in ("n", "g", "lo", "hi", "authors_n", "authors_g", "excludes")]
    for row in away.head(20).iter_rows(named=True):
        cell = ", ".join(f"{k}={row[k]}" for k in keys)
        lines.append(f"    {cell}: {row['g']:.3f} [{row['lo']:.3f}, {row['hi']:.3f}] ({row['n']} seeds) vs "
                     f"{row['authors_g']:.3f} ({row['authors_n']} seeds)")
    if away.height > 20:
        lines.append(f"    ... and {away.height - 20} more")
    return "\n".join(lines)
