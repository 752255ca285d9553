"""``lead_grows``: a panel value's lead over another is larger in one region than in another, by more than a margin
("increasing task complexity, EA is observed to outperform DPA with increasing margins": EA - DPA on a harder rung
against EA - DPA on an easier one) - a difference of two differences.

A's and B's statistic in the finding's ``where`` (the harder rung) and in its ``versus_where`` (the easier one), each of
the four with its interval from the one interval function of a statistic
(:func:`analysis.stats.intervals.statistics.estimate`) at a quarter of the end's error (the four sides of a difference
of differences share it, as a difference's two sides share it at half); the growth ``(A - B)[where] - (A - B)[versus]``
with the four intervals held together. A strict growth ("increasing", ``margin`` >= 0): it **holds** when the growth's
lower end exceeds the margin and **fails** when its upper end does not (one end can fail it either way); a side
without any cell fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from analysis.stats.intervals.estimate import Estimate
from analysis.stats.intervals.statistics import estimate
from analysis.stats.kinds.base import KINDS, Check, Kind, Reading, Relation, State, check_state
from analysis.stats.kinds.comparison import lead_text
from analysis.stats.kinds.text import point_text, unit
from analysis.stats.region import region_text
from search_spaces.finding import Finding


def quarter(reading: Reading, value: str, region: Mapping[str, Any]) -> Estimate:
    """The finding's statistic of ``value``'s cells in ``region``, each end at a quarter of the error."""
    f = reading.finding
    return estimate(reading.cells(value, region), f.statistic, f.level, reading.metric, reading.noise,
                    reading.errors.scaled(0.25), reading.max_seeds)


@KINDS.register("lead_grows")
@dataclass(frozen=True)
class LeadGrows(Kind):
    """(A - B) in ``where`` > (A - B) in ``versus_where`` + ``margin`` (module docstring)."""

    name: ClassVar[str] = "lead_grows"
    panel_value: str
    versus: str
    margin: float

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        return [cls(a, b, finding.margin) for a, bs in finding.lead_grows.items() for b in bs]

    @property
    def compared_with(self) -> str:
        return self.versus

    @property
    def relation(self) -> Relation:
        return "lead_grows"

    def ends(self) -> int:
        return 1

    def judge(self, reading: Reading) -> Check:
        f = reading.finding
        harder = quarter(reading, self.panel_value, f.where).minus(quarter(reading, self.versus, f.where))
        easier = quarter(reading, self.panel_value, reading.versus_region).minus(
            quarter(reading, self.versus, reading.versus_region))
        growth = harder.minus(easier)
        sides = (*harder.parts, *easier.parts)
        state = State.FAILS if any(s.cells == 0 for s in sides) else State.UNDECIDED if growth.value is None \
            else check_state(growth.low > self.margin, growth.high <= self.margin)
        pct = reading.percent
        where, versus = region_text(f.where) or "the grid", region_text(reading.versus_region) or "the grid"
        shown = lead_text(harder, pct) or "no data"
        against = lead_text(easier, pct) or "no data"
        more = f"more than {point_text(self.margin, pct).lstrip('+')}{unit(pct)} beyond" if self.margin else "beyond"
        grown = lead_text(growth, pct)
        return Check(self, growth, state, bound=self.margin, mine=sides[0], percent=pct,
                     detail=f"lead over {self.versus} at {where} {shown}, required {more} its lead at {versus} "
                            f"{against}{'; growth ' + grown if grown else ''}",
                     open_because="the growth's interval holds the margin")

    def empty_sides(self, check: Check) -> list[str]:
        """Either panel value without a cell in either region (the four sides of the difference of differences)."""
        harder, easier = check.estimate.parts
        sides = zip((self.panel_value, self.versus) * 2, (*harder.parts, *easier.parts), strict=True)
        return sorted({value for value, e in sides if e.cells == 0})

    def text(self, check: Check) -> str:
        return f"{self.panel_value}: {check.detail}: {check.state}"

    def threshold(self, check: Check) -> float | None:
        return None

    def points_to_failing(self, check: Check) -> bool:
        value = check.estimate.value
        return True if value is None else value <= self.margin
