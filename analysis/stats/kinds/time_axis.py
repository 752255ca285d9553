"""What the kinds on the time axis share: the learning curves a bound reads, how several curves make one estimate, and
how a time is written.

A time-axis bound reads the learning curve of its panel value's best cell in the finding's ``where`` (``cell="any"``:
each cell, combined by :mod:`analysis.stats.kinds.any_cell`): per evaluation the seeds' mean of the metric, with the
interval the one seed-noise model gives it (:mod:`analysis.stats.intervals.curves`: an evaluation's neighbours are
the evaluations before and after it). The cell with the best *observed* G is not known to be the best: every cell
that may be is read (:func:`best_curves`), and a bound holds only if it holds on every such curve, fails only if it
fails on every one. Each end of a time interval is an end of a seed mean's interval read at the finding's error share,
so the finding's confidence is the study's as for every other bound; a loss reaches a level by falling to it. Further
seeds for a time-axis bound are not asked for by an adaptive budget (no contention).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import polars as pl

from analysis.stats.intervals.curves import CellRows, Curve, curve, with_grid_noise
from analysis.stats.intervals.errors import Errors
from analysis.stats.intervals.estimate import Estimate
from analysis.stats.intervals.statistics import plausible_best
from analysis.stats.kinds.base import Reading, State, check_state
from analysis.stats.kinds.text import percent_text
from analysis.stats.metric import lower_is_better
from analysis.stats.table import CellTable, Column
from search_spaces.axes import show_value

#: What a time-axis bound reads for one panel value: the learning curves of the cells it may be read on (None: no
#: cell at all; an empty curve: a cell not run yet), and the error each curve's intervals are read at.
Curves = tuple[list[Curve] | None, Errors]
#: ``curves_of(panel value, region, the side's error)``: its :data:`Curves`
CurvesOf = Callable[[str, Mapping[str, Any], Errors], Curves]


def best_curves(cells: CellTable, reading: Reading, errors: Errors) -> Curves:
    """The learning curves of the cells of ``cells`` that may have the truly best G (a loss: the lowest) - the cell
    with the best *observed* G is not known to be it: cells within seed noise of it may reach a level much later
    (bench/calibration_time.py: read as if known, 11-18% wrong where 5% is stated) - each with the cell's seed noise
    in the grid as its floor (:func:`analysis.stats.intervals.curves.with_grid_noise`), the observed best first.
    The truly best is left out at most half the side's error
    (:func:`analysis.stats.intervals.statistics.plausible_best` at a quarter of each end's), and the curves are read
    at the other half. Empty while a cell has not run yet (it may be the best), None when there is no cell at all."""
    if cells.is_empty():
        return None, errors
    time, metric = reading.finding.time, reading.metric
    run = cells.run()
    if run.height < cells.height:
        assert reading.evaluations is not None
        return [curve(reading.evaluations.head(0), metric, time)], errors
    plausible = plausible_best(run, metric, reading.noise, errors.scaled(0.25))
    plausible = plausible.replace(plausible.frame.sort(Column.G, descending=not lower_is_better(metric)))
    return [curve_of(plausible.cell(i), reading) for i in range(plausible.height)], errors.halved()


def rows_by_cell(reading: Reading) -> CellRows:
    """The study's evaluations split by cell, once per reading (``reading.memo``)."""
    assert reading.evaluations is not None
    if ("rows by cell",) not in reading.memo:
        reading.memo[("rows by cell",)] = CellRows.of(reading.evaluations, reading.table.keys)
    rows: CellRows = reading.memo[("rows by cell",)]
    return rows


def rows_of(cell: CellTable, reading: Reading) -> pl.DataFrame:
    """The evaluations of one cell, every seed's (empty: not run yet)."""
    return rows_by_cell(reading).rows(cell)


def curve_of(cell: CellTable, reading: Reading) -> Curve:
    """The learning curve of one cell from the study's evaluations, its floor the cell's seed noise in the grid; read
    once per cell and time axis, shared by every finding of the metric (``reading.memo``: a curve's noise is fitted
    once, :attr:`~analysis.stats.intervals.curves.Curve.noise`)."""
    time = reading.finding.time
    key = ("curve", time, cell.key(columns=reading.table.keys))
    if key not in reading.memo:
        points = rows_by_cell(reading).curve(cell, reading.metric, time)
        reading.memo[key] = with_grid_noise(points, cell, reading.noise)
    found: Curve = reading.memo[key]
    return found


def cell_words(cell: CellTable, panel: str) -> str:
    """``d_model 8, learning_rate 0.0002187``: one cell's axis values other than the panel's, in words."""
    others = [k for k in cell.keys if k != panel]
    return ", ".join(f"{k} {show_value(v)}" for k, v in zip(others, cell.key(columns=others), strict=True)
                     if v is not None)


def when(t: float, time: str) -> str:
    """``epoch 150`` (``never`` for no time)."""
    if not math.isfinite(t):
        return "never"
    return f"{time} {int(t) if float(t).is_integer() else t:g}"


def seeds_text(e: Estimate) -> str:
    """The seeds behind an estimate, and how many cells it was read on where more than one may be the best."""
    return e.seeds_text() + (f"; {e.cells} cells that may be the best" if e.cells > 1 else "")


def span(e: Estimate, time: str) -> str:
    """``epoch 150 [epoch 100, never] (5 seeds)``: a time with its interval."""
    return f"{when(e.value if e.value is not None else math.inf, time)} [{when(e.low, time)}, " \
           f"{when(e.high, time)}] ({seeds_text(e)})"


def judged(curves: list[Curve] | None, holds: bool, fails: bool) -> State:
    """A bound's state: no cell at all fails, cells not run yet leave it open."""
    if curves is None:
        return State.FAILS
    return State.UNDECIDED if any(c.is_empty() for c in curves) else check_state(holds, fails)


def read(curves: list[Curve] | None, statistic: Callable[[Curve], Estimate]) -> Estimate:
    """``statistic`` of every curve as one estimate: the first curve's value (the observed best cell's), the hull
    of their intervals (a bound holds on all of them or fails on all of them)."""
    found = [statistic(c) for c in (curves or [Curve(CellTable.of(pl.DataFrame(schema={"_t": pl.Float64})), "_t")])]
    first = found[0]
    if len(found) == 1:
        return first
    return replace(first, low=min(e.low for e in found), high=max(e.high for e in found), cells=len(found),
                   seeds=(min(e.seeds[0] for e in found), max(e.seeds[1] for e in found)))


def reaching(reading: Reading) -> str:
    """``first reaches 90.0%`` (a loss: ``first falls to``)."""
    loss = lower_is_better(reading.metric)
    return f"first {'falls to' if loss else 'reaches'} {percent_text(reading.finding.level, reading.percent)}"
