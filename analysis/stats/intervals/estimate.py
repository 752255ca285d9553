"""A statistic over some cells with its interval (:class:`Estimate`), and which of its cells more seeds could move.

:meth:`Estimate.contention` names the cells whose further seeds could decide a bound: for a best or worst against a
threshold, the cells whose interval holds the threshold (a cell wholly below or above it cannot change the outcome);
compared with another statistic, the leader and its close rivals (every cell whose interval reaches the best lower
end); for a share, the cells whose interval holds the level; for a mean or a spread, every cell short of seeds. An
adaptive budget gives seeds to these.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, cast

import polars as pl

from analysis.stats.table import rows

#: How a statistic's cells decide it: "order" (a best or worst), "level" (a share of cells reaching a level) or
#: "all" (a mean or a spread: every cell).
Reads = Literal["order", "level", "all"]


@dataclass(frozen=True)
class Estimate:
    """A statistic over some cells: its value on the data, its interval and the seeds behind it."""

    value: float | None  # None: no cell has rows yet
    low: float
    high: float
    seeds: tuple[int, int] = (0, 0)  # the fewest and the most seeds of the cells that make it (0: a cell not run)
    cells: int = 0
    not_run: int = 0  # of those cells, the ones without any seed yet
    #: per cell short of seeds: its keys, ``g``, and where the statistic reads cells one by one its interval
    #: (``low``, ``high``) and what every seed could make of it (``plow``, ``phigh``); or a function that builds that
    #: frame, called when :meth:`short_cells` is first asked (most estimates never are: building it costs more than
    #: the interval)
    short: pl.DataFrame | Callable[[], pl.DataFrame | None] | None = field(default=None, compare=False, repr=False)
    reads: Reads = "all"
    largest: bool = True  # an order statistic: the largest (a best of an accuracy) or the smallest
    level: float = 0.0  # a share: the level its cells reach
    parts: tuple[Estimate, ...] = field(default=(), compare=False, repr=False)  # a difference: its two sides
    #: (low, high) were every cell run at every seed with the spread it has (one seed: its prior's): what more seeds
    #: can at best make of the interval (:meth:`analysis.stats.kinds.base.Check.hopeless`)
    projected: tuple[float, float] | None = field(default=None, compare=False, repr=False)

    def minus(self, other: Estimate) -> Estimate:
        """The difference of two statistics (their intervals held together). A difference of two bests (worsts) moves
        as they do when seeds come in: it reads as an order statistic too (``reads``), else as every cell."""
        value = None if self.value is None or other.value is None else self.value - other.value
        projected = None if self.projected is None or other.projected is None else \
            (self.projected[0] - other.projected[1], self.projected[1] - other.projected[0])
        reads: Reads = "order" if self.reads == other.reads == "order" else "all"
        return Estimate(value, self.low - other.high, self.high - other.low,
                        (min(self.seeds[0], other.seeds[0]), max(self.seeds[1], other.seeds[1])),
                        self.cells + other.cells, self.not_run + other.not_run, parts=(self, other), reads=reads,
                        projected=projected)

    def short_cells(self) -> pl.DataFrame | None:
        """:attr:`short` as a frame (built on the first call and kept)."""
        if callable(self.short):
            object.__setattr__(self, "short", self.short())  # frozen: a cache of what the field already stands for
        return cast("pl.DataFrame | None", self.short)

    def contention(self, threshold: float | None = None) -> pl.DataFrame | None:
        """The cells short of seeds whose further seeds could decide a bound at ``threshold`` (module docstring;
        None: compared with another statistic; a share's threshold is the share the bound asks for)."""
        if self.parts:
            found = [f for f in (p.contention() for p in self.parts) if f is not None and f.height]
            return pl.concat(found, how="diagonal_relaxed") if found else None
        short = self.short_cells()
        if short is None or short.is_empty():
            return None
        if self.reads == "level":
            chosen = self._share_cells(short, threshold)
        elif self.reads == "order" and threshold is not None:
            chosen = self._order_cells(short, threshold)
        elif self.reads == "order":  # may still be the best (worst)
            chosen = rows(short, short.get_column("high") >= self.low if self.largest else
                          short.get_column("low") <= self.high)
        else:
            chosen = short
        return pl.DataFrame([c for c in chosen.get_columns() if c.name not in ("low", "high", "plow", "phigh", "g")])

    def _order_cells(self, short: pl.DataFrame, threshold: float) -> pl.DataFrame:
        """A best against a threshold: if a cell holding the threshold already points past it, one cell - of those,
        the one whose interval with every seed would reach furthest past it (it alone can decide: proving the best is
        past it, or by its seeds showing it is not); else every cell holding it (all of them must be shown on their
        side)."""
        holding = (short.get_column("low") < threshold) & (short.get_column("high") >= threshold)
        g = short.get_column("g")
        past = holding & (g >= threshold if self.largest else g <= threshold)
        if not past.any():
            return rows(short, holding)
        reach = "plow" if "plow" in short.columns else "low"
        return rows(short, past).sort(reach if self.largest else reach.replace("low", "high"),
                                      descending=self.largest).head(1)

    def _share_cells(self, short: pl.DataFrame, share: float | None) -> pl.DataFrame:
        """A share of cells reaching the level: of the cells whose interval holds the level, as many as the bound
        still needs on the side the numbers point to, the surest first (all of them without a bound)."""
        level = self.level
        holding = rows(short, (short.get_column("low") < level) & (short.get_column("high") >= level))
        if share is None or holding.is_empty() or self.value is None:
            return holding
        target = math.ceil(share * self.cells - 1e-9)
        g = holding.get_column("g")
        if self.value >= share:  # confirm cells above the level until the share holds
            sure = round(self.low * self.cells)
            return rows(holding, g >= level).sort("g", descending=True).head(max(target - sure, 1))
        possible = round(self.high * self.cells)  # show cells below it until the share cannot be reached
        return rows(holding, g < level).sort("g").head(max(possible - target + 1, 1))

    def seeds_text(self) -> str:
        """``3 seeds`` or ``2-5 seeds`` (``a cell not run`` when one has none)."""
        few, many = self.seeds
        if few == 0:
            return "a cell not run yet"
        return f"{few} seed{'s' if few != 1 else ''}" if few == many else f"{few}-{many} seeds"
