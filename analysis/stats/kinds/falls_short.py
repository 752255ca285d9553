"""``falls_short``: every row of a region falls short of a level in at least one panel value ("NDR is the only row at
1.00 in all four columns": every other row is below it somewhere).

A finding states it under ``kinds`` as ``{"falls_short": {panel value: level, ...}}``; its ``where`` names one column
whose values are the rows (``where={"model": ("LSTM", "Transformer")}``). One bound per row: the row's number (the
finding's statistic over its cells in ``where``) in each panel value named, and the smallest of them below that panel
value's level. With the finding's own ``above`` on another row in every panel value (a finding of its own), that is
"the only one at the level everywhere".

Its interval is the smallest of the panel values' intervals, end by end: the row is shown short when some panel
value's upper end lies below its level, and shown not short when every lower end reaches its level. A wrong "short"
needs one of the k panel values' upper ends wrong (k ends, each at ``alpha / ends``: :meth:`FallsShort.ends` is k);
a wrong "not short" needs the lower end of the panel value where the row truly falls short wrong (one end). Rows
are joined as every bound of a finding is: the finding passes when every row is shown short.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import polars as pl

from analysis.stats.intervals.estimate import Estimate
from analysis.stats.kinds.base import KINDS, Check, Kind, Reading, Relation, State, check_state
from analysis.stats.kinds.text import number_text, percent_text
from analysis.stats.metric import metric_range
from search_spaces.finding import Finding

ALLOWED = ("a mapping panel value -> a finite level, with a finding whose where names one column by a tuple of values "
           "(the rows)")


@KINDS.register("falls_short")
@dataclass(frozen=True)
class FallsShort(Kind):
    """Row ``panel_value`` (a value of ``column``) is below ``levels[p]`` in at least one panel value p: **holds** when
    some panel value's interval lies wholly below its level, **fails** when every panel value's interval reaches its
    level, else undecided. A row without any cell fails."""

    name: ClassVar[str] = "falls_short"
    #: the row in words (a value of ``column``; not a panel value: :meth:`named` gives the panel values it reads)
    panel_value: str
    column: str
    levels: tuple[tuple[str, float], ...]
    #: the row as the grid holds it (a number stays a number)
    value: Any = None

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        """One bound per value of the finding's one ``where`` column (ValueError in one line for anything else)."""
        if cls.name not in finding.kinds:
            return []
        argument = finding.kinds[cls.name]
        levels = _levels(argument)
        if levels is None:
            raise ValueError(f"invalid falls_short of finding {finding.description!r}: {argument!r}; "
                             f"allowed: {ALLOWED}")
        rows = [(c, spec) for c, spec in finding.where.items() if isinstance(spec, tuple)]
        if len(finding.where) != 1 or len(rows) != 1:
            raise ValueError(f"invalid where of finding {finding.description!r} with falls_short: {finding.where!r}; "
                             f"allowed: one column with a tuple of values (the rows that each fall short)")
        column, values = rows[0]
        return [cls(str(v), column, levels, v) for v in values]

    @property
    def relation(self) -> Relation:
        return "falls_short"

    def named(self) -> tuple[str, ...]:
        """The panel values the bound reads."""
        return tuple(p for p, _ in self.levels)

    def ends(self) -> int:
        return len(self.levels)  # a wrong PASS: any one panel value's upper end wrongly below its level

    def judge(self, reading: Reading) -> Check:
        region: Mapping[str, Any] = {self.column: (self.value,)}
        numbers = [(p, reading.number(p, region), level) for p, level in self.levels]
        ran = [(p, e, level) for p, e, level in numbers if e.cells]
        if not ran:
            return Check(self, Estimate(None, *metric_range(reading.metric)), State.FAILS, bound=self.levels[0][1],
                         subject=f"{self.panel_value} (no cell)", percent=reading.percent)
        # shown: the panel value whose upper end lies furthest below its level (the one that decides a PASS)
        panel, e, level = min(ran, key=lambda found: found[1].high - found[2])
        holds = any(x.high < t for _, x, t in ran)
        fails = len(ran) == len(numbers) and all(x.low >= t for _, x, t in ran)

        def shorts() -> pl.DataFrame | None:  # the rows' cells short of seeds, when a budget asks
            found = [s for s in (x.short_cells() for _, x, _ in ran) if s is not None and s.height]
            return pl.concat(found, how="diagonal_relaxed") if found else None

        e = Estimate(e.value, e.low, e.high, (min(x.seeds[0] for _, x, _ in ran), max(x.seeds[1] for _, x, _ in ran)),
                     sum(x.cells for _, x, _ in ran), sum(x.not_run for _, x, _ in ran),
                     short=shorts, reads="order", largest=False,
                     projected=e.projected)
        return Check(self, e, check_state(holds, fails), bound=level, subject=f"{self.panel_value} at {panel}",
                     percent=reading.percent)

    def contention(self, check: Check) -> pl.DataFrame | None:
        """The row's cells whose intervals hold their level (a worst against a threshold)."""
        return None if check.bound is None else check.estimate.contention(check.bound)

    def points_to_failing(self, check: Check) -> bool:
        value = check.estimate.value
        return True if value is None or check.bound is None else value >= check.bound

    def text(self, check: Check) -> str:
        levels = ", ".join(f"{p} {percent_text(t, check.percent)}" for p, t in self.levels)
        return (f"{check.subject}: {number_text(check.estimate, check.percent)}, required below the level in at least "
                f"one of {levels}: {check.state}")


def _levels(argument: Any) -> tuple[tuple[str, float], ...] | None:
    """The argument as (panel value, level) pairs; None when it is not a non-empty mapping to finite numbers."""
    if not isinstance(argument, Mapping) or not argument:
        return None
    pairs = []
    for panel, level in argument.items():
        if isinstance(level, bool) or not isinstance(level, int | float) or not math.isfinite(level):
            return None
        pairs.append((str(panel), float(level)))
    return tuple(pairs)
