"""``counted``: a sentence that counts comparisons ("regularization often decreases mean performance", "the best is
most of the times achieved with the smallest regularization", "none of the architectures consistently benefits").

A finding states it under ``kinds={"counted": {...}}`` (:class:`Count` is its argument). Its **members** are
comparisons, one per panel value of ``values`` x metric of ``metrics`` x label of ``compare``: the best G of the
panel value over the cells whose ``axis`` takes the label's first values, minus its best G over those taking its second
values (each within the finding's ``where``) - e.g. an architecture's best training accuracy with dropout minus its
best without. A member **is so** when that lead stands in ``lead`` to ``margin`` (``below``: lead < margin;
``at_most``: lead <= margin; ``at_least``: lead >= margin). The bound says that more than ``more_than`` of the members
are so: of all of them, or with ``per_value`` of each panel value's own (one bound per panel value).

Each member is decided as a comparison is: its lead's interval, each side at half the member's error, clears the
margin on the member's side (so) or wholly on the other (not so); else it is open. Of K members, let m be the fewest
the bound needs (more than ``more_than`` x K). The bound **holds** when at least m members are shown so, each at the
end's error / (K - m + 1), and **fails** when fewer than m could be (K less those shown not so, each at the end's
error / m); else it is undecided. Why these shares (no assumption on how the members' noise is related): a wrong PASS
needs the truth to have at most m - 1 members so while m are shown so - at least m - T of its K - T false members
wrongly shown, whose expected number is at most (K - T) e, so the chance is at most (K - T) e / (m - T) <= (K - m + 1) e
(Markov's inequality; largest at T = m - 1). A wrong FAIL likewise needs, of T >= m true members, at least T - m + 1
wrongly shown not so: at most T e / (T - m + 1) <= m e. "Some member" (m = 1) is thus read at the end's error / K to
hold - a search over K members, as ``cell="any"`` reads its cells - and at the whole error to fail.

A member a side of which has no cell in the data (a printed table that gives one strength per kind of
regularisation) is open: it can be neither shown so nor not so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, get_args

import numpy as np
import polars as pl

from analysis.stats.intervals.cell import g_interval
from analysis.stats.intervals.errors import Errors
from analysis.stats.intervals.estimate import Estimate
from analysis.stats.kinds.base import KINDS, Check, Kind, Reading, Relation, State, check_state
from analysis.stats.kinds.text import point_text, span_text, unit
from analysis.stats.metric import is_accuracy, lower_is_better, metric_range
from analysis.stats.table import CellTable, Column, Floats
from search_spaces.finding import Finding, metric_columns
from search_spaces.schema import fail

#: How a member's lead stands to the margin for the member to be so.
Lead = Literal["below", "at_most", "at_least"]
_WORDS: dict[str, str] = {"below": "<", "at_most": "<=", "at_least": ">="}
_FIELDS = ("values", "axis", "compare", "lead", "margin", "more_than", "per_value", "metrics")
#: One side of a comparison: its cells and, per cell, the standard error of G and its degrees of freedom.
Side = tuple[CellTable, tuple[Floats, Floats]]


def _bad(finding: Finding, field: str, value: Any, allowed: str) -> ValueError:
    return fail(f"counted.{field} of finding {finding.description!r}", value, allowed)


@dataclass(frozen=True)
class Count:
    """The argument of ``counted``: which comparisons are counted, what makes one so, and how many must be."""

    values: tuple[str, ...]  # the panel values counted
    axis: str  # the grid column the comparisons split
    compare: tuple[tuple[str, tuple[Any, ...], tuple[Any, ...]], ...]  # (label, axis values, against axis values)
    lead: Lead
    margin: float
    more_than: float  # the share of the members that must be so is more than this
    per_value: bool  # each panel value's members counted on their own (one bound per panel value)
    metrics: tuple[str, ...]  # empty: the finding's metric

    @classmethod
    def of(cls, finding: Finding) -> Count | None:
        """The finding's ``counted`` argument, checked (ValueError: one line naming the field, the value and what is
        allowed); None where it states none."""
        raw = finding.kinds.get("counted")
        if raw is None:
            return None
        if not isinstance(raw, Mapping):
            raise _bad(finding, "", raw, f"a mapping with the keys {', '.join(_FIELDS)}")
        unknown = [k for k in raw if k not in _FIELDS]
        if unknown:
            raise _bad(finding, unknown[0], raw[unknown[0]], f"the keys {', '.join(_FIELDS)}")
        given = {"margin": 0.0, "per_value": False, "metrics": (), **raw}
        for name, (good, allowed) in _CHECKS.items():
            if not good(given.get(name)):
                raise _bad(finding, name, given.get(name), allowed)
        compare = tuple((str(k), tuple(a), tuple(b)) for k, (a, b) in given["compare"].items())
        return cls(tuple(given["values"]), given["axis"], compare, given["lead"], float(given["margin"]),
                   float(given["more_than"]), given["per_value"], tuple(given["metrics"]))

    def needed(self, members: int) -> int:
        """The fewest members of ``members`` that must be so: more than :attr:`more_than` of them."""
        return math.floor(self.more_than * members + 1e-9) + 1

    def decide(self, lead: Estimate) -> State:
        """Whether a member is shown so (HOLDS), shown not so (FAILS) or open, on its lead's interval."""
        t = self.margin
        if lead.value is None or lead.parts and any(p.cells == 0 for p in lead.parts):
            return State.UNDECIDED
        if self.lead == "below":
            return check_state(lead.high < t, lead.low >= t)
        if self.lead == "at_most":
            return check_state(lead.high <= t, lead.low > t)
        return check_state(lead.low >= t, lead.high < t)


