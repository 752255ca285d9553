"""A learning curve's intervals: the seeds' mean per evaluation of one cell, each evaluation's interval from the one
seed-noise model, and the time-axis statistics read from them (when a curve first reaches a level, its last value),
which :mod:`analysis.stats.finding_time` bounds."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from analysis.stats.finding_cells import floats, lower_is_better, metric_range
from analysis.stats.finding_intervals import Errors, Estimate, interval_ends
from analysis.stats.seed_noise import NoiseModel


def curve(rows: pl.DataFrame, metric: str, time: str) -> pl.DataFrame:
    """One cell's learning curve as a cell table whose cells are its evaluations: per value of ``time`` (``epoch``
    or ``step``) the seeds' mean of ``metric`` (``g``; a combination per row, a non-finite value its worst: 0 for an
    accuracy, :func:`analysis.stats.finding_cells.per_row`), their standard deviation (``sd``) and count (``n``),
    in time order. :class:`analysis.stats.seed_noise.NoiseModel` fits it as it fits a grid: an evaluation's
    neighbours are the evaluations before and after it, a jump of the curve between them a cliff."""
    from analysis.stats.finding_cells import per_row

    return (rows.select(time, per_row(metric).alias("_v")).group_by(time)
            .agg(pl.col("_v").mean().alias("g"), pl.col("_v").std().fill_null(0.0).alias("sd"),
                 pl.len().cast(pl.Int64).alias("n"))
            .with_columns(lift=pl.lit(0.0)).sort(time))


def with_grid_noise(points: pl.DataFrame, cell: pl.DataFrame, noise: NoiseModel) -> pl.DataFrame:
    """A cell's :func:`curve` with the cell's prior seed variance in its grid (``noise``, the G intervals' model) as
    the floor of every evaluation's prior. An evaluation's neighbours in time are the same seeds a little earlier or
    later: where a cell's seeds split (some learn, some do not), two that agree agree at every evaluation, and their
    curve alone would trust them (bench/calibration_time.py measured 21% wrong where 5% is stated); the grid's
    neighbours are other seeds."""
    row = noise.annotate(cell).row(0, named=True)
    var, df = row.get("prior_var"), row.get("prior_df")
    if var is None or not noise.measured:
        return points
    return points.with_columns(grid_var=pl.lit(float(var)), grid_df=pl.lit(float(df or 0.0)))


def curve_noise(points: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per evaluation of a :func:`curve` the standard error of its seed mean and its degrees of freedom, from the one
    seed-noise model (:class:`analysis.stats.seed_noise.NoiseModel`) fitted to the curve, its prior at least the
    cell's in the grid where the curve carries it (:func:`with_grid_noise`)."""
    noise = NoiseModel.fit(points.drop("grid_var", "grid_df", strict=False))
    annotated = noise.annotate(points)
    if "grid_var" in points.columns:  # the cell's seed noise in the grid as a floor (:func:`with_grid_noise`)
        annotated = annotated.with_columns(
            prior_var=pl.max_horizontal(pl.col("prior_var").fill_null(0.0), pl.col("grid_var")),
            prior_df=pl.min_horizontal(pl.col("prior_df").fill_null(0.0), pl.col("grid_df")))
    return noise.standard_errors(annotated)


def curve_bounds(points: pl.DataFrame, metric: str, errors: Errors, union: bool,
                 noise: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per evaluation of a :func:`curve` the lower and upper end of its seed mean's interval, each at its end's error
    (an adaptive budget: the share its seed count spends), shared over the evaluations when ``union`` (an end that
    any evaluation could make wrong: which evaluation is the first to reach a level is read from the data), from the
    curve's standard errors (``noise``: :func:`curve_noise`'s, computed here when not given); an evaluation of one
    seed spans the metric's range."""
    se, df = curve_noise(points) if noise is None else noise
    n, g = floats(points, "n", 0.0), floats(points, "g", 0.0)
    share, m, known, span = errors.share(n), len(n), n >= 2, metric_range(metric)
    return (interval_ends(g, se, df, known, errors, share, m, "low", union, span),
            interval_ends(g, se, df, known, errors, share, m, "high", union, span))


def first_reached(points: pl.DataFrame, time: str, level: float, metric: str, errors: Errors) -> Estimate:
    """The first evaluation (its ``time``) at which a :func:`curve` reaches ``level`` (a loss: falls to it), with its
    interval: from the first evaluation whose interval reaches the level at all (the truly first one's upper end is
    wrong only if that one evaluation's is: the end's whole error) to the first whose whole interval has (wrong if
    any evaluation's lower end is: the error shared over the evaluations, as a best's lower end over cells); ``inf``
    where none does. Its value: the first evaluation whose seed mean reaches it (``inf``: none)."""
    times = floats(points, time, math.inf)
    n, g = floats(points, "n", 0.0), floats(points, "g", 0.0)
    if points.is_empty():
        return Estimate(None, 0.0, math.inf)
    noise = curve_noise(points)  # one fit for both kinds of end
    sure_low, sure_high = curve_bounds(points, metric, errors, union=True, noise=noise)
    maybe_low, maybe_high = curve_bounds(points, metric, errors, union=False, noise=noise)
    if lower_is_better(metric):  # a loss reaches a level by falling to it: the ends swap
        reached, surely, maybe = g <= level, sure_high <= level, maybe_low <= level
    else:
        reached, surely, maybe = g >= level, sure_low >= level, maybe_high >= level

    def first(mask: np.ndarray) -> float:
        return float(times[mask].min()) if mask.any() else math.inf

    seeds = (int(n.min()), int(n.max()))
    return Estimate(first(reached & (n >= 1)), first(maybe), first(surely), seeds, cells=1)


def last_value(points: pl.DataFrame, metric: str, errors: Errors) -> Estimate:
    """A :func:`curve`'s seed mean at its last evaluation with its interval (one fixed evaluation: each end at its
    whole error)."""
    if points.is_empty():
        return Estimate(None, *metric_range(metric))
    low, high = curve_bounds(points, metric, errors, union=False)
    n = int(floats(points, "n", 0.0)[-1])
    return Estimate(float(floats(points, "g", 0.0)[-1]), float(low[-1]), float(high[-1]), (n, n), cells=1)
