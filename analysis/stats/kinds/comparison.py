"""What the kinds that compare two panel values share: each side's number at half the error (a difference's two
sides share it), the lead with its interval, and the other side in words."""

from __future__ import annotations

from dataclasses import dataclass

from analysis.stats.intervals.estimate import Estimate
from analysis.stats.kinds.base import Reading
from analysis.stats.kinds.text import percent_text, point_text, span_text, unit


@dataclass(frozen=True)
class Sides:
    """A's number (``mine``), B's (``theirs``), the lead ``mine - theirs`` and how each side is named."""

    mine: Estimate
    theirs: Estimate
    subject: str  # A with its statistic and region
    versus_subject: str  # B with its statistic and region

    @property
    def lead(self) -> Estimate:
        """A's lead over B with its interval (the two sides' intervals held together)."""
        return self.mine.minus(self.theirs)

    @property
    def empty(self) -> bool:
        """Whether a side has no cell (not in the data, nothing expected): the comparison fails."""
        return self.mine.cells == 0 or self.theirs.cells == 0

    def against(self, percent: bool, margin: float = 0.0) -> str:
        """``BERT 72.1% (5 seeds) + 5.0 pp``: B's number with its seeds, and the margin a lead must pass."""
        shown = f" {'+' if margin >= 0 else '-'} {percent_text(abs(margin), percent).rstrip('%')}{unit(percent)}" \
            if margin else ""
        seeds = f" ({self.theirs.seeds_text()})" if self.theirs.cells else ""
        return f"{self.versus_subject} {percent_text(self.theirs.value, percent)}{seeds}{shown}"


def sides(reading: Reading, a: str, b: str) -> Sides:
    """A's number over the finding's ``where`` and B's over its ``versus_where`` (else ``where``), each at half the
    error."""
    where, versus = reading.finding.where, reading.versus_region
    return Sides(reading.number(a, where, halved=True), reading.number(b, versus, halved=True),
                 reading.subject(a, where), reading.subject(b, versus))


def lead_text(lead: Estimate, percent: bool) -> str:
    """``+4.1 pp [-0.3, +8.2] pp``: a lead with its interval (empty where a side has no number)."""
    if lead.value is None:
        return ""
    return f"{point_text(lead.value, percent)}{unit(percent)} {span_text(lead, points=True, percent=percent)}"
