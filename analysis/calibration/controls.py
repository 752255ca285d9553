"""Negative controls of the calibration: noise models that are wrong in known ways, which the calibration and the
coverage tests must catch."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import special, stats

from analysis.stats.noise import NoiseModel
from analysis.stats.table import CellTable, Column, Floats


@dataclass(frozen=True)
class LevelBinnedNoise(NoiseModel):
    """The seed-noise model of this project before issue 48, kept as the calibration's negative control: a limma-trend
    prior grouped by each cell's *observed* G (bins of at least 40 cells; each bin's variance the mean of its cells' log
    variances, corrected for their degrees of freedom; one prior df from their interquartile range). A cell whose
    first seeds happened to learn borrows the small noise of the cells near 100%."""

    bins: tuple[tuple[float, ...], tuple[float, ...], float] = ((), (), 0.0)

    @classmethod
    def fit(cls, cells: CellTable) -> LevelBinnedNoise:
        run = cells.frame.filter(pl.col("n") >= 2)
        g, sd, n = (run.get_column(c).cast(pl.Float64).fill_null(0.0).to_numpy() for c in ("g", "sd", "n"))
        positive = sd[sd > 0]
        keys = cells.keys
        if positive.size == 0:
            return cls(keys)
        d, sd = n - 1.0, np.maximum(sd, positive.min() / 2)
        edges, order = [], np.sort(g)
        for cut in range(40, len(order) - 39, 40):
            edges.append(float((order[cut - 1] + order[cut]) / 2))
        index = np.searchsorted(edges, g, side="right")
        e = np.log(sd**2) - special.digamma(d / 2) + np.log(d / 2)
        levels = np.array([e[index == b].mean() if (index == b).any() else e.mean() for b in range(len(edges) + 1)])
        spread = np.subtract(*np.quantile(e - levels[index], [0.75, 0.25]))
        typical = float(np.median(d))
        ratio = spread / math.log(stats.chi2.ppf(0.75, typical) / stats.chi2.ppf(0.25, typical))
        excess = float(special.polygamma(1, typical / 2)) * (ratio**2 - 1.0)
        df = 1000.0 if excess <= 0 else min(2.0 / excess + 0.5, 1000.0)  # trigamma^-1 to first order
        return cls(keys, None, float(np.median(positive) ** 2),
                   bins=(tuple(edges), tuple(float(np.exp(x)) for x in levels), df))

    @property
    def measured(self) -> bool:
        return bool(self.bins[1])

    def standard_errors(self, cells: CellTable) -> tuple[Floats, Floats]:
        n = cells.values(Column.N, 0.0)
        sd = cells.values(Column.SD, 0.0)
        d = np.maximum(n - 1.0, 0.0)
        if not self.measured:
            return np.where(n >= 2, sd / np.sqrt(np.maximum(n, 1.0)), np.inf), np.maximum(d, 1.0)
        edges, variances, df = self.bins
        g = np.nan_to_num(cells.values(Column.G), nan=-np.inf)
        prior = np.asarray(variances)[np.searchsorted(edges, g, side="right")]
        var = np.maximum((df * prior + d * sd**2) / (df + d), sd**2)
        return np.where(n >= 2, np.sqrt(var / np.maximum(n, 1.0)), np.inf), df + d
