"""The ``spread`` statistic with its interval: how far apart two seeds of a cell land, over the cells whose G reaches
a level.

The mean over cells of the mean absolute difference between two seeds' best values (Gini's mean difference: an
unbiased estimate from any two seeds; five seeds' best-minus-worst range is about twice it), over the cells whose G
reaches ``level`` (G, not "some seed": which seeds happen to be drawn must not decide which cells count), plus or
minus a t quantile times its standard error (each cell's variance its jackknife estimate; where the data gives none,
the bound ``4 sigma² / n``, ``sigma`` its seed noise); a cell counts from :data:`SPREAD_SEEDS` seeds, one of fewer
with 0 at the lower end and the range's width at the upper.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import polars as pl

from analysis.stats.intervals.errors import Errors
from analysis.stats.intervals.estimate import Estimate
from analysis.stats.metric import metric_range
from analysis.stats.noise import quantile
from analysis.stats.table import CellTable, Column, Floats

#: The seeds a cell needs before its seed differences count in a spread: with three, its difference has a jackknife
#: variance of its own, and which cells reach the level no longer rests on two seeds that happen to agree.
SPREAD_SEEDS = 3


def spread(cells: CellTable, noise: tuple[Floats, Floats], level: float, metric: str, errors: Errors,
           seeds: tuple[int, int], short: Callable[[], pl.DataFrame]) -> Estimate:
    """The spread over ``cells`` with its interval (module docstring); ``noise``: per cell the standard error of G
    and its degrees of freedom; ``short``: builds the frame of the cells more seeds could move."""
    lo, hi = metric_range(metric)
    width = hi - lo
    se, df = noise
    n, g, gmd = cells.values(Column.N, 0.0), cells.values(Column.G, -math.inf), cells.values(Column.GMD)
    known = (n >= SPREAD_SEEDS) & np.isfinite(gmd)
    unknown = n < SPREAD_SEEDS  # may be in the region or not, with any difference
    counted = known & (g >= level)
    k = int(counted.sum()) + int(unknown.sum())
    shown = (n >= 2) & np.isfinite(gmd) & (g >= level)  # the number on the data: every cell with a difference
    value = float(gmd[shown].mean()) if shown.any() else None
    if k == 0:
        return Estimate(value, lo, hi, seeds, len(n), short=short)
    sigma = np.where(np.isfinite(se), se * np.sqrt(np.maximum(n, 1.0)), width)
    jackknife = cells.values(Column.GMD_VAR)
    variance = np.where(np.isfinite(jackknife), jackknife, 4 * sigma**2 / np.maximum(n, 1.0))
    error = math.sqrt(float(variance[counted].sum()))
    dof = satterthwaite(variance[counted], np.maximum(n[counted] - 1, 1.0)) if counted.any() else 1.0
    total = float(gmd[counted].sum())
    low = (total - float(quantile(errors.low * errors.look, dof)) * error) / k
    high = (total + float(quantile(errors.high * errors.look, dof)) * error + unknown.sum() * width) / k
    return Estimate(value, max(low, 0.0), min(high, width), seeds, len(n), short=short)


def satterthwaite(variances: Floats, df: Floats) -> float:
    """The degrees of freedom of a sum of independent variance estimates (Welch-Satterthwaite), at least the fewest
    of its parts'."""
    top, bottom = float(variances.sum()) ** 2, float((variances**2 / df).sum())
    return max(top / bottom if bottom > 0 else float(df.min()), float(df.min()))
