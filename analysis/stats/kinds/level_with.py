"""``level_with``: two panel values' numbers differ by at most a stated margin either way ("nearly identical", "none
of these differences is significant"), tested as equivalence."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from analysis.stats.intervals.estimate import Estimate
from analysis.stats.kinds.base import KINDS, Check, Kind, Reading, Relation, State, check_state
from analysis.stats.kinds.comparison import lead_text, sides
from analysis.stats.kinds.text import number_text, point_text, unit
from search_spaces.finding import Finding


@KINDS.register("level_with")
@dataclass(frozen=True)
class LevelWith(Kind):
    """|A - B| <= ``margin`` (the finding's ``equivalence_margin``), two one-sided tests on the lead's interval (each
    side at half the error): the whole interval inside ``[-margin, margin]`` holds, wholly outside it fails, else
    undecided - fewer seeds, a wider interval, never a likelier PASS. A side without any cell fails."""

    name: ClassVar[str] = "level_with"
    panel_value: str
    versus: str
    margin: float

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        return [cls(a, b, finding.equivalence_margin or 0.0) for a, bs in finding.level_with.items() for b in bs]

    @property
    def compared_with(self) -> str:
        return self.versus

    @property
    def relation(self) -> Relation:
        return "level"

    def ends(self) -> int:
        return 2  # either end of the difference can fail it

    def decide(self, lead: Estimate) -> State:
        """The state of the equivalence on the lead's interval."""
        m = self.margin
        return check_state(-m <= lead.low and lead.high <= m, lead.low > m or lead.high < -m)

    def judge(self, reading: Reading) -> Check:
        two = sides(reading, self.panel_value, self.versus)
        lead = two.lead
        state = State.FAILS if two.empty else State.UNDECIDED if lead.value is None else self.decide(lead)
        return Check(self, lead, state, bound=self.margin, mine=two.mine, subject=two.subject,
                     against=two.against(reading.percent), percent=reading.percent)

    def threshold(self, check: Check) -> float | None:
        """B's number."""
        return check.estimate.parts[1].value if check.estimate.parts else None

    def points_to_failing(self, check: Check) -> bool:
        value = check.estimate.value
        return True if value is None else abs(value) > self.margin

    def hopeless_bounds(self, check: Check) -> tuple[float, ...]:
        return (-self.margin, self.margin)

    def words(self, within: str) -> str:
        """What the bound requires, in words."""
        return f"within {within} of"

    def text(self, check: Check) -> str:
        pct = check.percent
        own = check.mine or check.estimate
        within = point_text(self.margin, pct).lstrip("+") + unit(pct)
        shown = lead_text(check.estimate, pct)
        return (f"{check.subject or self.panel_value}: {number_text(own, pct)}, required {self.words(within)} "
                f"{check.against}{'; difference ' + shown if shown else ''}: {check.state}")