def _texts(raw: Any) -> bool:
    return isinstance(raw, Sequence) and not isinstance(raw, str) and bool(raw) and all(
        isinstance(v, str) and v for v in raw)


def _listed(raw: Any) -> bool:
    return isinstance(raw, Sequence) and not isinstance(raw, str) and bool(raw)


def _number(raw: Any) -> bool:
    return isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw)


def _pairs(raw: Any) -> bool:
    return isinstance(raw, Mapping) and bool(raw) and all(
        isinstance(v, Sequence) and len(v) == 2 and all(_listed(side) for side in v) for v in raw.values())


def _metrics(raw: Any) -> bool:
    return raw == () or _texts(raw) and all(len(metric_columns(m)) == 1 for m in raw)


#: Each field of the argument: whether a value is good, and what is allowed.
_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "values": (_texts, "a non-empty tuple of panel values"),
    "axis": (lambda v: isinstance(v, str) and bool(v), "the name of a grid column"),
    "compare": (_pairs, "a mapping label -> (axis values, axis values against them)"),
    "lead": (lambda v: v in get_args(Lead), ", ".join(get_args(Lead))),
    "margin": (_number, "a finite number"),
    "more_than": (lambda v: _number(v) and 0 <= v < 1, "a share of the members, 0 <= share < 1"),
    "per_value": (lambda v: isinstance(v, bool), "True or False"),
    "metrics": (_metrics, "a tuple of metric columns (empty: the finding's metric)"),
}


@dataclass(frozen=True)
class Member:
    """One comparison counted, its lead with the interval it was decided on, and its state."""

    words: str
    lead: Estimate
    state: State


