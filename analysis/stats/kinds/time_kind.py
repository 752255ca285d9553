"""The base of the kinds on the time axis (:mod:`analysis.stats.kinds.time_axis` says what they read)."""

from __future__ import annotations

from abc import abstractmethod

import polars as pl

from analysis.stats.intervals.errors import Errors
from analysis.stats.kinds.any_cell import some_cell
from analysis.stats.kinds.base import Check, Kind, Reading
from analysis.stats.kinds.per_seed import ShownBy, seeds_showing
from analysis.stats.kinds.time_axis import CurvesOf, best_curves


class TimeKind(Kind):
    """A bound on the time axis: read on the best cell's curves (:func:`best_curves`) or, with the finding's
    ``cell="any"``, on each cell of its region (:func:`analysis.stats.kinds.any_cell.some_cell`); with its
    ``seeds_show``, on each seed's own curve (:func:`analysis.stats.kinds.per_seed.seeds_showing`)."""

    def judge(self, reading: Reading) -> Check:
        if reading.finding.seeds_show is not None:
            return seeds_showing(self, self.shown_by(reading), reading)
        if reading.finding.cell == "any":
            return some_cell(self.panel_value, self.on_curves, reading)
        return self.on_curves(lambda value, region, at: best_curves(reading.cells(value, region), reading, at),
                              reading, reading.errors)

    @abstractmethod
    def on_curves(self, curves_of: CurvesOf, reading: Reading, errors: Errors) -> Check:
        """This bound on the curves ``curves_of`` gives, each end at its share of ``errors``."""

    def shown_by(self, reading: Reading) -> ShownBy:
        """Whether one seed's own curve shows this bound's pattern (the finding's ``seeds_show``:
        :mod:`analysis.stats.kinds.per_seed`); a kind that cannot be read per seed says so in one line."""
        raise ValueError(f"{self.name} is not read per seed (seeds_show): it compares mean curves")

    def contention(self, check: Check) -> pl.DataFrame | None:
        """None: an adaptive budget asks no seeds for a bound on the time axis."""
        return None

    def text(self, check: Check) -> str:
        return f"{check.subject or self.panel_value}: {check.detail}: {check.state}"
