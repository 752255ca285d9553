"""A learning curve's intervals: the seeds' mean per evaluation of one cell, each evaluation's interval from the one
seed-noise model and the one interval function, and the time-axis statistics read from them (when a curve first
reaches a level, its last value), which the time-axis finding kinds bound (:mod:`analysis.stats.kinds.time_axis`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import polars as pl

from analysis.stats.intervals.cell import g_interval
from analysis.stats.intervals.errors import Errors
from analysis.stats.intervals.estimate import Estimate
from analysis.stats.metric import lower_is_better, metric_range, per_row
from analysis.stats.noise import NoiseModel
from analysis.stats.table import Bools, CellTable, Column, Floats


@dataclass(frozen=True)
class Curve:
    """One cell's learning curve: a cell table whose cells are its evaluations (its one key: ``time``, ``epoch`` or
    ``step``), in time order, and the cell's prior seed noise in its grid (``grid``: variance and degrees of freedom;
    None: none), the floor of every evaluation's prior (:func:`with_grid_noise`)."""

    points: CellTable
    time: str
    grid: tuple[float, float] | None = None
    #: :func:`curve_bounds` per (metric, errors, union), read-only: every bound read on the curve shares them (not
    #: carried by ``dataclasses.replace``: a curve with another grid floor has other bounds)
    bounds: dict[tuple[str, Errors, bool], tuple[Floats, Floats]] = field(default_factory=dict, init=False,
                                                                         repr=False, compare=False)

    def is_empty(self) -> bool:
        """Whether the cell has not run yet (no evaluation)."""
        return self.points.is_empty()

    def times(self) -> Floats:
        """The evaluations' times."""
        return self.points.frame.get_column(self.time).cast(pl.Float64).to_numpy()

    @cached_property
    def noise(self) -> tuple[Floats, Floats]:
        """:func:`curve_noise`, fitted once per curve (every bound read on it shares the fit)."""
        return curve_noise(self)


def curve(rows: pl.DataFrame, metric: str, time: str) -> Curve:
    """One cell's learning curve from its rows: per value of ``time`` the seeds' mean of ``metric`` (``g``; a
    combination per row, a non-finite value its worst: 0 for an accuracy, :func:`analysis.stats.metric.per_row`),
    their standard deviation (``sd``) and count (``n``). :class:`analysis.stats.noise.NoiseModel` fits it as it fits
    a grid: an evaluation's neighbours are the evaluations before and after it, a jump of the curve between them a
    cliff."""
    points = (rows.select(time, per_row(metric).alias("_v")).group_by(time)
              .agg(pl.col("_v").mean().alias(Column.G), pl.col("_v").std().fill_null(0.0).alias(Column.SD),
                   pl.len().cast(pl.Int64).alias(Column.N))
              .sort(time))  # its lift: 0 (CellTable.of)
    return Curve(CellTable.of(points), time)


@dataclass(frozen=True)
class CellRows:
    """A study's rows of every evaluation, split by cell once (its ``keys``: the cell table's keys the rows have), so
    that each cell's curve reads its own rows without a join."""

    keys: list[str]
    parts: dict[tuple[Any, ...], pl.DataFrame]
    empty: pl.DataFrame

    @classmethod
    def of(cls, evaluations: pl.DataFrame, keys: Sequence[str]) -> CellRows:
        shared = [k for k in keys if k in evaluations.columns]
        if not shared:
            return cls(shared, {(): evaluations}, evaluations.head(0))
        # each part's key from its first row: partition_by's as_dict selects it with a query per part (a replay's
        # 480 cells: a quarter of a second)
        at = [evaluations.columns.index(k) for k in shared]
        parts = {tuple(part.row(0)[i] for i in at): part for part in evaluations.partition_by(shared)}
        return cls(shared, parts, evaluations.head(0))

    def rows(self, cell: CellTable) -> pl.DataFrame:
        """The rows of ``cell`` (one cell of a cell table): every seed's evaluations; empty while it has not run."""
        return self.parts.get(cell.key(columns=self.keys), self.empty)

    def curve(self, cell: CellTable, metric: str, time: str) -> Curve:
        """The learning curve of ``cell`` (one cell of a cell table); empty while it has not run."""
        return curve(self.rows(cell), metric, time)


