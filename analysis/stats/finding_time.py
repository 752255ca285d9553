"""A finding's bounds on the time axis: when a panel value's learning curve reaches a level, whether it still holds
it at the end, whether it loses it again, and which of two reaches it first.

Each reads the learning curve of its panel value's best cell in the finding's ``where`` (the cell with the best G, as
``statistic`` ``best`` picks it; ``cell="any"``: each cell, combined by :mod:`analysis.stats.finding_any_cell`): per
evaluation the seeds' mean of the metric, with the interval the one seed-noise model gives it
(:func:`analysis.stats.curve_intervals.curve`, :func:`~analysis.stats.curve_intervals.curve_bounds`: an
evaluation's neighbours are the evaluations before and after it). From those intervals:

* the **first evaluation that reaches** ``level`` has an interval of times
  (:func:`analysis.stats.curve_intervals.first_reached`): from the first evaluation whose interval reaches the level
  at all to the first whose whole interval does (``never`` where none does);
* ``reached_by`` E **holds** when the whole interval of the first time is at or before E and **fails** when it lies
  wholly after it;
* ``still_holds`` reads the last evaluation (one fixed evaluation: its own interval): holds when its whole interval is
  at ``level`` or past it, fails when wholly short of it;
* ``learned_then_unlearned`` (a drop d) holds when the level is surely reached at some evaluation and the last
  evaluation's whole interval lies d or more short of it, fails when no evaluation's interval reaches the level
  (never learned) or the last evaluation's whole interval lies less than d short of it (not unlearned): two ends;
* ``faster_than`` holds when A's latest plausible first time is more than ``time_margin`` earlier than B's earliest,
  fails when A's earliest is at most ``time_margin`` earlier than B's latest (margin 0: no earlier); each side at half
  the end's error, as a difference's two sides.

Else undecided. Each end of a time interval is an end of a seed mean's interval read at the finding's error share
(``error_budget``), so the finding's confidence is the study's as for every other bound; a loss reaches a level by
falling to it. Further seeds for a time-axis bound are not asked for by an adaptive budget (its cells are not named by
:meth:`analysis.stats.findings.Verdict.contention`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import polars as pl

from analysis.stats.curve_intervals import curve, first_reached, last_value, with_grid_noise
from analysis.stats.finding_cells import lower_is_better
from analysis.stats.finding_check import Check, check_state
from analysis.stats.finding_intervals import Errors, Estimate, plausible_best
from analysis.stats.seed_noise import NoiseModel
from analysis.stats.verdict_text import percent_text, point_text, span_text
from search_spaces.finding import Finding


def time_ends(finding: Finding) -> int:
    """The interval ends that can fail the finding's time-axis bounds (learned then unlearned: two, the others
    one each)."""
    return (len(finding.reached_by) + len(finding.still_holds) + 2 * len(finding.learned_then_unlearned)
            + sum(len(bs) for bs in finding.faster_than.values()))


#: What a time-axis bound reads for one panel value: the learning curves of the cells it may be read on (None: no
#: cell at all; an empty curve: a cell not run yet), and the error each curve's intervals are read at.
Curves = tuple[list[pl.DataFrame] | None, Errors]
#: ``curves_of(panel value, region, the side's error)``: its :data:`Curves`
CurvesOf = Callable[[str, Mapping[str, Any], Errors], Curves]


def best_curves(cells: pl.DataFrame, evaluations: pl.DataFrame, keys: Sequence[str], metric: str, time: str,
                noise: NoiseModel, errors: Errors) -> Curves:
    """The learning curves of the cells of ``cells`` that may have the truly best G (a loss: the lowest) - the cell
    with the best *observed* G is not known to be it: cells within seed noise of it may reach a level much later
    (bench/calibration_time.py: read as if known, 11-18% wrong where 5% is stated) - each with the cell's seed noise
    in the grid as its floor (:func:`analysis.stats.curve_intervals.with_grid_noise`), the observed best first.
    The truly best is left out at most half the side's error (:func:`analysis.stats.finding_intervals.plausible_best`
    at a quarter of each end's), and the curves are read at the other half; a bound holds only if it holds on every
    such curve, fails only if it fails on every one (their intervals' hull). Empty while a cell has not run yet (it
    may be the best), None when there is no cell at all."""
    if cells.is_empty():
        return None, errors
    run = cells.filter(pl.col("n") >= 1)
    if run.height < cells.height:
        return [curve(evaluations.head(0), metric, time)], errors
    quarter = replace(errors, low=errors.low / 4, high=errors.high / 4)
    plausible = plausible_best(run, metric, noise, quarter).sort("g", descending=not lower_is_better(metric))
    return [with_grid_noise(cell_curve(plausible.slice(i, 1), evaluations, keys, metric, time),
                            plausible.slice(i, 1), noise) for i in range(plausible.height)], errors.halved()


def cell_curve(cell: pl.DataFrame, evaluations: pl.DataFrame, keys: Sequence[str], metric: str,
               time: str) -> pl.DataFrame:
    """The learning curve (:func:`analysis.stats.curve_intervals.curve`) of ``cell`` (one row of a cell table)
    from its rows in ``evaluations`` (matched on ``keys``); empty while it has not run."""
    shared = [k for k in keys if k in evaluations.columns]
    rows = evaluations.join(cell.select(shared), on=shared, how="semi", nulls_equal=True)
    return curve(rows, metric, time)


def _when(t: float, time: str) -> str:
    if not math.isfinite(t):
        return "never"
    return f"{time} {int(t) if float(t).is_integer() else t:g}"


def _seeds(e: Estimate) -> str:
    """The seeds behind an estimate, and how many cells it was read on where more than one may be the best."""
    return e.seeds_text() + (f"; {e.cells} cells that may be the best" if e.cells > 1 else "")


def _span(e: Estimate, time: str) -> str:
    return f"{_when(e.value if e.value is not None else math.inf, time)} [{_when(e.low, time)}, " \
           f"{_when(e.high, time)}] ({_seeds(e)})"


def _judged(curves: list[pl.DataFrame] | None, holds: bool, fails: bool) -> str:
    """A bound's state: no cell at all fails, cells not run yet leave it open."""

    return "fails" if curves is None else "undecided" if any(c.is_empty() for c in curves) \
        else check_state(holds, fails)


