"""A reproduction against the authors' seeds, cell by cell: does each cell's interval from the reproduction's seeds
hold the authors' mean over their seeds?

A cell is one configuration (architecture, the swept size, learning rate). Its number per seed is the seed's best
value of the metric over training (the per-seed number behind a grid's G); the reproduction gives a mean with a
two-sided t interval over its seeds (at ``confidence``), the authors' release a mean over theirs (5 in the NAP
release). A cell "excludes" when the authors' mean lies outside the interval. If the reproduction drew from the very
distribution of the authors' runs, the interval would miss the *true* mean in 1 - ``confidence`` of the cells; it
misses the authors' 5-seed mean somewhat more often (that mean is noisy too), so a share near 5-15% says "the same",
and a large share, or one architecture's, says where the two differ.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
from scipy import stats

#: significant digits a learning rate is matched on (the release's rates are printed with 6 or fewer)
RATE_DIGITS = 6


def per_seed(lf: pl.LazyFrame, keys: list[str], metric: str) -> pl.DataFrame:
    """Each seed's best ``metric`` over training, per cell (``keys``), the learning rate rounded for matching."""
    return (lf.select(*keys, "seed", metric).drop_nulls(metric)
            .with_columns(pl.col("learning_rate").cast(pl.Float64).round_sig_figs(RATE_DIGITS))
            .group_by(*keys, "seed").agg(pl.col(metric).max().alias("best")).collect())


@dataclass(frozen=True)
class CellTest:
    """Per cell: the reproduction's mean [interval] over its seeds, the authors' mean, whether it excludes it."""

    cells: pl.DataFrame  # keys, n, mean, lo, hi, authors_n, authors_mean, excludes
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


def cell_test(ours: pl.LazyFrame, authors: pl.LazyFrame, keys: list[str], panel: str, metric: str,
              confidence: float = 0.95) -> CellTest:
    """The cells both sides ran (module docstring); a cell with one seed of ours has no interval (n = 1, left out of
    the shares)."""
    mine = per_seed(ours, keys, metric).group_by(keys).agg(
        pl.len().alias("n"), pl.col("best").mean().alias("mean"), pl.col("best").std().alias("sd"))
    theirs = per_seed(authors.with_columns(pl.col(c).cast(mine.schema[c]) for c in keys if c != "learning_rate"),
                      keys, metric).group_by(keys).agg(pl.len().alias("authors_n"),
                                                       pl.col("best").mean().alias("authors_mean"))
    both = mine.join(theirs, on=keys, how="inner")
    quantile = pl.Series([float(stats.t.ppf(0.5 + confidence / 2, n - 1)) if n >= 2 else float("nan")
                          for n in both.get_column("n").to_list()], dtype=pl.Float64)
    half = quantile * both.get_column("sd") / both.get_column("n").cast(pl.Float64).sqrt()
    both = both.with_columns((pl.col("mean") - half).alias("lo"), (pl.col("mean") + half).alias("hi"))
    outside = (pl.col("authors_mean") < pl.col("lo")) | (pl.col("authors_mean") > pl.col("hi"))
    both = both.with_columns(pl.when(pl.col("n") >= 2).then(outside).otherwise(False).alias("excludes")).sort(keys)
    return CellTest(both.drop("sd"), panel)


def format_cell_test(test: CellTest, confidence: float) -> str:
    """The shares per architecture, then the cells that exclude (at most 20, largest gap first)."""
    lines = [f"cells whose {confidence:.0%} interval over this run's seeds excludes the authors' mean over theirs:"]
    for row in test.shares().iter_rows(named=True):
        lines.append(f"  {row[test.panel]:>8}: {row['exclude']:>3} of {row['cells']:>3} cells "
                     f"({row['share']:.0%})" if row["cells"] else f"  {row[test.panel]:>8}: no cell with 2+ seeds")
    away = test.cells.filter(pl.col("excludes")).with_columns(
        (pl.col("mean") - pl.col("authors_mean")).abs().alias("gap")).sort("gap", descending=True)
    keys = [c for c in test.cells.columns if c not in ("n", "mean", "lo", "hi", "authors_n", "authors_mean",
                                                          "excludes")]
    for row in away.head(20).iter_rows(named=True):
        cell = ", ".join(f"{k}={row[k]}" for k in keys)
        lines.append(f"    {cell}: {row['mean']:.3f} [{row['lo']:.3f}, {row['hi']:.3f}] ({row['n']} seeds) vs "
                     f"{row['authors_mean']:.3f} ({row['authors_n']} seeds)")
    if away.height > 20:
        lines.append(f"    ... and {away.height - 20} more")
    return "\n".join(lines)
