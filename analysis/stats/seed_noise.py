"""The seed noise of a cell's G and its confidence interval: the one noise model under every finding's verdict.

A cell (one configuration) has G, the mean over its ``n`` seeds maximised over training, and ``sd``, the standard
deviation over its seeds of each seed's best over training. With two or three seeds a cell's own ``sd`` says
little (a t interval from two seeds has one degree of freedom), while seed noise is similar across cells whose G is
similar: on the NAP release data cells near chance or near 100% have seed sds around 0.6 points, cells in between
(some seeds learn, some not) around 6. The cells' variances are therefore *moderated* (empirical Bayes: Smyth 2004,
the estimator behind limma's moderated t, with a prior that follows G as in limma-trend):

* cells are grouped by G into bins of at least :data:`MIN_BIN_CELLS`; each bin's prior variance ``s0²`` is its
  cells' mean log sample variance (corrected for their degrees of freedom);
* one prior ``d0`` for all bins measures how much more the cells' log variances spread around their bin's level than
  sampling alone would make them: measured by the interquartile range against the exact one of sampling
  (log chi-square quantiles), so that a few cells whose seeds disagree wildly do not make every prior weak;
* a cell's variance is ``(d0 s0² + (n - 1) sd²) / (d0 + n - 1)`` with ``d0 + n - 1`` degrees of freedom, and never
  below its own ``sd²`` (a cell whose seeds disagree keeps its own spread: conservative);
* seeds that agree exactly (two seeds at 100%) measure a variance below the data's resolution: such a cell counts
  with half the smallest standard deviation any cell of the metric shows.

The interval of G is ``G ± t · sqrt(variance / n)`` at the two-sided level the caller gives (a finding's error budget
split over the intervals it reads and the looks it takes: :mod:`analysis.stats.findings`), clipped to the metric's
range; a cell with no seeds yet (not run) spans the whole range. Quantiles and special functions are scipy's
(``scipy.stats``, ``scipy.special``); the moderation is written out below because no maintained Python package
exposes it on its own. Its calibration is measured by simulation (tests/test_budget_calibration.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

#: Prior degrees of freedom are capped here (a prior of more is a pooled variance for every purpose).
MAX_PRIOR_DF = 1000.0
#: The fewest cells (with two seeds or more) a G-level bin of the prior holds.
MIN_BIN_CELLS = 40


@dataclass(frozen=True)
class NoiseModel:
    """The prior of a metric's cell variances: per G-level bin (``edges`` between them) a variance, one ``df``."""

    edges: tuple[float, ...] = ()
    variances: tuple[float, ...] = ()  # empty: no seed noise measured
    df: float = 0.0

    @classmethod
    def fit(cls, g: np.ndarray, sd: np.ndarray, n: np.ndarray) -> NoiseModel:
        """The prior of cells with G ``g``, seed sd ``sd`` and ``n`` seeds (module docstring)."""
        use = (n >= 2) & np.isfinite(sd) & np.isfinite(g)
        positive = sd[use & (sd > 0)]
        if positive.size == 0:
            return cls()
        g, d = g[use], n[use].astype(float) - 1.0
        sd = np.maximum(sd[use].astype(float), positive.min() / 2)
        edges = _edges(np.sort(g))
        index = np.searchsorted(np.asarray(edges), g, side="right")
        e = np.log(sd ** 2) - special.digamma(d / 2) + np.log(d / 2)
        levels = np.array([e[index == b].mean() for b in range(len(edges) + 1)])
        df = _prior_df(e - levels[index], d)
        shift = 0.0 if df >= MAX_PRIOR_DF else float(special.digamma(df / 2) - np.log(df / 2))
        return cls(edges, tuple(float(np.exp(level + shift)) for level in levels), df)

    @property
    def measured(self) -> bool:
        """Whether any seed noise was measured."""
        return bool(self.variances)

    def text(self) -> str:
        """The seed noise in words, for a verdict's basis line."""
        if not self.measured:
            return ("no seed noise measured: a cell of one seed decides nothing; cells whose seeds agree exactly, or "
                    "a published number printed without its spread, decide on the number alone (no confidence)")
        sds = sorted(100 * math.sqrt(v) for v in self.variances)
        level = f"sd {sds[0]:.1f} pp" if len(sds) == 1 else f"sd {sds[0]:.1f}-{sds[-1]:.1f} pp by G level"
        prior = "pooled" if self.df >= MAX_PRIOR_DF else f"prior df {self.df:.0f}"
        return f"seed noise {level} ({prior})"

    def standard_errors(self, g: np.ndarray, sd: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per cell the standard error of G and its degrees of freedom (module docstring); a cell with no seeds has
        an infinite error, and so has a cell of one seed where no cell measured any noise (nothing states how far its
        one seed may lie from its mean); seeds that all agree exactly, an error of 0."""
        n = n.astype(float)
        own = np.where(np.isfinite(sd), sd.astype(float), 0.0) ** 2
        d = np.maximum(n - 1.0, 0.0)
        if self.measured:
            index = np.searchsorted(np.asarray(self.edges), np.nan_to_num(g, nan=-np.inf), side="right")
            prior = np.asarray(self.variances)[index]
            var = np.maximum((self.df * prior + d * own) / (self.df + d), own)
            df = self.df + d
        else:
            var, df = np.where(n > 1, own, np.inf), np.maximum(d, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            se = np.where(n > 0, np.sqrt(var / np.maximum(n, 1.0)), np.inf)
        return se, df


def _edges(values: np.ndarray) -> tuple[float, ...]:
    """Bin edges between sorted G values: bins of at least :data:`MIN_BIN_CELLS` cells (tied values stay together,
    so a bin may hold more)."""
    edges: list[float] = []
    start = 0
    while len(values) - start >= 2 * MIN_BIN_CELLS:
        cut = start + MIN_BIN_CELLS
        while cut < len(values) and values[cut] == values[cut - 1]:
            cut += 1
        if len(values) - cut < MIN_BIN_CELLS:
            break
        edges.append(float((values[cut - 1] + values[cut]) / 2))
        start = cut
    return tuple(edges)


def _prior_df(residuals: np.ndarray, d: np.ndarray) -> float:
    """d0 from the cells' log variances around their bins' levels: ``2 trigamma^-1`` of their spread beyond
    sampling's, ``trigamma(d/2) (r² - 1)`` with ``r`` their interquartile range over sampling's (the median cell's
    degrees of freedom); no spread beyond sampling: pooled."""
    if residuals.size < 4:
        return MAX_PRIOR_DF
    typical = float(np.median(d))
    sampling = stats.chi2.ppf([0.25, 0.75], typical)
    ratio = float(np.subtract(*np.quantile(residuals, [0.75, 0.25]))) / float(np.log(sampling[1] / sampling[0]))
    excess = float(special.polygamma(1, typical / 2)) * (ratio ** 2 - 1.0)
    return MAX_PRIOR_DF if excess <= 0 else min(2.0 * trigamma_inverse(excess), MAX_PRIOR_DF)


def trigamma_inverse(x: float) -> float:
    """y with trigamma(y) = x (Newton's method, as limma's ``trigammaInverse``)."""
    if x > 1e7:
        return 1.0 / math.sqrt(x)
    if x < 1e-6:
        return 1.0 / x
    y = 0.5 + 1.0 / x
    for _ in range(50):
        tri = float(special.polygamma(1, y))
        step = tri * (1 - tri / x) / float(special.polygamma(2, y))
        y += step
        if -step / y < 1e-8:
            break
    return y


def quantile(alpha: float, df: np.ndarray | float) -> np.ndarray:
    """The two-sided t quantile at level ``1 - alpha``."""
    return stats.t.ppf(1.0 - alpha / 2.0, df)
