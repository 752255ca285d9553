"""A finding's number with its interval: a statistic of G over the cells of a region, from the cells' intervals.

Every cell gets an interval of its G (:mod:`analysis.stats.seed_noise`; a cell not run yet spans the metric's
range). The statistics are monotone in the cells' G, so the intervals of all cells holding together give an
interval of the statistic:

* ``best`` / ``worst`` - the best (worst) of the cells' lower ends to the best (worst) of their upper ends;
* ``share`` of cells with G >= ``level`` - the share whose lower end reaches the level to the share whose upper
  end does (the grid is enumerated, not sampled: the uncertainty is only in the cells near the level);
* ``mean`` - the mean G plus or minus a t quantile times the standard error of the mean of the cells' G (one
  interval, not one per cell), cells not run yet at the ends of the range;
* ``spread`` - the mean over cells of B - R (best seed minus worst) plus or minus a t quantile times its standard
  error over the cells; a cell with fewer seeds than the study's may still widen (a range only grows with seeds).

:class:`Estimate` also names the cells whose further seeds could decide a bound (:meth:`Estimate.contention`): for a
best or worst against a threshold, the cells whose interval holds the threshold (a cell wholly below or above it
cannot change the outcome); compared with another statistic, the leader and its close rivals (every cell whose
interval reaches the best lower end); for a share, the cells whose interval holds the level; for a mean or a spread,
every cell short of seeds. An adaptive budget gives seeds to these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import polars as pl

from analysis.stats.finding_cells import VALUES, lower_is_better, metric_range
from analysis.stats.seed_noise import NoiseModel, quantile


@dataclass(frozen=True)
class Estimate:
    """A statistic over some cells: its value on the data, its interval and the seeds behind it."""

    value: float | None  # None: no cell has rows yet
    low: float
    high: float
    seeds: tuple[int, int] = (0, 0)  # the fewest and the most seeds of the cells that make it (0: a cell not run)
    cells: int = 0
    not_run: int = 0  # of those cells, the ones without any seed yet
    #: per cell short of seeds: its configuration columns and its interval (``low``, ``high``)
    short: pl.DataFrame | None = field(default=None, compare=False, repr=False)
    #: how the cells decide it: "order" (a best or worst: ``largest`` says which end), "level" (a share of cells
    #: reaching ``level``) or "all" (a mean or a spread: every cell)
    kind: str = "all"
    largest: bool = True
    level: float = 0.0
    parts: tuple[Estimate, ...] = field(default=(), compare=False, repr=False)  # a difference: its two sides

    def minus(self, other: Estimate) -> Estimate:
        """The difference of two statistics (their intervals held together)."""
        value = None if self.value is None or other.value is None else self.value - other.value
        return Estimate(value, self.low - other.high, self.high - other.low,
                        (min(self.seeds[0], other.seeds[0]), max(self.seeds[1], other.seeds[1])),
                        self.cells + other.cells, self.not_run + other.not_run, parts=(self, other))

    def contention(self, threshold: float | None = None) -> pl.DataFrame | None:
        """The cells short of seeds whose further seeds could decide a bound at ``threshold`` (module docstring;
        None: compared with another statistic; a share's threshold is the share the bound asks for)."""
        if self.parts:
            found = [f for f in (p.contention() for p in self.parts) if f is not None and f.height]
            return pl.concat(found, how="diagonal_relaxed") if found else None
        if self.short is None or self.short.is_empty():
            return None
        if self.kind == "level":
            chosen = self._share_cells(threshold)
        elif self.kind == "order" and threshold is not None:
            chosen = self._order_cells(threshold)
        elif self.kind == "order":  # may still be the best (worst)
            chosen = self.short.filter(pl.col("high") >= self.low if self.largest else pl.col("low") <= self.high)
        else:
            chosen = self.short
        return chosen.drop("low", "high", "g", strict=False)

    def _order_cells(self, threshold: float) -> pl.DataFrame:
        """A best against a threshold: if a cell holding the threshold already points past it, that one cell (it
        alone can decide: proving the best is past it, or by its seeds showing it is not); else every cell holding it
        (all of them must be shown on their side)."""
        holding = self.short.filter((pl.col("low") < threshold) & (pl.col("high") >= threshold))
        past = holding.filter(pl.col("g") >= threshold if self.largest else pl.col("g") <= threshold)
        if past.is_empty():
            return holding
        return past.sort("g", descending=self.largest).head(1)

    def _share_cells(self, share: float | None) -> pl.DataFrame:
        """A share of cells reaching the level: of the cells whose interval holds the level, as many as the bound
        still needs on the side the numbers point to, the surest first (all of them without a bound)."""
        level = self.level
        holding = self.short.filter((pl.col("low") < level) & (pl.col("high") >= level))
        if share is None or holding.is_empty() or self.value is None:
            return holding
        target = math.ceil(share * self.cells - 1e-9)
        if self.value >= share:  # confirm cells above the level until the share holds
            sure = round(self.low * self.cells)
            return holding.filter(pl.col("g") >= level).sort("g", descending=True).head(max(target - sure, 1))
        possible = round(self.high * self.cells)  # show cells below it until the share cannot be reached
        return holding.filter(pl.col("g") < level).sort("g").head(max(possible - target + 1, 1))

    def seeds_text(self) -> str:
        """``3 seeds`` or ``2-5 seeds`` (``a cell not run`` when one has none)."""
        few, many = self.seeds
        if few == 0:
            return "a cell not run yet"
        return f"{few} seed{'s' if few != 1 else ''}" if few == many else f"{few}-{many} seeds"


def intervals_used(statistic: str, cells: int) -> int:
    """How many intervals a statistic over ``cells`` cells reads (its share of a finding's error budget)."""
    return 1 if statistic in ("mean", "spread") else cells


def estimate(cells: pl.DataFrame, statistic: str, level: float, metric: str, noise: NoiseModel, alpha: float,
             max_seeds: int) -> Estimate:
    """The statistic over ``cells`` (a cell table, :mod:`analysis.stats.finding_cells`) with its interval, each
    cell's (or the mean's) at two-sided level ``1 - alpha``."""
    found = _estimate(cells, statistic, level, metric, noise, alpha, max_seeds)
    return replace(found, not_run=int((cells.get_column("n") == 0).sum()) if cells.height else 0)


def _estimate(cells: pl.DataFrame, statistic: str, level: float, metric: str, noise: NoiseModel, alpha: float,
              max_seeds: int) -> Estimate:
    lo, hi = metric_range(metric)
    if cells.is_empty():
        return Estimate(None, lo, hi)
    n = cells.get_column("n").to_numpy().astype(float)
    run = n > 0
    seeds = (int(n.min()), int(n.max()))
    keys = [c for c in cells.columns if c not in VALUES]
    if statistic == "spread":
        return _spread(cells, run, level, (lo, hi), alpha, (seeds, max_seeds), _short(cells, keys, max_seeds))
    g = np.nan_to_num(cells.get_column("g").to_numpy().astype(float), nan=0.0)
    se, df = noise.standard_errors(g, cells.get_column("sd").to_numpy(), n)
    if statistic == "mean":
        return _mean(g, se, df, run, (lo, hi), alpha, seeds, _short(cells, keys, max_seeds))
    with np.errstate(invalid="ignore"):
        half = np.where(run, quantile(alpha, df) * se, np.inf)
    low = np.where(run, np.clip(g - half, lo, hi), lo)
    high = np.where(run, np.clip(g + half, lo, hi), hi)
    short = _short(cells.with_columns(low=pl.Series(low), high=pl.Series(high)), [*keys, "g", "low", "high"],
                   max_seeds)
    if statistic == "share":
        value = float((g[run] >= level).mean()) if run.any() else None
        return Estimate(value, float((low >= level).mean()), float((high >= level).mean()), seeds, len(n),
                        short=short, kind="level", level=level)
    largest = (statistic == "best") != lower_is_better(metric)
    pick = np.max if largest else np.min
    value = float(pick(g[run])) if run.any() else None
    attains = seeds if value is None else _seeds_of(n, g, run, value)
    return Estimate(value, float(pick(low)), float(pick(high)), attains, len(n), short=short, kind="order",
                    largest=largest)


def _short(cells: pl.DataFrame, columns: list[str], max_seeds: int) -> pl.DataFrame:
    """The given columns of the cells that can still get seeds."""
    return cells.filter(pl.col("n") < max_seeds).select(columns)


def _seeds_of(n: np.ndarray, g: np.ndarray, run: np.ndarray, value: float) -> tuple[int, int]:
    """The seeds of the cells that attain ``value``."""
    at = n[run & (g == value)]
    return (int(at.min()), int(at.max())) if at.size else (0, 0)


def _mean(g: np.ndarray, se: np.ndarray, df: np.ndarray, run: np.ndarray, bounds: tuple[float, float], alpha: float,
          seeds: tuple[int, int], short: pl.DataFrame) -> Estimate:
    """The mean G of the cells: a t interval of the mean of the cells run, cells not run at the range's ends."""
    lo, hi = bounds
    k, missing = len(g), int((~run).sum())
    if not run.any():
        return Estimate(None, lo, hi, seeds, k, short=short)
    total, error = float(g[run].sum()), math.sqrt(float((se[run] ** 2).sum()))
    q = float(quantile(alpha, float(df[run].min())))
    low = (total - q * error + missing * lo) / k
    high = (total + q * error + missing * hi) / k
    return Estimate(total / int(run.sum()), max(low, lo), min(high, hi), seeds, k, short=short)


def _spread(cells: pl.DataFrame, run: np.ndarray, level: float, bounds: tuple[float, float], alpha: float,
            seeds_of: tuple[tuple[int, int], int], short: pl.DataFrame) -> Estimate:
    """The mean of B - R over the cells whose best seed reaches ``level``, with a t interval over those cells; a
    cell short of seeds may still widen, a cell not run may still count."""
    lo, hi = bounds
    (seeds, max_seeds), k = seeds_of, len(run)
    if not run.all():
        learned = cells.filter(pl.col("n") > 0)
        value = _mean_spread(learned, level)
        return Estimate(value, lo, hi, seeds, k, short=short)
    learned = cells.filter(pl.col("b") >= level)
    v = (learned.get_column("b") - learned.get_column("r")).fill_null(0.0).to_numpy().astype(float)
    if v.size == 0:
        return Estimate(None, lo, hi, seeds, k, short=short)
    half = float(quantile(alpha, v.size - 1)) * float(v.std(ddof=1)) / math.sqrt(v.size) if v.size > 1 else 0.0
    top = np.where((learned.get_column("n") < max_seeds).to_numpy(), hi, v)  # more seeds may widen B - R
    return Estimate(float(v.mean()), max(float(v.mean()) - half, lo), min(float(top.mean()) + half, hi), seeds, k,
                    short=short)


def _mean_spread(cells: pl.DataFrame, level: float) -> float | None:
    learned = cells.filter(pl.col("b") >= level)
    return float((learned.get_column("b") - learned.get_column("r")).fill_null(0.0).mean()) if learned.height else None
