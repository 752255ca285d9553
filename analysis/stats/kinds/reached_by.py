"""``reached_by``: a panel value's learning curve reaches a level at or before a time ("100% within 100 epochs")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from analysis.stats.intervals.curves import first_reached
from analysis.stats.intervals.errors import Errors
from analysis.stats.kinds.base import KINDS, Check, Kind, Reading, Relation
from analysis.stats.kinds.per_seed import ShownBy, first_at_or_past
from analysis.stats.kinds.time_axis import CurvesOf, judged, reaching, read, span, when
from analysis.stats.kinds.time_kind import TimeKind
from analysis.stats.metric import lower_is_better
from search_spaces.finding import Finding


@KINDS.register("reached_by")
@dataclass(frozen=True)
class ReachedBy(TimeKind):
    """The first evaluation that reaches the finding's ``level`` has an interval of times
    (:func:`analysis.stats.intervals.curves.first_reached`): from the first evaluation whose interval reaches the
    level at all to the first whose whole interval does (``never`` where none does). The bound **holds** when that
    whole interval is at or before ``by`` and **fails** when it lies wholly after it."""

    name: ClassVar[str] = "reached_by"
    panel_value: str
    by: float

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        return [cls(value, by) for value, by in finding.reached_by.items()]

    @property
    def relation(self) -> Relation:
        return "reached_by"

    def ends(self) -> int:
        return 1

    def on_curves(self, curves_of: CurvesOf, reading: Reading, errors: Errors) -> Check:
        f = reading.finding
        points, at = curves_of(self.panel_value, f.where, errors)
        e = read(points, lambda c: first_reached(c, f.level, reading.metric, at))
        return Check(self, e, judged(points, e.high <= self.by, e.low > self.by), bound=self.by,
                     percent=reading.percent,
                     detail=f"{reaching(reading)}: {span(e, f.time)}, required at or before {when(self.by, f.time)}")

    def shown_by(self, reading: Reading) -> ShownBy:
        level, loss = reading.finding.level, lower_is_better(reading.metric)
        return lambda times, values: first_at_or_past(times, values, level, loss) <= self.by

    def points_to_failing(self, check: Check) -> bool:
        value = check.estimate.value
        return True if value is None else value > self.by  # a time: later is failing
