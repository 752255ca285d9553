"""``not_ahead``: a panel value leads another by at most a stated margin ("none of these improvements is
significant"), tested as equivalence on one side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from analysis.stats.intervals.estimate import Estimate
from analysis.stats.kinds.base import KINDS, Check, Kind, Relation, State, check_state
from analysis.stats.kinds.level_with import LevelWith
from search_spaces.finding import Finding


@KINDS.register("not_ahead")
@dataclass(frozen=True)
class NotAhead(LevelWith):
    """A - B <= ``margin`` (the finding's ``equivalence_margin``), one one-sided test on the lead's interval (each
    side at half the error): its upper end at most the margin holds, its lower end past it fails."""

    name: ClassVar[str] = "not_ahead"

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        return [cls(a, b, finding.equivalence_margin or 0.0) for a, bs in finding.not_ahead.items() for b in bs]

    @property
    def relation(self) -> Relation:
        return "not_ahead"

    def ends(self) -> int:
        return 1

    def decide(self, lead: Estimate) -> State:
        return check_state(lead.high <= self.margin, lead.low > self.margin)

    def points_to_failing(self, check: Check) -> bool:
        value = check.estimate.value
        return True if value is None else value > self.margin

    def hopeless_bounds(self, check: Check) -> tuple[float, ...]:
        return (self.margin,)

    def words(self, within: str) -> str:
        return f"at most {within} ahead of"
