"""``learned_then_unlearned``: a panel value's learning curve reaches a level, and at its last evaluation lies a drop
short of it or more ("learns the first case, then unlearns it")."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from analysis.stats.intervals.curves import first_reached, last_value
from analysis.stats.intervals.errors import Errors
from analysis.stats.kinds.base import KINDS, Check, Kind, Reading, Relation
from analysis.stats.kinds.per_seed import ShownBy, first_at_or_past
from analysis.stats.kinds.text import percent_text, point_text, span_text, unit
from analysis.stats.kinds.time_axis import CurvesOf, judged, reaching, read, span
from analysis.stats.kinds.time_kind import TimeKind
from analysis.stats.metric import lower_is_better
from analysis.stats.table import Floats
from search_spaces.finding import Finding


@KINDS.register("learned_then_unlearned")
@dataclass(frozen=True)
class LearnedThenUnlearned(TimeKind):
    """**Holds** when the level is surely reached at some evaluation and the last evaluation's whole interval lies
    ``drop`` or more short of it; **fails** when no evaluation's interval reaches the level (never learned) or the last
    evaluation's whole interval lies less than ``drop`` short of it (not unlearned): two ends."""

    name: ClassVar[str] = "learned_then_unlearned"
    panel_value: str
    drop: float

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        return [cls(value, drop) for value, drop in finding.learned_then_unlearned.items()]

    @property
    def relation(self) -> Relation:
        return "learned_then_unlearned"

    def ends(self) -> int:
        return 2

    def on_curves(self, curves_of: CurvesOf, reading: Reading, errors: Errors) -> Check:
        f, pct, loss = reading.finding, reading.percent, lower_is_better(reading.metric)
        points, at = curves_of(self.panel_value, f.where, errors)
        reached = read(points, lambda c: first_reached(c, f.level, reading.metric, at))
        last = read(points, lambda c: last_value(c, reading.metric, at))
        target = f.level + self.drop if loss else f.level - self.drop
        lost, kept = (last.low >= target, last.high < target) if loss else (last.high <= target, last.low > target)
        state = judged(points, math.isfinite(reached.high) and lost, not math.isfinite(reached.low) or kept)
        return Check(self, last, state, bound=target, percent=pct,
                     detail=f"{reaching(reading)}: {span(reached, f.time)}; at its last evaluation "
                            f"{percent_text(last.value, pct)} {span_text(last, percent=pct)}, required "
                            f"{'>=' if loss else '<='} {percent_text(target, pct)} (a drop of "
                            f"{point_text(self.drop, pct).lstrip('+')}{unit(pct)})")

    def shown_by(self, reading: Reading) -> ShownBy:
        level, loss = reading.finding.level, lower_is_better(reading.metric)
        target = level + self.drop if loss else level - self.drop

        def shown(times: Floats, values: Floats) -> bool:
            learned = math.isfinite(first_at_or_past(times, values, level, loss))
            return learned and bool(values[-1] >= target if loss else values[-1] <= target)
        return shown

    def points_to_failing(self, check: Check) -> bool:
        return True
