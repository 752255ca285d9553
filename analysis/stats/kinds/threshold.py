"""``below`` / ``above``: a panel value's number at most / at least a threshold (both on one panel value: a two-sided
level, "trapped at about 55%")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import polars as pl

from analysis.stats.kinds.base import KINDS, Check, Kind, Reading, Relation, State, check_state
from analysis.stats.kinds.text import SIGN, number_text, percent_text
from search_spaces.finding import Finding


@KINDS.register("threshold")
@dataclass(frozen=True)
class Threshold(Kind):
    """At most (``side`` below) or at least (above) ``limit``, decided where the interval clears it: it **holds** when
    the whole interval is on the bound's side, **fails** when it is wholly past it, else is undecided. A panel value
    without any cell (not in the data, nothing expected) fails."""

    name: ClassVar[str] = "threshold"
    panel_value: str
    side: Literal["below", "above"]
    limit: float

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        """Every ``below`` bound, then every ``above`` one."""
        return [*(cls(k, "below", t) for k, t in finding.below.items()),
                *(cls(k, "above", t) for k, t in finding.above.items())]

    @property
    def relation(self) -> Relation:
        return self.side

    def ends(self) -> int:
        return 1

    def judge(self, reading: Reading) -> Check:
        where = reading.finding.where
        e = reading.number(self.panel_value, where)
        t = self.limit
        if e.cells == 0:
            state = State.FAILS
        elif self.side == "below":
            state = check_state(e.high <= t, e.low > t)
        else:
            state = check_state(e.low >= t, e.high < t)
        return Check(self, e, state, bound=t, subject=reading.subject(self.panel_value, where),
                     percent=reading.percent)

    def contention(self, check: Check) -> pl.DataFrame | None:
        """The cells whose intervals hold the threshold (:meth:`Estimate.contention` at it)."""
        return check.estimate.contention(self.limit)

    def points_to_failing(self, check: Check) -> bool:
        value = check.estimate.value
        if value is None:
            return True
        return value > self.limit if self.side == "below" else value < self.limit

    def text(self, check: Check) -> str:
        return (f"{check.subject or self.panel_value}: {number_text(check.estimate, check.percent)}, required "
                f"{SIGN[self.side]} {percent_text(self.limit, check.percent)}: {check.state}")
