"""The interval of a cell's G: the one interval function every verdict, the holdout on the authors' seeds, the
coverage bench and the calibration read (:func:`g_interval`).

G is the best evaluation's seed mean, so at few seeds it reads high (a loss: low): the end it may have inflated is
taken around G less its ``lift`` (how far G lies above the mean of the cell's best evaluations), the other around G.
Each end is ``centre -/+ t(df) x se`` at its one-sided error, ``t`` the Student quantile and ``(se, df)`` the seed-noise
model's standard error of G and its degrees of freedom (:meth:`analysis.stats.noise.NoiseModel.standard_errors`),
clipped to the metric's range; a cell of one seed or none spans the range (it decides nothing).
"""

from __future__ import annotations

import numpy as np

from analysis.stats.intervals.errors import Errors
from analysis.stats.metric import lower_is_better, metric_range
from analysis.stats.noise import quantile
from analysis.stats.table import CellTable, Column, Floats


def g_interval(cells: CellTable, noise: tuple[Floats, Floats], errors: Errors, metric: str,
               union: tuple[float | Floats, float | Floats] = (1, 1),
               others: int | None = None) -> tuple[Floats, Floats]:
    """Per cell of ``cells`` the lower and upper end of the interval of its G (module docstring).

    Args:
        noise: per cell the standard error of G and its degrees of freedom.
        errors: each end's one-sided error; a cell of ``n`` seeds spends ``errors.share(n)`` of it (an adaptive
            budget, :class:`~analysis.stats.intervals.errors.Errors`).
        union: per end the number of cells it is shared over (Bonferroni: an end that any of them could make wrong,
            e.g. a best's lower end over its region's cells); 1 for an end only one fixed cell can make wrong.
        others: a prediction interval for the G of ``others`` further seeds instead (its own noise beside these
            seeds', ``se x sqrt(1 + n / others)``, and its own lift at both ends: it picks its best evaluation too).
    """
    lo, hi = metric_range(metric)
    n, g, lift = (cells.values(c, 0.0) for c in (Column.N, Column.G, Column.LIFT))
    se, df = noise
    known = n >= 2  # one seed decides nothing
    if others is not None:
        se, centres = se * np.sqrt(1.0 + n / others), (g - lift, g + lift)
    else:  # G may read high (a loss: low) by its lift, never the other way
        centres = (g, g + lift) if lower_is_better(metric) else (g - lift, g)
    share = errors.share(n)
    with np.errstate(invalid="ignore"):
        below = np.where(known, quantile(errors.low * share / union[0], df) * se, np.inf)
        above = np.where(known, quantile(errors.high * share / union[1], df) * se, np.inf)
    return (np.where(known, np.clip(centres[0] - below, lo, hi), lo),
            np.where(known, np.clip(centres[1] + above, lo, hi), hi))
