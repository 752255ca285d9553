"""A finding's bounds on the time axis: when a panel value's learning curve reaches a level, whether it still holds
it at the end, whether it loses it again, and which of two reaches it first.

Each reads the learning curve of its panel value's best cell in the finding's ``where`` (the cell with the best G, as
``statistic`` ``best`` picks it; ``cell="any"``: each cell, combined by :mod:`analysis.stats.finding_any_cell`): per
evaluation the seeds' mean of the metric, with the interval the one seed-noise model gives it
(:func:`analysis.stats.finding_intervals.curve`, :func:`~analysis.stats.finding_intervals.curve_bounds`: an
evaluation's neighbours are the evaluations before and after it). From those intervals:

* the **first evaluation that reaches** ``level`` has an interval of times
  (:func:`analysis.stats.finding_intervals.first_reached`): from the first evaluation whose interval reaches the level
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
from typing import Any

import polars as pl

from analysis.stats.finding_cells import lower_is_better
from analysis.stats.finding_check import Check, check_state
from analysis.stats.finding_intervals import Errors, Estimate, curve, first_reached, last_value
from analysis.stats.verdict_text import percent_text, point_text, span_text
from search_spaces.finding import Finding


def time_ends(finding: Finding) -> int:
    """The interval ends that can fail the finding's time-axis bounds (learned then unlearned: two, the others
    one each)."""
    return (len(finding.reached_by) + len(finding.still_holds) + 2 * len(finding.learned_then_unlearned)
            + sum(len(bs) for bs in finding.faster_than.values()))


def best_curve(cells: pl.DataFrame, evaluations: pl.DataFrame, keys: Sequence[str], metric: str,
               time: str) -> pl.DataFrame | None:
    """The learning curve (:func:`analysis.stats.finding_intervals.curve`) of the cell of ``cells`` with the best G
    (a loss: the lowest), from its rows in ``evaluations``; empty while a cell has not run yet (it may be the best,
    its curve another), None when there is no cell at all."""
    run = cells.filter(pl.col("n") >= 1)
    if cells.is_empty():
        return None
    if run.height < cells.height:
        return curve(evaluations.head(0), metric, time)
    top = run.sort("g", descending=not lower_is_better(metric)).head(1)
    return cell_curve(top, evaluations, keys, metric, time)


def cell_curve(cell: pl.DataFrame, evaluations: pl.DataFrame, keys: Sequence[str], metric: str,
               time: str) -> pl.DataFrame:
    """The learning curve (:func:`analysis.stats.finding_intervals.curve`) of ``cell`` (one row of a cell table)
    from its rows in ``evaluations`` (matched on ``keys``); empty while it has not run."""
    shared = [k for k in keys if k in evaluations.columns]
    rows = evaluations.join(cell.select(shared), on=shared, how="semi", nulls_equal=True)
    return curve(rows, metric, time)


def _when(t: float, time: str) -> str:
    if not math.isfinite(t):
        return "never"
    return f"{time} {int(t) if float(t).is_integer() else t:g}"


def _span(e: Estimate, time: str) -> str:
    return f"{_when(e.value if e.value is not None else math.inf, time)} [{_when(e.low, time)}, " \
           f"{_when(e.high, time)}] ({e.seeds_text()})"


def _judged(points: pl.DataFrame | None, holds: bool, fails: bool) -> str:
    """A bound's state: no cell at all fails, cells not run yet leave it open."""

    return "fails" if points is None else "undecided" if points.is_empty() else check_state(holds, fails)


def _empty(points: pl.DataFrame | None) -> pl.DataFrame:
    return pl.DataFrame(schema={"g": pl.Float64, "sd": pl.Float64, "n": pl.Int64}) if points is None else points


def time_checks(finding: Finding, metric: str,
                curve_of: Callable[[str, Mapping[str, Any]], pl.DataFrame | None],
                versus_region: Mapping[str, Any], errors: Errors, percent: bool) -> list[Check]:
    """Every time-axis bound of ``finding`` (module docstring): ``curve_of(panel value, region)`` is its best cell's
    learning curve."""

    level, time, where = finding.level, finding.time, finding.where
    loss = lower_is_better(metric)
    past = "<=" if loss else ">="
    reaching = f"first {'falls to' if loss else 'reaches'} {percent_text(level, percent)}"
    checks = []
    for value, by in finding.reached_by.items():
        points = curve_of(value, where)
        e = first_reached(_empty(points), time, level, metric, errors)
        state = _judged(points, e.high <= by, e.low > by)
        checks.append(Check(value, "reached_by", by, e, state, bound=by, percent=percent,
                            detail=f"{reaching}: {_span(e, time)}, required at or before {_when(by, time)}"))
    for value in finding.still_holds:
        points = curve_of(value, where)
        e = last_value(_empty(points), metric, errors)
        holds, fails = (e.high <= level, e.low > level) if loss else (e.low >= level, e.high < level)
        checks.append(Check(value, "still_holds", level, e, _judged(points, holds, fails), bound=level,
                            percent=percent,
                            detail=f"at its last evaluation {percent_text(e.value, percent)} "
                                   f"{span_text(e, percent=percent)} ({e.seeds_text()}), required {past} "
                                   f"{percent_text(level, percent)}"))
    for value, drop in finding.learned_then_unlearned.items():
        points = curve_of(value, where)
        reached = first_reached(_empty(points), time, level, metric, errors)
        last = last_value(_empty(points), metric, errors)
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
            points = (curve_of(a, where), curve_of(b, versus_region))
            mine, theirs = (first_reached(_empty(p), time, level, metric, errors.halved()) for p in points)
            gap = Estimate(None if mine.value is None or theirs.value is None or not math.isfinite(mine.value)
                           or not math.isfinite(theirs.value) else mine.value - theirs.value,
                           mine.low - theirs.high if math.isfinite(theirs.high) else -math.inf,
                           mine.high - theirs.low if math.isfinite(mine.high) else math.inf,
                           mine.seeds, 2, parts=(mine, theirs))
            pending = any(p is not None and p.is_empty() for p in points)
            state = "fails" if any(p is None for p in points) else "undecided" if pending \
                else _judged(points[0], math.isfinite(mine.high) and theirs.low - mine.high > lead,
                             not math.isfinite(mine.low) or theirs.high - mine.low <= lead)
            checks.append(Check(a, "faster_than", None, gap, state, versus=b, mine=mine, bound=0.0, percent=percent,
                                detail=f"{reaching}: {_span(mine, time)}, required {earlier} {b}'s: "
                                       f"{_span(theirs, time)}"))
    return checks