def with_grid_noise(points: Curve, cell: CellTable, noise: NoiseModel) -> Curve:
    """A cell's :class:`Curve` with the cell's prior seed variance in its grid (``noise``, the G intervals' model) as
    the floor of every evaluation's prior. An evaluation's neighbours in time are the same seeds a little earlier or
    later: where a cell's seeds split (some learn, some do not), two that agree agree at every evaluation, and their
    curve alone would trust them (bench/calibration_time.py measured 21% wrong where 5% is stated); the grid's
    neighbours are other seeds. A cell of the table ``noise`` annotated (the verdicts' tables) carries its prior
    already: it is read, not joined again."""
    row = cell.frame.row(0, named=True)
    if row.get(Column.PRIOR_VAR) is None:
        row = noise.annotate(cell).frame.row(0, named=True)
    var, df = row.get(Column.PRIOR_VAR), row.get(Column.PRIOR_DF)
    if var is None or not noise.measured:
        return points
    return replace(points, grid=(float(var), float(df or 0.0)))


def curve_noise(points: Curve) -> tuple[Floats, Floats]:
    """Per evaluation of a curve the standard error of its seed mean and its degrees of freedom, from the one
    seed-noise model fitted to the curve, its prior at least the cell's in the grid where the curve carries it
    (:func:`with_grid_noise`)."""
    noise = NoiseModel.fit(points.points)
    annotated = noise.annotate(points.points)
    if points.grid is not None:  # the cell's seed noise in the grid as a floor (:func:`with_grid_noise`)
        var, df = points.grid
        annotated = annotated.replace(annotated.frame.with_columns(
            prior_var=pl.max_horizontal(pl.col(Column.PRIOR_VAR).fill_null(0.0), pl.lit(var)),
            prior_df=pl.min_horizontal(pl.col(Column.PRIOR_DF).fill_null(0.0), pl.lit(df))))
    return noise.standard_errors(annotated)


def curve_bounds(points: Curve, metric: str, errors: Errors, union: bool) -> tuple[Floats, Floats]:
    """Per evaluation of a curve the lower and upper end of its seed mean's interval (the one interval function,
    :func:`analysis.stats.intervals.cell.g_interval`), each at its end's error, shared over the evaluations when
    ``union`` (an end that any evaluation could make wrong: which evaluation is the first to reach a level is read
    from the data), from the curve's standard errors (:attr:`Curve.noise`); an evaluation of one seed spans the
    metric's range."""
    key = (metric, errors, union)
    if key not in points.bounds:
        m = points.points.height if union else 1
        ends = g_interval(points.points, points.noise, errors, metric, (m, m))
        for end in ends:
            end.setflags(write=False)
        points.bounds[key] = ends
    return points.bounds[key]


def first_reached(points: Curve, level: float, metric: str, errors: Errors) -> Estimate:
    """The first evaluation (its time) at which a curve reaches ``level`` (a loss: falls to it), with its interval:
    from the first evaluation whose interval reaches the level at all (the truly first one's upper end is wrong only
    if that one evaluation's is: the end's whole error) to the first whose whole interval has (wrong if any
    evaluation's lower end is: the error shared over the evaluations, as a best's lower end over cells); ``inf``
    where none does. Its value: the first evaluation whose seed mean reaches it (``inf``: none)."""
    if points.is_empty():
        return Estimate(None, 0.0, math.inf)
    times = points.times()
    n, g = points.points.values(Column.N, 0.0), points.points.values(Column.G, 0.0)
    sure_low, sure_high = curve_bounds(points, metric, errors, union=True)  # one noise fit for both (Curve.noise)
    maybe_low, maybe_high = curve_bounds(points, metric, errors, union=False)
    if lower_is_better(metric):  # a loss reaches a level by falling to it: the ends swap
        reached, surely, maybe = g <= level, sure_high <= level, maybe_low <= level
    else:
        reached, surely, maybe = g >= level, sure_low >= level, maybe_high >= level

    def first(mask: Bools) -> float:
        return float(times[mask].min()) if mask.any() else math.inf

    seeds = (int(n.min()), int(n.max()))
    return Estimate(first(reached & (n >= 1)), first(maybe), first(surely), seeds, cells=1)


def last_value(points: Curve, metric: str, errors: Errors) -> Estimate:
    """A curve's seed mean at its last evaluation with its interval (one fixed evaluation: each end at its whole
    error)."""
    if points.is_empty():
        return Estimate(None, *metric_range(metric))
    low, high = curve_bounds(points, metric, errors, union=False)
    n = int(points.points.values(Column.N, 0.0)[-1])
    g = float(points.points.values(Column.G, 0.0)[-1])
    return Estimate(g, float(low[-1]), float(high[-1]), (n, n), cells=1)
