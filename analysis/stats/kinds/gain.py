"""``gain``: a panel value's learning curve gains between a stated time and its last evaluation by an amount within a
band ("after the learning-rate drop at epoch 2500 performance increases a bit, by about 0.5%"): the finding's ``gain``
(panel value -> (least, most)) from its evaluation at ``gain_since`` (the last one at or before that time).

The gain is the seed mean at the last evaluation minus the seed mean at ``gain_since``; its interval the two
evaluations' intervals held together (:func:`analysis.stats.intervals.curves.curve_bounds`, the one interval of a
curve's point; each side at half the error, as a difference's two sides). The two evaluations are the same seeds, so
the gain's true spread is at most this (their noise shares the seeds): the interval is conservative. It **holds** when
the whole interval lies above ``least`` (strictly: "increases" with ``least`` 0 is no tie) and at most ``most``, and
**fails** when it lies wholly at or below ``least`` or wholly above ``most``: a two-sided band, each bound one end of
the error. Read per seed (``seeds_show``) a seed shows it when its own gain lies in the band.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from analysis.stats.intervals.curves import Curve, curve_bounds, last_value
from analysis.stats.intervals.errors import Errors
from analysis.stats.intervals.estimate import Estimate
from analysis.stats.kinds.base import KINDS, Check, Kind, Reading, Relation
from analysis.stats.kinds.per_seed import ShownBy
from analysis.stats.kinds.text import point_text, span_text, unit
from analysis.stats.kinds.time_axis import CurvesOf, judged, read, seeds_text, when
from analysis.stats.kinds.time_kind import TimeKind
from analysis.stats.table import Column, Floats
from search_spaces.finding import Finding


def value_at(points: Curve, since: float, metric: str, errors: Errors) -> Estimate:
    """A curve's seed mean at its last evaluation at or before ``since`` with its interval (one fixed evaluation: each
    end at its whole error); no value where the curve has no evaluation that early."""
    times = points.times()
    before = np.flatnonzero(times <= since)
    if points.is_empty() or not before.size:
        return Estimate(None, -math.inf, math.inf)
    i = int(before[-1])
    low, high = curve_bounds(points, metric, errors, union=False)
    n = int(points.points.values(Column.N, 0.0)[i])
    return Estimate(float(points.points.values(Column.G, 0.0)[i]), float(low[i]), float(high[i]), (n, n), cells=1)


def gain_of(points: Curve, since: float, metric: str, errors: Errors) -> Estimate:
    """The curve's last seed mean minus its seed mean at ``since`` (:func:`value_at`), each at half ``errors``."""
    half = errors.halved()
    before, last = value_at(points, since, metric, half), last_value(points, metric, half)
    gained = last.minus(before)  # one curve, two of its evaluations: one cell
    return Estimate(gained.value, gained.low, gained.high, gained.seeds, cells=1)


@KINDS.register("gain")
@dataclass(frozen=True)
class Gain(TimeKind):
    """The curve's gain from ``gain_since`` to its last evaluation within ``(least, most]`` (module docstring)."""

    name: ClassVar[str] = "gain"
    panel_value: str
    least: float
    most: float

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        return [cls(value, least, most) for value, (least, most) in finding.gain.items()]

    @property
    def relation(self) -> Relation:
        return "gain"

    def ends(self) -> int:
        return 2  # the band's two bounds

    def on_curves(self, curves_of: CurvesOf, reading: Reading, errors: Errors) -> Check:
        f, pct = reading.finding, reading.percent
        since = float(f.gain_since or 0.0)
        points, at = curves_of(self.panel_value, f.where, errors)
        e = read(points, lambda c: gain_of(c, since, reading.metric, at))
        state = judged(points, *self.decide(e))
        band = f"above {point_text(self.least, pct)} and at most {point_text(self.most, pct)}{unit(pct)}"
        shown = f"{point_text(e.value, pct)}{unit(pct)}" if e.value is not None else "no value"
        return Check(self, e, state, bound=self.most, percent=pct,
                     detail=f"gains {shown} {span_text(e, points=True, percent=pct)} ({seeds_text(e)}) from "
                            f"{when(since, f.time)} to its last evaluation, required {band}")

    def decide(self, e: Estimate) -> tuple[bool, bool]:
        """Whether the gain's interval holds the band (wholly above ``least``, at most ``most``) and whether it fails
        it (wholly at or below ``least``, or wholly above ``most``); a curve with no evaluation at ``gain_since``:
        neither."""
        if e.value is None:
            return False, False
        return self.least < e.low and e.high <= self.most, e.high <= self.least or e.low > self.most

    def shown_by(self, reading: Reading) -> ShownBy:
        since = float(reading.finding.gain_since or 0.0)

        def shown(times: Floats, values: Floats) -> bool:
            before = np.flatnonzero(times <= since)
            return bool(before.size) and self.least < float(values[-1] - values[before[-1]]) <= self.most
        return shown

    def threshold(self, check: Check) -> float | None:
        return None

    def points_to_failing(self, check: Check) -> bool:
        value = check.estimate.value
        return True if value is None else not self.least < value <= self.most

