"""One bound of a finding (:class:`Check`): a panel value's number against its threshold, with its interval, its
state and its words; what :mod:`analysis.stats.findings` and :mod:`analysis.stats.finding_time` judge and print."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from analysis.stats.finding_cells import region_text
from analysis.stats.finding_intervals import Estimate
from analysis.stats.verdict_text import SIGN, percent_text, point_text, span_text
from search_spaces.finding import Finding

#: How far the interval every seed would give (:attr:`Estimate.projected`) is shrunk towards the number before a
#: bound inside it counts as out of reach (:meth:`Check.hopeless`), per kind of statistic. A best or worst of many
#: cells reads high (low) at few seeds - it is the extreme of noisy numbers - and moves as seeds come in, so only the
#: projection's inner quarter counts; a share, a mean, a spread and a difference move little, and a bound anywhere
#: inside their projection is out of reach. Chosen on the release replays (the fewest models that keep every verdict
#: the completed budget decides) and measured out of sample, each file held out once: bench/adaptive.py,
#: bench/README.md section 8.
FUTILITY_SHARE = {"order": 0.25, "other": 1.0}


@dataclass(frozen=True)
class Check:
    """One bound of a finding: ``panel_value``'s number against ``threshold`` (``ahead``: ``versus``'s + margin)."""

    panel_value: str
    relation: str  # "below" (at most), "above" (at least), "ahead" (at least another's + margin), "level" (as another)
    threshold: float | None
    estimate: Estimate  # the panel value's number (ahead: the lead over ``versus``)
    state: str  # "holds", "fails" or "undecided"
    subject: str = ""  # the panel value with the statistic and region, when not the best over the whole grid
    versus: str = ""  # ahead: the panel value compared with
    against: str = ""  # ahead: ``BERT 72.1% (5 seeds) + 5.0 pp``
    mine: Estimate | None = field(default=None, compare=False)  # ahead: the panel value's own number
    bound: float | None = None  # what ``estimate`` is held against: the threshold, a lead's margin, 0 for level
    percent: bool = True  # an accuracy, shown in percent (a loss or an output scale: in its own unit)
    #: the number and what it is held against, in words, where the relation is none of the above (worst_beats_best)
    detail: str = ""

    @property
    def value(self) -> float | None:
        """The panel value's number on the data."""
        return (self.mine or self.estimate).value

    def hopeless(self) -> bool:
        """Whether even every seed would most likely leave this bound undecided: the bound lies inside the interval the
        statistic would have were every cell at every seed with the spread it has now (:attr:`Estimate.projected`),
        shrunk towards the number to :data:`FUTILITY_SHARE` of its extent on each side. A matter of efficiency only:
        a hopeless bound asks for no seeds, it decides nothing."""
        e = self.estimate
        if e.value is None or self.bound is None or e.projected is None or \
                not all(math.isfinite(x) for x in e.projected):
            return False
        share = FUTILITY_SHARE["order" if e.kind == "order" else "other"]
        low = e.value - share * max(e.value - e.projected[0], 0.0)  # the projection, shrunk to the number
        high = e.value + share * max(e.projected[1] - e.value, 0.0)
        bounds = (-self.bound, self.bound) if self.relation == "level" else (self.bound,)
        return any(low < b < high for b in bounds)

    def points_to_failing(self) -> bool:
        """Whether the number, as it stands, lies on the failing side of its bound."""
        value, bound = self.estimate.value, self.bound
        if value is None or bound is None:
            return True
        if self.relation == "below":
            return value > bound
        if self.relation == "level":
            return abs(value) > bound
        if self.relation == "not_ahead":
            return value > bound
        if self.relation in ("reached_by", "faster_than"):  # a time: later is failing
            return value > bound
        if self.relation == "learned_then_unlearned":
            return True
        return value <= bound if self.relation == "ahead" and bound >= 0 else value < bound

    def text(self) -> str:
        """``max: 16.1% [14.0, 18.2] (3 seeds), required <= 15.0%: fails``: the number, its interval and seeds,
        and exactly the bound tested."""
        own, pct = self.mine or self.estimate, self.percent
        if self.detail:
            return f"{self.subject or self.panel_value}: {self.detail}: {self.state}"
        number = percent_text(own.value, pct)
        if own.value is not None or own.cells:
            number += f" {span_text(own, percent=pct)} ({own.seeds_text()})"
        if self.relation in ("below", "above"):
            return f"{self.subject or self.panel_value}: {number}, required {SIGN[self.relation]} " \
                   f"{percent_text(self.threshold, pct)}: {self.state}"
        lead, unit = self.estimate, " pp" if pct else ""
        shown = "" if lead.value is None else \
            f"{point_text(lead.value, pct)}{unit} {span_text(lead, points=True, percent=pct)}"
        if self.relation in ("level", "not_ahead"):
            within = point_text(self.bound or 0.0, pct).lstrip("+") + unit
            words = f"within {within} of" if self.relation == "level" else f"at most {within} ahead of"
            return (f"{self.subject or self.panel_value}: {number}, required {words} {self.against}"
                    f"{'; difference ' + shown if shown else ''}: {self.state}")
        bound = f"{self.against} = {percent_text(self.threshold, pct)}" if self.threshold is not None else self.against
        lead_text = f"; lead {shown}" if shown else ""
        return f"{self.subject or self.panel_value}: {number}, required >= {bound}{lead_text}: {self.state}"


def check_state(holds: bool, fails: bool) -> str:
    """A bound's state from its two decisions: ``holds``, ``fails`` or ``undecided``."""
    return "holds" if holds else "fails" if fails else "undecided"


def subject_text(finding: Finding, panel_value: str, region: Mapping[str, Any]) -> str:
    """What a bound is about, in words: the panel value, with its statistic and region unless the best over the grid."""
    if finding.statistic == "best" and not region:
        return panel_value
    stat = {"share": f"share of cells with G >= {100 * finding.level:.0f}%",
            "spread": f"mean difference of two seeds where G reaches {100 * finding.level:.0f}%"
            }.get(finding.statistic, finding.statistic)
    where = region_text(region)
    return f"{panel_value} ({stat}{' at ' + where if where else ''})"
