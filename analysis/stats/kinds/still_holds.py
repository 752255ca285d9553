"""``still_holds``: a panel value's learning curve is at a level or past it at its last evaluation ("and stays
there")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from analysis.stats.intervals.curves import last_value
from analysis.stats.intervals.errors import Errors
from analysis.stats.kinds.base import KINDS, Check, Kind, Reading, Relation
from analysis.stats.kinds.per_seed import ShownBy
from analysis.stats.kinds.text import percent_text, span_text
from analysis.stats.kinds.time_axis import CurvesOf, judged, read, seeds_text
from analysis.stats.kinds.time_kind import TimeKind
from analysis.stats.metric import lower_is_better
from search_spaces.finding import Finding


@KINDS.register("still_holds")
@dataclass(frozen=True)
class StillHolds(TimeKind):
    """Reads the last evaluation (one fixed evaluation: its own interval, each end at its whole error): **holds** when
    its whole interval is at the finding's ``level`` or past it, **fails** when wholly short of it."""

    name: ClassVar[str] = "still_holds"
    panel_value: str

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        return [cls(value) for value in finding.still_holds]

    @property
    def relation(self) -> Relation:
        return "still_holds"

    def ends(self) -> int:
        return 1

    def shown_by(self, reading: Reading) -> ShownBy:
        level, loss = reading.finding.level, lower_is_better(reading.metric)
        return lambda _times, values: bool(len(values)) and bool(values[-1] <= level if loss else values[-1] >= level)

    def on_curves(self, curves_of: CurvesOf, reading: Reading, errors: Errors) -> Check:
        level, pct, loss = reading.finding.level, reading.percent, lower_is_better(reading.metric)
        points, at = curves_of(self.panel_value, reading.finding.where, errors)
        e = read(points, lambda c: last_value(c, reading.metric, at))
        holds, fails = (e.high <= level, e.low > level) if loss else (e.low >= level, e.high < level)
        return Check(self, e, judged(points, holds, fails), bound=level, percent=pct,
                     detail=f"at its last evaluation {percent_text(e.value, pct)} {span_text(e, percent=pct)} "
                            f"({seeds_text(e)}), required {'<=' if loss else '>='} {percent_text(level, pct)}")
