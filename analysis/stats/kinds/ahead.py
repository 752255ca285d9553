"""``ahead``: a panel value's number at least another's plus a margin ("NAP learns more than BERT"; a strict lead for
a margin >= 0)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from analysis.stats.kinds.base import KINDS, Check, Kind, Reading, Relation, State, check_state
from analysis.stats.kinds.comparison import lead_text, sides
from analysis.stats.kinds.text import number_text, percent_text
from search_spaces.finding import Finding


@KINDS.register("ahead")
@dataclass(frozen=True)
class Ahead(Kind):
    """A's number >= B's + ``margin``, decided on the interval of the lead (each side at half the error): a strict lead
    (``margin >= 0``: "more", "better") holds when the lead's lower end exceeds the margin and fails when its upper
    end does not; a negative margin ("within 2 points") is a bound as it is. A side without any cell fails."""

    name: ClassVar[str] = "ahead"
    panel_value: str
    versus: str
    margin: float

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        return [cls(a, b, finding.margin) for a, bs in finding.ahead.items() for b in bs]

    @property
    def compared_with(self) -> str:
        return self.versus

    @property
    def relation(self) -> Relation:
        return "ahead"

    def ends(self) -> int:
        return 1

    def judge(self, reading: Reading) -> Check:
        two = sides(reading, self.panel_value, self.versus)
        lead, m = two.lead, self.margin
        if two.empty:
            state = State.FAILS
        elif lead.value is None:
            state = State.UNDECIDED
        elif m >= 0:  # "more": the lead must exceed the margin
            state = check_state(lead.low > m, lead.high <= m)
        else:
            state = check_state(lead.low >= m, lead.high < m)
        return Check(self, lead, state, bound=m, mine=two.mine, subject=two.subject,
                     against=two.against(reading.percent, m), percent=reading.percent)

    def threshold(self, check: Check) -> float | None:
        """B's number plus the margin."""
        theirs = check.estimate.parts[1].value if check.estimate.parts else None
        return None if theirs is None else theirs + self.margin

    def points_to_failing(self, check: Check) -> bool:
        value = check.estimate.value
        if value is None:
            return True
        return value <= self.margin if self.margin >= 0 else value < self.margin

    def text(self, check: Check) -> str:
        own, pct = check.mine or check.estimate, check.percent
        threshold = self.threshold(check)
        bound = f"{check.against} = {percent_text(threshold, pct)}" if threshold is not None else check.against
        shown = lead_text(check.estimate, pct)
        return (f"{check.subject or self.panel_value}: {number_text(own, pct)}, required >= {bound}"
                f"{'; lead ' + shown if shown else ''}: {check.state}")
