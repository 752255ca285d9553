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
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
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
    #: the frame of the cells it was fit on (``prior`` holds their keys in its order)
    fitted: pl.DataFrame | None = field(default=None, compare=False, repr=False)

    @classmethod
    def fit(cls, cells: CellTable) -> NoiseModel:
        """The prior of every cell of ``cells`` (a metric's cells: its keys, ``g``, ``sd``, ``n``) from its grid
        neighbours (module docstring). Numpy over the cells, not queries: a fit runs per metric and look of every
        replay of the calibration, and per learning curve; each sum and median is taken as polars takes it in a
        group (:func:`_kahan`, :func:`_median`), so the numbers are the ones a query gives."""
        table, keys = cells.frame, cells.keys
        n = cells.values(Column.N)  # NaN: null
        own = np.where(n >= 2, np.nan_to_num(cells.values(Column.SD), nan=0.0) ** 2, 0.0)
        positive = own[own > 0]
        if positive.size == 0:
            return cls(keys)
        schema = table.schema
        numeric = [c for c in keys if schema[c].is_numeric()]
        typical = float(np.median(positive))
        # the floor, per panel value (task, ...): how often its cells' seeds differ at all, times by how much
        group = _codes(table, [c for c in keys if c not in numeric])
        floor = np.empty(len(own))
        for g in np.unique(group):
            mine = group == g
            differ = own[mine & (own > 0)]
            level = typical if differ.size == 0 else min(_median(differ), typical)
            floor[mine] = (differ.size + 1) / (int((n[mine] >= 2).sum()) + 2) * level
        # each cell's neighbourhood: its categorical values, one grid step (dense rank) along every numeric axis
        position, steps = _positions(table, numeric, group)
        seen = np.flatnonzero(n >= 1)
        order = seen[np.argsort(position[seen], kind="stable")]
        codes = position[order]
        g_own, g_null = cells.values(Column.G), _nulls(table.get_column(Column.G))
        d = np.where(n >= 1, np.maximum(n - 1, 0), 0)
        total, carry, count = np.zeros(len(own)), np.zeros(len(own)), np.zeros(len(own))
        jump, jumped, dn = np.full(len(own), np.nan), np.zeros(len(own), bool), np.zeros(len(own))
        for offset in itertools.product((-1, 0, 1), repeat=len(numeric)):
            target = position + sum(np.where(null, 0, o) * stride for (null, stride), o in zip(steps, offset,
                                                                                             strict=True))
            at = np.minimum(np.searchsorted(codes, target), len(codes) - 1)
            j = order[at]
            found = codes[at] == target
            pooled = found & (d[j] > 0)  # the neighbours' mean variance: of those with two seeds or more
            total, carry = _kahan(total, carry, own[j], pooled)
            count += pooled
            known = found & ~g_null & ~g_null[j]
            with np.errstate(invalid="ignore"):  # a loss's cells at +inf: inf - inf, NaN, which a max ignores
                jump = np.where(known, np.fmax(jump, (g_own[j] - g_own) ** 2), jump)
            jumped |= known
            if any(offset):
                dn += np.where(found, d[j], 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(count > 0, total / count, 0.0)
        s0 = np.fmax(np.fmax(mean, JUMP_SHARE**2 * np.where(jumped, jump, 0.0)), floor)
        d0 = np.minimum(dn, PRIOR_DF)
        prior = pl.DataFrame([*(table.get_column(k) for k in keys), pl.Series("_s0", s0), pl.Series("_d0", d0)])
        return cls(keys, prior, typical, float(positive.min()) / 4, fitted=table)

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
        if cells.frame is self.fitted:  # the cells it was fit on (a verdict's): the prior is in their order, no join
            return cells.with_values(Column.PRIOR_VAR, self.prior.get_column("_s0").to_numpy()).with_values(
                Column.PRIOR_DF, self.prior.get_column("_d0").to_numpy())
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


def _codes(frame: pl.DataFrame, columns: list[str]) -> npt.NDArray[np.int64]:
    """Per row a code of its values of ``columns`` (equal values, nulls among them, one code; none: all 0)."""
    if not columns:
        return np.zeros(frame.height, dtype=np.int64)
    seen: dict[tuple[Any, ...], int] = {}
    rows = zip(*(frame.get_column(c).to_list() for c in columns), strict=True)
    return np.array([seen.setdefault(row, len(seen)) for row in rows], dtype=np.int64)


def _positions(frame: pl.DataFrame, numeric: list[str],
               group: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], list[tuple[npt.NDArray[np.bool_], int]]]:
    """Per row one number for its place in the grid (its group and its dense rank along each numeric column, with
    room for one step past either end; a null rank is a value of its own, which no step moves, as a null in a join),
    and per numeric column (its nulls, the stride of one step)."""
    position = group.copy()
    steps = []
    for c in numeric:
        column = frame.get_column(c)
        null = _nulls(column)
        values = column.to_numpy()[~null]
        order = np.argsort(values, kind="stable")
        ordered = values[order]
        rank = np.empty(len(values), dtype=np.int64)
        rank[order] = np.cumsum(np.r_[True, ordered[1:] != ordered[:-1]]) - 1  # dense: equal values one rank
        span = int(rank.max(initial=-1)) + 4  # 0 and ranks + 1: a step past the ends; ranks + 2: null
        if int(position.max(initial=0)) >= np.iinfo(np.int64).max // span // 2:
            raise ValueError(f"too many grid positions to number over {numeric}")
        code = np.full(len(null), span - 1, dtype=np.int64)
        code[~null] = rank + 1
        position = position * span + code
        steps.append((null, span))
    strides = [int(np.prod([s for _, s in steps[i + 1:]], dtype=np.int64)) for i in range(len(steps))]
    return position, [(null, stride) for (null, _), stride in zip(steps, strides, strict=True)]


def _nulls(column: pl.Series) -> npt.NDArray[np.bool_]:
    """Where ``column`` is null (not NaN)."""
    return column.is_null().to_numpy() if column.null_count() else np.zeros(len(column), dtype=bool)


def _kahan(total: Floats, carry: Floats, x: Floats, add: npt.NDArray[np.bool_]) -> tuple[Floats, Floats]:
    """One step of a compensated (Kahan) sum per row, where ``add``: the order and the rounding of a polars sum over
    a group, so a mean taken here is the one its query gives."""
    y = x - carry
    t = total + y
    return np.where(add, t, total), np.where(add, (t - total) - y, carry)


def _median(x: Floats) -> float:
    """The median as polars takes it (linear between the two middle values: lower + (upper - lower) / 2)."""
    s = np.sort(x)
    mid = (len(s) - 1) // 2
    return float(s[mid]) if len(s) % 2 else float(s[mid] + (s[mid + 1] - s[mid]) * 0.5)


def quantile(alpha: Floats | float, df: Floats | float) -> Floats:
    """The one-sided t quantile: a bound exceeded with probability ``alpha``."""
    p = 1.0 - np.asarray(alpha, dtype=float)
    # the t distribution's inverse itself (scipy.stats.t.ppf's own kernel, without its argument checks, which cost
    # more than the quantile on the thousands of small calls of a replay); at p = 0 it answers +inf, not -inf
    return np.where(p > 0.0, special.stdtrit(df, p), -np.inf)
