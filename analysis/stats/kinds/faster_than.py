"""``faster_than``: a panel value's learning curve reaches a level at an earlier evaluation than another's
("converges faster"; by more than a margin: "substantially faster")."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from analysis.stats.intervals.curves import Curve, first_reached
from analysis.stats.intervals.errors import Errors
from analysis.stats.intervals.estimate import Estimate
from analysis.stats.kinds.base import KINDS, Check, Kind, Reading, Relation, State
from analysis.stats.kinds.seed_times import faster_per_seed
from analysis.stats.kinds.time_axis import CurvesOf, judged, reaching, read, span
from analysis.stats.kinds.time_kind import TimeKind
from search_spaces.finding import Finding


@KINDS.register("faster_than")
@dataclass(frozen=True)
class FasterThan(TimeKind):
    """**Holds** when A's latest plausible first time is more than the finding's ``time_margin`` earlier than B's
    earliest, **fails** when A's earliest is at most ``time_margin`` earlier than B's latest (margin 0: no earlier);
    each side at half the end's error, as a difference's two sides. With the finding's ``per_seed``: A's seeds
    reach the level more than ``time_margin`` earlier than B's, an exact two-sample rank test of the seeds' own first
    times (:mod:`analysis.stats.kinds.seed_times`)."""

    name: ClassVar[str] = "faster_than"
    panel_value: str
    versus: str
    margin: float

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        return [cls(a, b, finding.time_margin) for a, bs in finding.faster_than.items() for b in bs]

    @property
    def compared_with(self) -> str:
        return self.versus

    @property
    def relation(self) -> Relation:
        return "faster_than"

    def ends(self) -> int:
        return 1

    def judge(self, reading: Reading) -> Check:
        if reading.finding.per_seed:
            return faster_per_seed(self, self.versus, self.margin, reading)
        return super().judge(reading)

    def on_curves(self, curves_of: CurvesOf, reading: Reading, errors: Errors) -> Check:
        f, lead = reading.finding, self.margin
        sides = (curves_of(self.panel_value, f.where, errors.halved()),
                 curves_of(self.versus, reading.versus_region, errors.halved()))
        points = tuple(p for p, _ in sides)

        def first(points: list[Curve] | None, at: Errors) -> Estimate:
            return read(points, lambda c: first_reached(c, f.level, reading.metric, at))

        mine, theirs = (first(p, at) for p, at in sides)
        value = None
        if mine.value is not None and theirs.value is not None and math.isfinite(mine.value) \
                and math.isfinite(theirs.value):
            value = mine.value - theirs.value
        gap = Estimate(value, mine.low - theirs.high if math.isfinite(theirs.high) else -math.inf,
                       mine.high - theirs.low if math.isfinite(mine.high) else math.inf, mine.seeds, 2,
                       parts=(mine, theirs))
        pending = any(p is not None and any(c.is_empty() for c in p) for p in points)
        state = State.FAILS if any(p is None for p in points) else State.UNDECIDED if pending \
            else judged(points[0], math.isfinite(mine.high) and theirs.low - mine.high > lead,
                        not math.isfinite(mine.low) or theirs.high - mine.low <= lead)
        earlier = f"more than {lead:g} {f.time}s earlier than" if lead else "earlier than"
        return Check(self, gap, state, bound=0.0, mine=mine, percent=reading.percent,
                     detail=f"{reaching(reading)}: {span(mine, f.time)}, required {earlier} {self.versus}'s: "
                            f"{span(theirs, f.time)}")

    def threshold(self, check: Check) -> float | None:
        return None

    def points_to_failing(self, check: Check) -> bool:
        value = check.estimate.value
        return True if value is None else value > 0.0  # a time: later is failing