@KINDS.register("counted")
@dataclass(frozen=True)
class Counted(Kind):
    """More than a share of the comparisons are so (module docstring); ``panel_value`` is the one panel value whose
    members are counted (``per_value``), or every one of them joined by ', '."""

    name: ClassVar[str] = "counted"
    panel_value: str
    count: Count

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        count = Count.of(finding)
        if count is None:
            return []
        if count.per_value:
            return [cls(value, count) for value in count.values]
        return [cls(", ".join(count.values), count)]

    @property
    def relation(self) -> Relation:
        return "counted"

    def named(self) -> tuple[str, ...]:
        return tuple(self.panel_value.split(", "))

    def ends(self) -> int:
        return 1  # a wrong PASS and a wrong FAIL each at most the end's error (module docstring)

    def sides(self, reading: Reading) -> list[tuple[str, str, Side, Side]]:
        """Every comparison of this bound: (its words, its metric, its two sides' cells and their seed noise)."""
        count, found = self.count, []
        for value in self.named():
            for metric in count.metrics or (reading.metric,):
                table, noise = reading.metric_table(metric)
                split = f" {metric}" if len(count.metrics) > 1 else ""
                for label, mine, theirs in count.compare:
                    cells = [table.where({**reading.finding.where, count.axis: region}).of_panel(reading.panel, value)
                             for region in (mine, theirs)]
                    a, b = ((c, noise.standard_errors(c)) for c in cells)
                    found.append((f"{value}{split} {label}", metric, a, b))
        return found

    def members(self, sides: list[tuple[str, str, Side, Side]], errors: Errors) -> list[Member]:
        """Every comparison decided at ``errors`` (each side of its lead at half of it)."""
        half = errors.halved()
        found = []
        for words, metric, a, b in sides:
            lead = _best(a, metric, half).minus(_best(b, metric, half))
            found.append(Member(words, lead, self.count.decide(lead)))
        return found

    def judge(self, reading: Reading) -> Check:
        count, e = self.count, reading.errors
        k = len(self.named()) * len(count.metrics or (reading.metric,)) * len(count.compare)
        m = count.needed(k)
        sides = self.sides(reading)
        to_hold = self.members(sides, e.scaled(1 / (k - m + 1)))
        to_fail = self.members(sides, e.scaled(1 / m))
        shown = sum(x.state == State.HOLDS for x in to_hold)
        possible = k - sum(x.state == State.FAILS for x in to_fail)
        means = sum(count.decide(_point(x.lead)) == State.HOLDS for x in to_hold if x.lead.value is not None)
        state = check_state(shown >= m, possible < m)
        number = Estimate(means / k, shown / k, possible / k, _seeds(to_hold), k)
        listed = "; ".join(f"{x.words} {_lead_text(x.lead, reading.metric)}{_state_word(x.state, y.state)}"
                           for x, y in zip(to_hold, to_fail, strict=True))
        detail = (f"{shown} of {k} comparisons shown so (each at 1/{k - m + 1} of the error), {possible} could be "
                  f"(those shown not so at 1/{m}), {means} on the means; lead {_WORDS[count.lead]} "
                  f"{point_text(count.margin, is_accuracy(reading.metric))}{unit(is_accuracy(reading.metric))} "
                  f"required in more than {_share_text(count.more_than)} of them, at least {m} of {k}: {listed}")
        return Check(self, number, state, bound=count.more_than, subject=self.subject(), percent=False, detail=detail,
                     open_because="too few comparisons decided to tell the count")

    def subject(self) -> str:
        return f"{self.panel_value} ({', '.join(label for label, _, _ in self.count.compare)} on {self.count.axis})"

    def contention(self, check: Check) -> pl.DataFrame | None:
        return None  # an adaptive budget asks no seeds for it: its members are bests of many regions

    def points_to_failing(self, check: Check) -> bool:
        value = check.estimate.value
        return True if value is None else value <= self.count.more_than

    def hopeless_bounds(self, check: Check) -> tuple[float, ...]:
        return ()

    def text(self, check: Check) -> str:
        return f"{check.subject}: {check.detail}: {check.state}"


def _best(side: Side, metric: str, errors: Errors) -> Estimate:
    """The best G of a side's cells with its interval, its ends as a finding's ``best`` reads them
    (:mod:`analysis.stats.intervals.statistics`): the end any cell could make wrong shared over the cells, the other
    at the whole error; no cell: no number, the metric's range."""
    cells, noise = side
    if cells.is_empty():
        return Estimate(None, *metric_range(metric))
    n, g = cells.values(Column.N, 0.0), cells.values(Column.G, 0.0)
    largest, m = not lower_is_better(metric), cells.height
    low, high = g_interval(cells, noise, errors, metric, (m, 1) if largest else (1, m))
    pick = np.max if largest else np.min
    run = n > 0
    value = float(pick(g[run])) if run.any() else None
    return Estimate(value, float(pick(low)), float(pick(high)), (int(n.min()), int(n.max())), m, reads="order",
                    largest=largest)


def _point(lead: Estimate) -> Estimate:
    """The lead at its value alone (how the seed means decide a member)."""
    value = lead.value if lead.value is not None else math.nan
    return Estimate(lead.value, value, value, lead.seeds, lead.cells)


def _seeds(members: list[Member]) -> tuple[int, int]:
    seeds = [x.lead.seeds for x in members if x.lead.value is not None]
    return (min(s[0] for s in seeds), max(s[1] for s in seeds)) if seeds else (0, 0)


def _lead_text(lead: Estimate, metric: str) -> str:
    percent = is_accuracy(metric)
    if lead.value is None or lead.parts and any(p.cells == 0 for p in lead.parts):
        return "(a side has no cell)"
    return f"{point_text(lead.value, percent)}{unit(percent)} {span_text(lead, points=True, percent=percent)}"


def _state_word(hold: State, fail: State) -> str:
    return ": so" if hold == State.HOLDS else ": not so" if fail == State.FAILS else ": open"


def _share_text(share: float) -> str:
    return f"{100 * share:.4g}%"
