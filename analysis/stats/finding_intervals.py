"""A finding's number with its interval: a statistic of G over the cells of a region, from the cells' intervals.

Every cell gets an interval of its G (:mod:`analysis.stats.seed_noise`; a cell of one seed or none spans the metric's
range: it decides nothing). G is the best evaluation's seed mean, so at few seeds it reads high (a loss: low): the
end it may have inflated is taken from G less its ``lift`` (how far G lies above the mean of the cell's best
evaluations), the other from G. The statistics are monotone in the cells' G, so the cells' bounds give the statistic's.
Each end of an interval is a one-sided bound at its own error (:class:`Errors`, from the finding's share of its error
budget), and an end that any cell could make wrong shares that error among the cells, while an end that only one
fixed cell can make wrong does not:

* ``best`` (the largest G) - its lower end is the largest of the cells' lower ends, wrong if *any* cell's is, so
  each cell's lower end is taken at the error over the region's cells (Bonferroni); its upper end is the largest of
  the cells' upper ends, wrong only if the truly best cell's is, so each cell's upper end is taken at the full error
  (an intersection-union bound: no share over cells). ``worst`` the other way round; a loss's best is its lowest;
* ``share`` of cells with G >= ``level`` - the share whose lower end reaches the level to the share whose upper end
  does, both ends shared over the cells (the grid is enumerated, not sampled: the uncertainty is in the cells near
  the level);
* ``mean`` - the mean G plus or minus a t quantile times the standard error of the mean of the cells' G (one
  interval, not one per cell; degrees of freedom by Welch-Satterthwaite), cells of one seed or none at the ends of
  the range;
* ``spread`` - the mean over cells of the mean absolute difference between two seeds' best values (Gini's mean
  difference: an unbiased estimate from any two seeds, five seeds' best-minus-worst range is about twice it), over the
  cells whose G reaches ``level`` (G, not "some seed": which seeds happen to be drawn must not decide which cells
  count), plus or minus a t quantile times its standard error (each cell's variance its jackknife estimate; where the
  data gives none, the bound ``4 sigma² / n``, ``sigma`` its seed noise); a cell counts from
  :data:`SPREAD_SEEDS` seeds, one of fewer with 0 at the lower end and the range's width at the upper.

A cell's interval spends its share of the error by its seed count (an adaptive budget, :class:`Errors`), a mean's or a
spread's by the look. :class:`Estimate` also names the cells whose further seeds could decide a bound
(:meth:`Estimate.contention`): for a best or worst against a threshold, the cells whose interval holds the threshold
(a cell wholly below or above it cannot change the outcome); compared with another statistic, the leader and its close
rivals (every cell whose interval reaches the best lower end); for a share, the cells whose interval holds the level;
for a mean or a spread, every cell short of seeds. An adaptive budget gives seeds to these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import polars as pl

from analysis.stats.finding_cells import VALUES, floats, lower_is_better, metric_range
from analysis.stats.seed_noise import NoiseModel, quantile
from search_spaces.record import StudyRecord


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
    #: (low, high) were every cell run at every seed with the spread it has (one seed: its prior's): what more seeds
    #: can at best make of the interval (:meth:`analysis.stats.finding_check.Check.hopeless`)
    projected: tuple[float, float] | None = field(default=None, compare=False, repr=False)

    def minus(self, other: Estimate) -> Estimate:
        """The difference of two statistics (their intervals held together)."""
        value = None if self.value is None or other.value is None else self.value - other.value
        projected = None if self.projected is None or other.projected is None else \
            (self.projected[0] - other.projected[1], self.projected[1] - other.projected[0])
        return Estimate(value, self.low - other.high, self.high - other.low,
                        (min(self.seeds[0], other.seeds[0]), max(self.seeds[1], other.seeds[1])),
                        self.cells + other.cells, self.not_run + other.not_run, parts=(self, other),
                        projected=projected)

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
        return chosen.drop("low", "high", "plow", "phigh", "g", strict=False)

    def _order_cells(self, threshold: float) -> pl.DataFrame:
        """A best against a threshold: if a cell holding the threshold already points past it, one cell - of those,
        the one whose interval with every seed would reach furthest past it (it alone can decide: proving the best is
        past it, or by its seeds showing it is not); else every cell holding it (all of them must be shown on their
        side)."""
        holding = self.short.filter((pl.col("low") < threshold) & (pl.col("high") >= threshold))
        past = holding.filter(pl.col("g") >= threshold if self.largest else pl.col("g") <= threshold)
        if past.is_empty():
            return holding
        reach = "plow" if "plow" in past.columns else "low"
        return past.sort(reach if self.largest else reach.replace("low", "high"), descending=self.largest).head(1)

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


@dataclass(frozen=True)
class Errors:
    """The one-sided error each end of a statistic's interval may have (``low``: that the lower end lies above the
    truth; ``high``: that the upper end lies below it), and how an adaptive budget spends it: a cell of ``n`` seeds
    uses ``share(n)`` of it, a mean or a spread (one interval over many cells) ``look`` of it."""

    low: float
    high: float
    #: per adaptive seed count (``first``, ``first + 1``, ... ``last``) its share: 1 for a fixed budget
    shares: tuple[float, ...] = (1.0,)
    first: int = 1
    look: float = 1.0

    def share(self, n: np.ndarray) -> np.ndarray:
        """Per cell of ``n`` seeds the share of the error its interval spends (module docstring)."""
        index = np.clip(n.astype(int) - self.first, 0, len(self.shares) - 1)
        return np.asarray(self.shares)[index]

    def halved(self) -> Errors:
        """Each end at half the error (the two sides of a difference share it)."""
        return replace(self, low=self.low / 2, high=self.high / 2)


#: The power of the error-spending function of an adaptive budget: a cell's interval at its ``i``-th seed count of
#: ``L`` (``starting seeds``, ..., all seeds) spends alpha ((i / L)^2 - ((i - 1) / L)^2), a mean's or a spread's at
#: look ``i`` of ``L`` the same: little on the first (two seeds decide only what is far from a bound), most on the last.
SPENDING_POWER = 2


def spent(alpha: float, look: int, looks: int) -> float:
    """The share of the error budget ``alpha`` that the ``look``-th of ``looks`` spends (all of it with one look)."""
    return alpha * ((look / looks) ** SPENDING_POWER - ((look - 1) / looks) ** SPENDING_POWER)


def error_budget(meta: StudyRecord, look: int, ends: int) -> Errors:
    """Each interval end's one-sided error in a finding whose checks have ``ends`` ends that can fail it (a level
    check two, any other one): ``alpha / ends``, alpha = 1 - confidence. A wrong PASS needs the one bound the truth
    breaks to be wrongly held (an end's error); a wrong FAIL needs any bound wrongly failed (the ends' errors summed):
    either way at most alpha. An adaptive budget spends it over the seed counts a cell goes through (a cell's
    interval is a function of its first seeds, whichever cells the earlier looks chose: docs/budget.md)."""
    alpha = (1.0 - meta.confidence) / max(ends, 1)
    if meta.looks == 1:
        return Errors(alpha, alpha)
    shares = tuple(spent(1.0, i, meta.looks) for i in range(1, meta.looks + 1))
    return Errors(alpha, alpha, shares, len(meta.starting_seeds), spent(1.0, look, meta.looks))


def estimate(cells: pl.DataFrame, statistic: str, level: float, metric: str, noise: NoiseModel, errors: Errors,
             max_seeds: int) -> Estimate:
    """The statistic over ``cells`` (a cell table, :mod:`analysis.stats.finding_cells`, annotated with its seed-noise
    prior) with its interval, each end at its error in ``errors`` (module docstring), and what every seed could make
    of it (:attr:`Estimate.projected`: every cell run at ``max_seeds`` with the spread it has)."""
    if cells.is_empty():
        return Estimate(None, *metric_range(metric))
    every_seed = cells.with_columns(pl.when(pl.col("n") >= 1).then(pl.lit(max_seeds)).otherwise(pl.col("n"))
                                    .cast(pl.Int64).alias("n"))
    now, then = (_estimate(c, statistic, level, metric, noise, errors) for c in (cells, every_seed))
    short = now.short
    if short is not None and then.short is not None and "low" in short.columns:
        short = short.with_columns(plow=then.short.get_column("low"), phigh=then.short.get_column("high"))
    if short is not None:
        short = short.filter(pl.col("n") < max_seeds).drop("n")
    return replace(now, short=short, not_run=int((cells.get_column("n") == 0).sum()), projected=(then.low, then.high))


def _estimate(cells: pl.DataFrame, statistic: str, level: float, metric: str, noise: NoiseModel,
              errors: Errors) -> Estimate:
    """The estimate, its ``short`` every cell that more seeds could move (its keys, ``n`` and, where the statistic
    reads cells one by one, ``g`` and its bounds ``low`` / ``high``)."""
    lo, hi = metric_range(metric)
    n = floats(cells, "n", 0.0)
    run = n > 0
    known = n >= 2  # one seed decides nothing
    seeds = (int(n.min()), int(n.max()))
    keys = [c for c in cells.columns if c not in VALUES]
    g, lift = floats(cells, "g", 0.0), floats(cells, "lift", 0.0)
    # G is the best evaluation of noisy ones: it may read high (a loss: low) by its lift, never the other way
    centres = {"low": g, "high": g + lift} if lower_is_better(metric) else {"low": g - lift, "high": g}
    se, df = noise.standard_errors(cells)
    if statistic == "spread":  # the cells in its region (or that may be) are the ones more seeds can move
        region = cells.filter(pl.col("n").lt(2) | pl.col("g").cast(pl.Float64).ge(level))
        return _spread(cells, (se, df), level, (lo, hi), errors, seeds, region.select(*keys, "n"))
    if statistic == "mean":
        return _mean(g, centres, (se, df), n, (lo, hi), errors, seeds, cells.select(*keys, "n"))
    share, m = errors.share(n), len(n)
    largest = statistic == "share" or (statistic == "best") != lower_is_better(metric)
    union = {"low": largest, "high": not largest or statistic == "share"}  # the ends any cell could make wrong
    low, high = (interval_ends(centres[end], se, df, known, errors, share, m, end, union[end], (lo, hi))
                 for end in ("low", "high"))
    short = cells.select(*keys, "g", "n").with_columns(low=pl.Series(low), high=pl.Series(high))
    if statistic == "share":
        value = float((g[run] >= level).mean()) if run.any() else None
        return Estimate(value, float((low >= level).mean()), float((high >= level).mean()), seeds, len(n),
                        short=short, kind="level", level=level)
    pick = np.max if largest else np.min
    value = float(pick(g[run])) if run.any() else None
    attains = seeds if value is None else _seeds_of(n, g, run, value)
    return Estimate(value, float(pick(low)), float(pick(high)), attains, len(n), short=short, kind="order",
                    largest=largest)


def interval_ends(g: np.ndarray, se: np.ndarray, df: np.ndarray, known: np.ndarray, errors: Errors,
                  share: np.ndarray, cells: int, end: str, union: bool, bounds: tuple[float, float]) -> np.ndarray:
    """Every cell's lower (``end`` "low") or upper bound around ``g`` (its G, less its lift at the end it may have
    inflated) at the end's error, shared over the ``cells`` when ``union``; a cell of one seed or none at the range's
    end."""
    alpha = getattr(errors, end) * share / (cells if union else 1)
    with np.errstate(invalid="ignore"):
        half = np.where(known, quantile(alpha, df) * se, np.inf)
    lo, hi = bounds
    if end == "low":
        return np.where(known, np.clip(g - half, lo, hi), lo)
    return np.where(known, np.clip(g + half, lo, hi), hi)


def plausible_best(cells: pl.DataFrame, metric: str, noise: NoiseModel, errors: Errors) -> pl.DataFrame:
    """The cells of ``cells`` (all run) that may be the truly best (a loss: lowest): those whose upper end reaches
    the best's lower end. The truly best is left out only if its own upper end or some cell's lower end is wrong:
    at most ``errors.low + errors.high`` (lower ends shared over the cells, as a best's)."""
    if cells.height <= 1:
        return cells
    e = _estimate(cells, "best", 0.0, metric, noise, errors)
    assert e.short is not None
    low, high = e.short.get_column("low").to_numpy(), e.short.get_column("high").to_numpy()
    keep = low <= e.high if lower_is_better(metric) else high >= e.low
    return cells.filter(pl.Series(keep))


def _seeds_of(n: np.ndarray, g: np.ndarray, run: np.ndarray, value: float) -> tuple[int, int]:
    """The seeds of the cells that attain ``value``."""
    at = n[run & (g == value)]
    return (int(at.min()), int(at.max())) if at.size else (0, 0)


def _mean(g: np.ndarray, centres: dict[str, np.ndarray], noise: tuple[np.ndarray, np.ndarray], n: np.ndarray,
          bounds: tuple[float, float], errors: Errors, seeds: tuple[int, int], short: pl.DataFrame) -> Estimate:
    """The mean G of the cells (the value: of the cells run): a t interval of the mean of the cells with two seeds or
    more (each end around the cells' G less their lift where it may have inflated them), the others at the range's
    ends."""
    lo, hi = bounds
    se, df = noise
    known, k = n >= 2, len(g)
    value = float(g[n > 0].mean()) if (n > 0).any() else None
    if not known.any():
        return Estimate(value, lo, hi, seeds, k, short=short)
    missing, dof = int((~known).sum()), satterthwaite(se[known] ** 2, df[known])
    error = math.sqrt(float((se[known] ** 2).sum()))
    low = (float(centres["low"][known].sum()) - float(quantile(errors.low * errors.look, dof)) * error
           + missing * lo) / k
    high = (float(centres["high"][known].sum()) + float(quantile(errors.high * errors.look, dof)) * error
            + missing * hi) / k
    return Estimate(value, max(low, lo), min(high, hi), seeds, k, short=short)


def satterthwaite(variances: np.ndarray, df: np.ndarray) -> float:
    """The degrees of freedom of a sum of independent variance estimates (Welch-Satterthwaite), at least the fewest
    of its parts'."""
    top, bottom = float(variances.sum()) ** 2, float((variances**2 / df).sum())
    return max(top / bottom if bottom > 0 else float(df.min()), float(df.min()))


#: The seeds a cell needs before its seed differences count in a spread: with three, its difference has a jackknife
#: variance of its own, and which cells reach the level no longer rests on two seeds that happen to agree.
SPREAD_SEEDS = 3


def _spread(cells: pl.DataFrame, noise: tuple[np.ndarray, np.ndarray], level: float, bounds: tuple[float, float],
            errors: Errors, seeds: tuple[int, int], short: pl.DataFrame) -> Estimate:
    """The mean over the cells whose G reaches ``level`` of the seeds' mean absolute difference (module docstring): a t
    interval from each cell's variance (its jackknife, else ``4 sigma² / n``); a cell of fewer than
    :data:`SPREAD_SEEDS` seeds counts with 0 at the lower end and the range's width at the upper (it may be in the
    region or not, with any difference)."""
    lo, hi = bounds
    width = hi - lo
    se, df = noise
    n, g, gmd = floats(cells, "n", 0.0), floats(cells, "g", -math.inf), floats(cells, "gmd")
    known = (n >= SPREAD_SEEDS) & np.isfinite(gmd)
    unknown = n < SPREAD_SEEDS  # may be in the region or not, with any difference
    counted = known & (g >= level)
    k = int(counted.sum()) + int(unknown.sum())
    shown = (n >= 2) & np.isfinite(gmd) & (g >= level)  # the number on the data: every cell with a difference
    value = float(gmd[shown].mean()) if shown.any() else None
    if k == 0:
        return Estimate(value, lo, hi, seeds, len(n), short=short)
    sigma = np.where(np.isfinite(se), se * np.sqrt(np.maximum(n, 1.0)), width)
    jackknife = floats(cells, "gmd_var")
    variance = np.where(np.isfinite(jackknife), jackknife, 4 * sigma**2 / np.maximum(n, 1.0))
    error = math.sqrt(float(variance[counted].sum()))
    dof = satterthwaite(variance[counted], np.maximum(n[counted] - 1, 1.0)) if counted.any() else 1.0
    total = float(gmd[counted].sum())
    low = (total - float(quantile(errors.low * errors.look, dof)) * error) / k
    high = (total + float(quantile(errors.high * errors.look, dof)) * error + unknown.sum() * width) / k
    return Estimate(value, max(low, 0.0), min(high, width), seeds, len(n), short=short)
