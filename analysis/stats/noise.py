"""The seed noise of a cell's G: the one noise model under every finding's interval (docs/budget.md argues it).

A cell (one configuration) has G, the mean over its ``n`` seeds at the evaluation where that mean is best, and
``sd``, the standard deviation over its seeds of each seed's value at that evaluation (the spread whose mean G is).
With two or three seeds a cell's own ``sd`` says little, and in these grids it says least where it matters most: at
the edge between configurations that learn and ones that do not, a seed learns or fails by chance, so two seeds that
agree (both learned) say nothing about the third. Such cells are not marked by their own G (their first seeds may
sit at either level) but by their *neighbourhood*: splits come in bands along the grid's transitions, and a cell
next to a split cell, or next to a cliff in G, may split too. So each cell's prior variance comes from its
neighbours in the grid, not from cells that happen to share its G:

* the neighbourhood of a cell is itself and every cell of the same categorical values (panel, task, ...) at most
  one grid step away along every numeric axis (learning rate, d, ...): up to 9 cells on a 2-D grid;
* its prior variance ``s0²`` is the largest of: the mean seed variance of the neighbourhood's cells (an arithmetic
  mean of variances: a split neighbour's variance is carried in full by the mean, where a mean of log variances
  would discount it), ``(JUMP_SHARE x Δ)²`` for the largest step Δ in G to a neighbour (a cliff: a transition whose
  cells each read one side so far), and the metric's floor (below);
* the prior counts for ``d0 = min(PRIOR_DF, the neighbours' own degrees of freedom)``; a cell's variance is
  ``max((d0 s0² + (n - 1) sd²) / (d0 + n - 1), sd²)`` with ``d0 + n - 1`` degrees of freedom, so its own seeds take
  over as they come in;
* the floor is, among the cells of the same categorical values (the panel value's cells), the share whose seeds
  differ at all (Laplace's rule: ``(d + 1) / (m + 2)``) times the median variance of those that do (at most the whole
  metric's): seeds that agree exactly, in a neighbourhood that agrees exactly (three seeds at 100% among cells at
  100%), measure a variance below what any evaluation resolves, and the prior gives them the variance a cell of
  their panel value is expected to have (small where nearly every cell's seeds agree exactly, never zero);
* a cell of one seed (or none) has no interval to give: it spans the metric's range and decides nothing;
* a cell with no neighbour at all (a published table's cells: model x direction) stands on its own seeds, their
  spread at least half the smallest any cell shows (a printed "± 0.00" is a spread below the print's resolution).

Without any measured seed noise (a published table printing no spread), a cell's own ``sd`` is all there is: its
number decides on its own, with no confidence to state (the verdict says so). The interval of G is
``G ± t(df) · sqrt(variance / n)`` at the one-sided level the caller gives (:mod:`analysis.stats.intervals.cell`),
clipped to the metric's range. Coverage on the authors' release, by seed count: bench/coverage.py.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import special

from analysis.stats.table import CellTable, Column, Floats

#: The most degrees of freedom a cell's neighbourhood counts for (a prior worth four seeds of the cell's own). A
#: neighbourhood is no sample of the cell's seeds, only of seeds like them: with 4, two seeds that happened to agree in
#: a cell among split ones were trusted too far (6.7% wrong where 5% is stated, bench/calibration.py's two-seed
#: replays); with 3, 3.3%, and the release holdout's misses fall under 5% at every k (bench/coverage.py).
PRIOR_DF = 3.0
#: A step of Δ in G to a grid neighbour counts as seed noise of sd JUMP_SHARE x Δ: a cliff between cells that learn
#: and cells that do not is where a cell's next seed may land on the other side (bench/coverage.py: without it, two
#: seeds of a cell at such a cliff miss the five-seed G in 8 of 40 seed pairs of the first-token release).
JUMP_SHARE = 1 / 8


@dataclass(frozen=True)
class NoiseModel:
    """Per cell of a metric: the prior variance of its seeds and the degrees of freedom it counts for."""

    keys: tuple[str, ...] = ()
    #: ``keys`` + ``_s0`` (prior variance) + ``_d0`` (prior degrees of freedom); None: no seed noise measured
    prior: pl.DataFrame | None = None
    floor: float = 0.0  # the median seed variance of the metric's cells whose seeds differ (shown in the basis line)
    #: the variance a cell with no neighbour counts with at least: half the smallest sd any cell shows, squared
    resolution: float = 0.0

    @classmethod
    def fit(cls, cells: CellTable) -> NoiseModel:
        """The prior of every cell of ``cells`` (a metric's cells: its keys, ``g``, ``sd``, ``n``) from its grid
        neighbours (module docstring)."""
        table, keys = cells.frame, cells.keys
        var = _own_variance(table)
        own = var.get_column("_v").to_numpy()
        positive = own[own > 0]  # numpy, not a query: a curve's fit runs per learning curve and replay
        if positive.size == 0:
            return cls(keys)
        numeric = [c for c in keys if table.schema[c].is_numeric()]
        categorical = [c for c in keys if c not in numeric]
        typical = float(np.median(positive))
        differ = pl.col("_v") > 0
        measured = pl.col("n") >= 2
        # the floor, per panel value (task, ...): how often its cells' seeds differ at all, times by how much
        floor = ((differ.sum() + 1) / (measured.sum() + 2)) * pl.min_horizontal(
            pl.col("_v").filter(differ).median(), pl.lit(typical))
        var = var.with_columns((floor.over(categorical) if categorical else floor).alias("_floor"))
        steps = var.with_columns(pl.col(c).rank("dense").cast(pl.Int64).alias(f"_i{c}") for c in numeric)
        position = [*categorical, *(f"_i{c}" for c in numeric)]
        seen = steps.filter(pl.col("n") >= 1).select(*position, pl.col("g").alias("_gj"), pl.col("_v").alias("_vj"),
                                                     (pl.col("n") - 1).clip(0).alias("_dj"))
        pairs = []
        for offset in itertools.product((-1, 0, 1), repeat=len(numeric)):
            shifted = seen.with_columns(pl.col(f"_i{c}") - o for c, o in zip(numeric, offset, strict=True))
            pairs.append(steps.join(shifted, on=position, how="inner", nulls_equal=True)
                         .with_columns(_self=pl.lit(not any(offset))))
        around = (pl.concat(pairs).group_by(keys).agg(
            pl.col("_vj").filter(pl.col("_dj") > 0).mean().alias("_vmean"),
            ((pl.col("_gj") - pl.col("g")) ** 2).max().alias("_jump"),
            pl.col("_dj").filter(~pl.col("_self")).sum().alias("_dn")))
        prior = steps.select(*keys, "_floor").join(around, on=list(keys), how="left", nulls_equal=True).select(
            *keys, pl.max_horizontal(pl.col("_vmean").fill_null(0.0), JUMP_SHARE**2 * pl.col("_jump").fill_null(0.0),
                                     pl.col("_floor")).alias("_s0"),
            pl.min_horizontal(pl.col("_dn").fill_null(0).cast(pl.Float64), pl.lit(PRIOR_DF)).alias("_d0"))
        return cls(keys, prior, typical, float(positive.min()) / 4)

    @property
    def measured(self) -> bool:
        """Whether any seed noise was measured."""
        return self.prior is not None

    def text(self, percent: bool = True) -> str:
        """The seed noise in words, for a verdict's basis line (its sd in points of a fraction with ``percent``, else
        in the metric's own unit)."""
        if not self.measured:
            return ("no seed noise measured: a cell of one seed decides nothing; cells whose seeds agree exactly, or "
                    "a published number printed without its spread, decide on the number alone")
        return (f"seed noise from each cell's grid neighbours (their mean variance, cliffs in G; median sd "
                f"{f'{100 * math.sqrt(self.floor):.1f} pp' if percent else f'{math.sqrt(self.floor):.3g}'}; "
                f"prior df <= {PRIOR_DF:g})")

    def annotate(self, cells: CellTable) -> CellTable:
        """``cells`` (of the metric the model was fit on) with each cell's prior: :attr:`Column.PRIOR_VAR` and
        :attr:`Column.PRIOR_DF`, which :meth:`standard_errors` reads."""
        if self.prior is None:
            return cells.replace(cells.frame.with_columns(prior_var=pl.lit(0.0), prior_df=pl.lit(0.0)))
        prior = self.prior.rename({"_s0": Column.PRIOR_VAR, "_d0": Column.PRIOR_DF})
        frame = cells.frame.drop(Column.PRIOR_VAR, Column.PRIOR_DF).join(prior, on=list(self.keys), how="left",
                                                                         nulls_equal=True)
        return cells.replace(frame)

    def standard_errors(self, cells: CellTable) -> tuple[Floats, Floats]:
        """Per cell of ``cells`` (cells the model annotated: :meth:`annotate`) the standard error of G and its degrees
        of freedom; a cell of one seed or none has an infinite error (it decides nothing); seeds that agree exactly,
        with no noise measured anywhere, an error of 0."""
        n, sd = cells.values(Column.N, 0.0), cells.values(Column.SD, 0.0)
        own = np.where(n >= 2, sd**2, 0.0)
        d = np.maximum(n - 1.0, 0.0)
        if self.measured:
            s0, d0 = cells.values(Column.PRIOR_VAR, self.floor), cells.values(Column.PRIOR_DF, 0.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                pooled = np.where(d0 + d > 0, (d0 * s0 + d * own) / np.maximum(d0 + d, 1e-12), own)
            var, df = np.maximum(pooled, own), np.maximum(d0 + d, 1.0)
            var = np.where(d0 > 0, var, np.maximum(var, self.resolution))  # alone: no prior, the data's resolution
        else:
            var, df = own, np.maximum(d, 1.0)
        se = np.where(n >= 2, np.sqrt(var / np.maximum(n, 1.0)), np.inf)
        return se, df


def _own_variance(cells: pl.DataFrame) -> pl.DataFrame:
    """``cells`` with ``_v``: the variance of each cell's seeds (0 below two seeds)."""
    sd = pl.col("sd").cast(pl.Float64).fill_null(0.0).fill_nan(0.0)
    return cells.with_columns(pl.when(pl.col("n") >= 2).then(sd**2).otherwise(0.0).alias("_v"))


def quantile(alpha: Floats | float, df: Floats | float) -> Floats:
    """The one-sided t quantile: a bound exceeded with probability ``alpha``."""
    p = 1.0 - np.asarray(alpha, dtype=float)
    # the t distribution's inverse itself (scipy.stats.t.ppf's own kernel, without its argument checks, which cost
    # more than the quantile on the thousands of small calls of a replay); at p = 0 it answers +inf, not -inf
    return np.where(p > 0.0, special.stdtrit(df, p), -np.inf)
