"""A finding kind of your own, from outside attention-studies: ``median_at_least`` - over a region's cells of a panel
value, the median G at least a threshold ("most settings of softmax learn it", where a best would ask for one).

Importing this module registers the kind (docs/extending.md, "A finding kind of your own"); a finding then states it
under ``kinds``::

    Finding(description="softmax learns at most settings", kinds={"median_at_least": {"softmax": 0.5}})

Its interval comes from the project's one interval of a cell's G (:func:`analysis.stats.intervals.cell.g_interval`):
the median is monotone in the cells' G, so the median of their lower ends is a lower bound of the true median when
every lower end is - each taken at the end's error shared over the region's cells (Bonferroni) - and likewise above.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from analysis.stats.intervals.cell import g_interval
from analysis.stats.intervals.estimate import Estimate
from analysis.stats.kinds.base import KINDS, Check, Kind, Reading, State, check_state
from analysis.stats.kinds.text import number_text, percent_text
from analysis.stats.metric import metric_range
from analysis.stats.table import Column
from search_spaces.finding import Finding


@KINDS.register("median_at_least")
@dataclass(frozen=True)
class MedianAtLeast(Kind):
    """The median G of ``panel_value``'s cells in the finding's ``where`` at least ``limit``: **holds** when the
    median of the cells' lower ends reaches it, **fails** when the median of their upper ends stays below it."""

    name: ClassVar[str] = "median_at_least"
    panel_value: str
    limit: float

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        """Its argument: panel value -> threshold (``{"softmax": 0.5}``)."""
        argument = finding.kinds.get(cls.name, {})
        if not isinstance(argument, dict) or not all(isinstance(t, int | float) for t in argument.values()):
            raise ValueError(f"invalid median_at_least of finding {finding.description!r} {argument!r}; allowed: a "
                             "mapping panel value -> a number")
        return [cls(str(value), float(limit)) for value, limit in argument.items()]

    @property
    def relation(self) -> str:
        return self.name

    def ends(self) -> int:
        return 1  # a wrong PASS needs the lower end wrong, a wrong FAIL the upper: one end can fail it either way

    def judge(self, reading: Reading) -> Check:
        cells = reading.cells(self.panel_value, reading.finding.where)
        if cells.is_empty():
            return Check(self, Estimate(None, *metric_range(reading.metric)), State.FAILS, bound=self.limit,
                         percent=reading.percent)
        m = cells.height
        low, high = g_interval(cells, reading.noise.standard_errors(cells), reading.errors, reading.metric, (m, m))
        n = cells.values(Column.N, 0.0)
        median = float(np.median(cells.values(Column.G, 0.0)[n > 0])) if (n > 0).any() else None
        e = Estimate(median, float(np.median(low)), float(np.median(high)), (int(n.min()), int(n.max())), m)
        return Check(self, e, check_state(e.low >= self.limit, e.high < self.limit), bound=self.limit,
                     percent=reading.percent)

    def text(self, check: Check) -> str:
        return (f"{self.panel_value} (median of {check.estimate.cells} cells): "
                f"{number_text(check.estimate, check.percent)}, required >= {percent_text(self.limit, check.percent)}"
                f": {check.state}")
