"""A finding's number with its interval: a statistic of G over the cells of a region, from the cells' intervals.

Every cell gets the interval of its G (:func:`analysis.stats.intervals.cell.g_interval`; a cell of one seed or none
spans the metric's range: it decides nothing). The statistics are monotone in the cells' G, so the cells' bounds give
the statistic's. Each end of an interval is a one-sided bound at its own error
(:class:`~analysis.stats.intervals.errors.Errors`, from the finding's share of its error budget), and an end that any
cell could make wrong shares that error among the cells, while an end that only one fixed cell can make wrong does
not:

* ``best`` (the largest G) - its lower end is the largest of the cells' lower ends, wrong if *any* cell's is, so
  each cell's lower end is taken at the error over the region's cells (Bonferroni); its upper end is the largest of
  the cells' upper ends, wrong only if the truly best cell's is, so each cell's upper end is taken at the full error
  (an intersection-union bound: no share over cells). ``worst`` the other way round; a loss's best is its lowest;
* ``share`` of cells with G >= ``level`` - the share whose lower end reaches the level to the share whose upper end
  does, both ends shared over the cells (the grid is enumerated, not sampled: the uncertainty is in the cells near
  the level);
* ``mean`` - the mean G plus or minus a t quantile times the standard error of the mean of the cells' G (one
  interval, not one per cell; degrees of freedom by Welch-Satterthwaite), cells of one seed or none at the ends of
  the range;
* ``spread`` - :mod:`analysis.stats.intervals.spread`.

A cell's interval spends its share of the error by its seed count (an adaptive budget), a mean's or a spread's by
the look. Which cells more seeds could move: :meth:`analysis.stats.intervals.estimate.Estimate.contention`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import polars as pl

from analysis.stats.intervals.cell import g_interval
from analysis.stats.intervals.errors import Errors
from analysis.stats.intervals.estimate import Estimate
from analysis.stats.intervals.spread import satterthwaite, spread
from analysis.stats.metric import lower_is_better, metric_range
from analysis.stats.noise import NoiseModel, quantile
from analysis.stats.table import Bools, CellTable, Column, Floats, rows


def estimate(cells: CellTable, statistic: str, level: float, metric: str, noise: NoiseModel, errors: Errors,
             max_seeds: int) -> Estimate:
    """The statistic over ``cells`` (annotated with their seed-noise prior) with its interval, each end at its error
    in ``errors`` (module docstring), and what every seed could make of it
    (:attr:`~analysis.stats.intervals.estimate.Estimate.projected`: every cell run at ``max_seeds`` with the spread
    it has)."""
    if cells.is_empty():
        return Estimate(None, *metric_range(metric))
    n = cells.values(Column.N, 0.0)
    every_seed = cells.with_values(Column.N, np.where(n >= 1, max_seeds, n))
    now, then = (_estimate(c, statistic, level, metric, noise, errors) for c in (cells, every_seed))

    def short() -> pl.DataFrame | None:  # built when a budget or a text asks (Estimate.short_cells)
        frame, projected = now.short_cells(), then.short_cells()
        if frame is None:
            return None
        if projected is not None and "low" in frame.columns:
            frame = frame.hstack([projected.get_column("low").alias("plow"),
                                  projected.get_column("high").alias("phigh")])
        return rows(frame, frame.get_column(Column.N) < max_seeds, drop=(Column.N,))

    not_run = int((n == 0).sum())
    return replace(now, short=short, not_run=not_run, projected=(then.low, then.high))


def _estimate(cells: CellTable, statistic: str, level: float, metric: str, noise: NoiseModel,
              errors: Errors) -> Estimate:
    """The estimate, its ``short`` every cell that more seeds could move (its keys, ``n`` and, where the statistic
    reads cells one by one, ``g`` and its bounds ``low`` / ``high``)."""
    n = cells.values(Column.N, 0.0)
    run = n > 0
    seeds = (int(n.min()), int(n.max()))
    keys = list(cells.keys)
    g = cells.values(Column.G, 0.0)
    se, df = noise.standard_errors(cells)
    frame = cells.frame
    if statistic == "spread":  # the cells in its region (or that may be) are the ones more seeds can move
        region = (frame.get_column(Column.N) < 2) | (frame.get_column(Column.G) >= level)
        return spread(cells, (se, df), level, metric, errors, seeds,
                      lambda: rows(_columns(frame, [*keys, Column.N]), region))
    if statistic == "mean":
        lift = cells.values(Column.LIFT, 0.0)
        centres = (g, g + lift) if lower_is_better(metric) else (g - lift, g)
        return _mean(g, centres, (se, df), n, metric, errors, seeds, lambda: _columns(frame, [*keys, Column.N]))
    m = len(n)
    largest = statistic == "share" or (statistic == "best") != lower_is_better(metric)
    union = (m if largest else 1, m if not largest or statistic == "share" else 1)  # ends any cell could make wrong
    low, high = g_interval(cells, (se, df), errors, metric, union)

    def short() -> pl.DataFrame:
        return _columns(frame, [*keys, Column.G, Column.N], pl.Series("low", low), pl.Series("high", high))

    if statistic == "share":
        value = float((g[run] >= level).mean()) if run.any() else None
        return Estimate(value, float((low >= level).mean()), float((high >= level).mean()), seeds, len(n),
                        short=short, reads="level", level=level)
    pick = np.max if largest else np.min
    value = float(pick(g[run])) if run.any() else None
    attains = seeds if value is None else _seeds_of(n, g, run, value)
    return Estimate(value, float(pick(low)), float(pick(high)), attains, len(n), short=short, reads="order",
                    largest=largest)


def plausible_best(cells: CellTable, metric: str, noise: NoiseModel, errors: Errors) -> CellTable:
    """The cells of ``cells`` (all run) that may be the truly best (a loss: lowest): those whose upper end reaches
    the best's lower end. The truly best is left out only if its own upper end or some cell's lower end is wrong:
    at most ``errors.low + errors.high`` (lower ends shared over the cells, as a best's)."""
    if cells.height <= 1:
        return cells
    e = _estimate(cells, "best", 0.0, metric, noise, errors)
    short = e.short_cells()
    assert short is not None
    low, high = short.get_column("low").to_numpy(), short.get_column("high").to_numpy()
    keep = low <= e.high if lower_is_better(metric) else high >= e.low
    return cells.replace(cells.frame.filter(pl.Series(keep)))


def _columns(frame: pl.DataFrame, names: list[str], *more: pl.Series) -> pl.DataFrame:
    """The columns ``names`` of ``frame`` and ``more``: a frame of its Series, not a query (built per estimate)."""
    return pl.DataFrame([*(frame.get_column(c) for c in names), *more])


def _seeds_of(n: Floats, g: Floats, run: Bools, value: float) -> tuple[int, int]:
    """The seeds of the cells that attain ``value``."""
    at = n[run & (g == value)]
    return (int(at.min()), int(at.max())) if at.size else (0, 0)


def _mean(g: Floats, centres: tuple[Floats, Floats], noise: tuple[Floats, Floats], n: Floats, metric: str,
          errors: Errors, seeds: tuple[int, int], short: Callable[[], pl.DataFrame]) -> Estimate:
    """The mean G of the cells (the value: of the cells run): a t interval of the mean of the cells with two seeds or
    more (each end around the cells' G less their lift where it may have inflated them), the others at the range's
    ends."""
    lo, hi = metric_range(metric)
    se, df = noise
    known, k = n >= 2, len(g)
    value = float(g[n > 0].mean()) if (n > 0).any() else None
    if not known.any():
        return Estimate(value, lo, hi, seeds, k, short=short)
    missing, dof = int((~known).sum()), satterthwaite(se[known] ** 2, df[known])
    error = math.sqrt(float((se[known] ** 2).sum()))
    low = (float(centres[0][known].sum()) - float(quantile(errors.low * errors.look, dof)) * error
           + missing * lo) / k
    high = (float(centres[1][known].sum()) + float(quantile(errors.high * errors.look, dof)) * error
            + missing * hi) / k
    return Estimate(value, max(low, lo), min(high, hi), seeds, k, short=short)

