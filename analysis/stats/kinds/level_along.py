"""``level_along``: two panel values' learning curves lie within a stated margin of each other at every evaluation they
share ("nearly identical training behavior": the curves, not only where they end), tested as equivalence at each.

Per evaluation the gap is A's seed mean minus B's, its interval the two curves' intervals held together (each side at
half the error, as a difference's two sides; :func:`analysis.stats.intervals.curves.curve_bounds`, the one interval of
a curve's point). The bound is an intersection of equivalences, one per evaluation:

* it **holds** when at every shared evaluation the gap's whole interval lies within ``[-margin, margin]``, each
  evaluation's interval at its end's whole error: a wrong PASS needs the curves truly apart by more than the margin at
  some evaluation and that evaluation's interval to miss it (an intersection-union test: no share over evaluations);
* it **fails** when at some evaluation the gap's whole interval lies outside the margin, each interval at the end's
  error shared over the curve's evaluations (which evaluation fails it is read from the data, as a best's end over
  cells);
* else it is undecided. Curves of several cells that may be the best
  (:func:`analysis.stats.kinds.time_axis.best_curves`) hold it only if every pair holds it and fail it only if every
  pair fails it; a side with no cell fails, a cell not run yet leaves it open, and curves with no evaluation in common
  decide nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from analysis.stats.intervals.curves import Curve, curve_bounds
from analysis.stats.intervals.errors import Errors
from analysis.stats.intervals.estimate import Estimate
from analysis.stats.kinds.base import KINDS, Check, Kind, Reading, Relation, State, check_state
from analysis.stats.kinds.text import point_text, span_text, unit
from analysis.stats.kinds.time_axis import CurvesOf, when
from analysis.stats.kinds.time_kind import TimeKind
from analysis.stats.table import Column
from search_spaces.finding import Finding


@dataclass(frozen=True)
class Gaps:
    """Two curves' gaps (A - B) at their shared evaluations: the seed means' gaps, each gap's interval at its end's
    whole error (``low``, ``high``: what a PASS reads) and at the error shared over the evaluations (``sure_low``,
    ``sure_high``: what a FAIL reads)."""

    times: np.ndarray
    gap: np.ndarray
    low: np.ndarray
    high: np.ndarray
    sure_low: np.ndarray
    sure_high: np.ndarray
    seeds: tuple[int, int]

    def holds(self, margin: float) -> bool:
        """Every evaluation's whole interval within the margin (none shared: nothing decided)."""
        return bool(self.times.size) and bool(np.all(self.low >= -margin) and np.all(self.high <= margin))

    def fails(self, margin: float) -> bool:
        """Some evaluation's whole interval outside the margin, at the shared error."""
        return bool(np.any(self.sure_low > margin) or np.any(self.sure_high < -margin))

    def widest(self) -> int:
        """The evaluation of the largest observed gap, either way."""
        return int(np.argmax(np.abs(self.gap)))


def gaps(mine: Curve, theirs: Curve, metric: str, errors: tuple[Errors, Errors]) -> Gaps:
    """The gaps of ``mine`` minus ``theirs`` at the evaluations both have, each curve's interval at its side's error
    (``errors``: A's, B's)."""
    t_a, t_b = mine.times(), theirs.times()
    shared = np.intersect1d(t_a, t_b)
    ia, ib = np.searchsorted(t_a, shared), np.searchsorted(t_b, shared)
    a_lo, a_hi = (x[ia] for x in curve_bounds(mine, metric, errors[0], union=False))
    b_lo, b_hi = (x[ib] for x in curve_bounds(theirs, metric, errors[1], union=False))
    sa_lo, sa_hi = (x[ia] for x in curve_bounds(mine, metric, errors[0], union=True))
    sb_lo, sb_hi = (x[ib] for x in curve_bounds(theirs, metric, errors[1], union=True))
    g_a, g_b = mine.points.values(Column.G, 0.0)[ia], theirs.points.values(Column.G, 0.0)[ib]
    n = np.concatenate([mine.points.values(Column.N, 0.0)[ia], theirs.points.values(Column.N, 0.0)[ib]])
    seeds = (int(n.min()), int(n.max())) if n.size else (0, 0)
    return Gaps(shared, g_a - g_b, a_lo - b_hi, a_hi - b_lo, sa_lo - sb_hi, sa_hi - sb_lo, seeds)


@KINDS.register("level_along")
@dataclass(frozen=True)
class LevelAlong(TimeKind):
    """|A - B| <= ``margin`` (the finding's ``equivalence_margin``) at every evaluation the two best cells' curves share
    (module docstring)."""

    name: ClassVar[str] = "level_along"
    panel_value: str
    versus: str
    margin: float

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        return [cls(a, b, finding.equivalence_margin or 0.0) for a, bs in finding.level_along.items() for b in bs]

    @property
    def compared_with(self) -> str:
        return self.versus

    @property
    def relation(self) -> Relation:
        return "level_along"

    def ends(self) -> int:
        return 2  # either end of a gap can fail it

    def on_curves(self, curves_of: CurvesOf, reading: Reading, errors: Errors) -> Check:
        f, pct, m = reading.finding, reading.percent, self.margin
        (mine, at_a), (theirs, at_b) = (curves_of(self.panel_value, f.where, errors.halved()),
                                        curves_of(self.versus, reading.versus_region, errors.halved()))
        within = f"within {point_text(m, pct).lstrip('+')}{unit(pct)} of {self.versus}'s at every evaluation"
        if mine is None or theirs is None:
            return self._check(Estimate(None, -np.inf, np.inf), State.FAILS, pct, f"no cell; required {within}")
        if any(c.is_empty() for c in (*mine, *theirs)):
            return self._check(Estimate(None, -np.inf, np.inf), State.UNDECIDED, pct,
                               f"a cell not run yet; required {within}")
        pairs = [gaps(a, b, reading.metric, (at_a, at_b)) for a in mine for b in theirs]
        first = pairs[0]
        if not first.times.size:
            return self._check(Estimate(None, -np.inf, np.inf), State.UNDECIDED, pct,
                               f"no evaluation in common; required {within}")
        state = check_state(all(p.holds(m) for p in pairs), all(p.fails(m) for p in pairs))
        i = first.widest()
        e = Estimate(float(first.gap[i]), float(min(p.low.min() for p in pairs if p.times.size)),
                     float(max(p.high.max() for p in pairs if p.times.size)), first.seeds, len(pairs))
        cells = f"; {len(mine)} x {len(theirs)} cells that may be the best" if len(pairs) > 1 else ""
        return self._check(e, state, pct,
                           f"largest gap {point_text(e.value or 0.0, pct)}{unit(pct)} at {when(first.times[i], f.time)}"
                           f", the gaps over {first.times.size} shared evaluations within "
                           f"{span_text(e, points=True, percent=pct)} ({e.seeds_text()}{cells}), required {within}")

    def _check(self, e: Estimate, state: State, percent: bool, detail: str) -> Check:
        return Check(self, e, state, bound=self.margin, percent=percent, detail=detail,
                     open_because="an evaluation's gap interval holds the margin")

    def threshold(self, check: Check) -> float | None:
        return None

    def points_to_failing(self, check: Check) -> bool:
        value = check.estimate.value
        return True if value is None else abs(value) > self.margin