def _read(curves: list[pl.DataFrame] | None, statistic: Callable[[pl.DataFrame], Estimate]) -> Estimate:
    """``statistic`` of every curve as one estimate: the first curve's value (the observed best cell's), the hull
    of their intervals (a bound holds on all of them or fails on all of them)."""
    empty = pl.DataFrame(schema={"g": pl.Float64, "sd": pl.Float64, "n": pl.Int64})
    found = [statistic(c) for c in (curves or [empty])]
    first = found[0]
    if len(found) == 1:
        return first
    return replace(first, low=min(e.low for e in found), high=max(e.high for e in found), cells=len(found),
                   seeds=(min(e.seeds[0] for e in found), max(e.seeds[1] for e in found)))


def time_checks(finding: Finding, metric: str, curves_of: CurvesOf, versus_region: Mapping[str, Any], errors: Errors,
                percent: bool) -> list[Check]:
    """Every time-axis bound of ``finding`` (module docstring): ``curves_of(panel value, region, error)`` are the
    curves it is read on (:func:`best_curves`)."""

    level, time, where = finding.level, finding.time, finding.where
    loss = lower_is_better(metric)
    past = "<=" if loss else ">="
    reaching = f"first {'falls to' if loss else 'reaches'} {percent_text(level, percent)}"
    checks = []
    for value, by in finding.reached_by.items():
        points, at = curves_of(value, where, errors)
        e = _read(points, lambda c, at=at: first_reached(c, time, level, metric, at))
        state = _judged(points, e.high <= by, e.low > by)
        checks.append(Check(value, "reached_by", by, e, state, bound=by, percent=percent,
                            detail=f"{reaching}: {_span(e, time)}, required at or before {_when(by, time)}"))
    for value in finding.still_holds:
        points, at = curves_of(value, where, errors)
        e = _read(points, lambda c, at=at: last_value(c, metric, at))
        holds, fails = (e.high <= level, e.low > level) if loss else (e.low >= level, e.high < level)
        checks.append(Check(value, "still_holds", level, e, _judged(points, holds, fails), bound=level,
                            percent=percent,
                            detail=f"at its last evaluation {percent_text(e.value, percent)} "
                                   f"{span_text(e, percent=percent)} ({_seeds(e)}), required {past} "
                                   f"{percent_text(level, percent)}"))
    for value, drop in finding.learned_then_unlearned.items():
        points, at = curves_of(value, where, errors)
        reached = _read(points, lambda c, at=at: first_reached(c, time, level, metric, at))
        last = _read(points, lambda c, at=at: last_value(c, metric, at))
        target = level + drop if loss else level - drop
        lost, kept = (last.low >= target, last.high < target) if loss else (last.high <= target, last.low > target)
        state = _judged(points, math.isfinite(reached.high) and lost, not math.isfinite(reached.low) or kept)
        checks.append(Check(value, "learned_then_unlearned", target, last, state, bound=target, percent=percent,
                            detail=f"{reaching}: {_span(reached, time)}; at its last evaluation "
                                   f"{percent_text(last.value, percent)} {span_text(last, percent=percent)}, "
                                   f"required {'>=' if loss else '<='} {percent_text(target, percent)} (a drop of "
                                   f"{point_text(drop, percent).lstrip('+')}{' pp' if percent else ''})"))
    lead = finding.time_margin
    earlier = f"more than {lead:g} {time}s earlier than" if lead else "earlier than"
    for a, bs in finding.faster_than.items():
        for b in bs:
            sides = (curves_of(a, where, errors.halved()), curves_of(b, versus_region, errors.halved()))
            points = tuple(p for p, _ in sides)
            mine, theirs = (_read(p, lambda c, at=at: first_reached(c, time, level, metric, at)) for p, at in sides)
            gap = Estimate(None if mine.value is None or theirs.value is None or not math.isfinite(mine.value)
                           or not math.isfinite(theirs.value) else mine.value - theirs.value,
                           mine.low - theirs.high if math.isfinite(theirs.high) else -math.inf,
                           mine.high - theirs.low if math.isfinite(mine.high) else math.inf,
                           mine.seeds, 2, parts=(mine, theirs))
            pending = any(p is not None and any(c.is_empty() for c in p) for p in points)
            state = "fails" if any(p is None for p in points) else "undecided" if pending \
                else _judged(points[0], math.isfinite(mine.high) and theirs.low - mine.high > lead,
                             not math.isfinite(mine.low) or theirs.high - mine.low <= lead)
            checks.append(Check(a, "faster_than", None, gap, state, versus=b, mine=mine, bound=0.0, percent=percent,
                                detail=f"{reaching}: {_span(mine, time)}, required {earlier} {b}'s: "
                                       f"{_span(theirs, time)}"))
    return checks
