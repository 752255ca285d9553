"""The cell table: per grid cell of one metric, what every verdict reads - the one structure the noise model, the
intervals, the finding kinds, the verdicts and the budget pass to each other.

A cell is one configuration (its **keys**: the configuration columns, e.g. architecture, d_model, learning_rate) and
carries the declared value columns of :class:`Column`. A cell the grid has but the rows do not (not run yet, or
failed) is kept with ``n = 0``: its interval spans the metric's whole range. A cell without a finite G (every seed
diverged before it was evaluated, or the rows have no value there) counts as the metric's worst: accuracy 0 (a loss:
+inf). A learning curve is a cell table too: its cells are the evaluations of one cell, its key the time column
(:mod:`analysis.stats.intervals.curves`).

:func:`cell_table` builds it from the frames a study's statistics give per metric
(:meth:`analysis.stats.training_stats.TrainingStats.finding_cells`, a published table's cells); a combination of
columns (:mod:`analysis.stats.metric`) the frames lack is combined from its columns' G per cell, its seed noise on the
safe side (:func:`analysis.stats.metric.combined_sd`) and its per-seed statistics unknown (null).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from analysis.stats.metric import combine, combined_sd
from analysis.stats.region import in_region
from analysis.stats.rgb import worst_value
from search_spaces.finding import metric_columns

Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]


class Column(StrEnum):
    """The value columns of a cell table (every other column is a key: the cell's configuration)."""

    G = "g"
    WORST = "r"
    BEST = "b"
    SD = "sd"
    LIFT = "lift"
    GMD = "gmd"
    GMD_VAR = "gmd_var"
    SEEDS = "seeds"
    N = "n"
    PRIOR_VAR = "prior_var"
    PRIOR_DF = "prior_df"


#: What each value column means (null: unknown for this cell or this metric).
MEANING: dict[Column, str] = {
    Column.G: "G: the seeds' mean at the evaluation where that mean is best (a loss: lowest); the metric's worst "
              "where no seed has a finite value, null for a cell not run",
    Column.WORST: "R: the worst seed's best over training (published tables: as printed)",
    Column.BEST: "B: the best seed's best over training",
    Column.SD: "the seeds' standard deviation at the cell's best evaluations (the noise of G); 0 below two seeds",
    Column.LIFT: "how far G lies above the mean of the cell's best evaluations (what picking the best adds); >= 0",
    Column.GMD: "the mean absolute difference between two seeds' bests (Gini's; the spread statistic's)",
    Column.GMD_VAR: "the jackknife variance of gmd (three seeds or more)",
    Column.SEEDS: "each seed's best over training (a loss: its lowest; a seed without a finite value: the metric's "
                  "worst), in seed order: a list",
    Column.N: "the seeds the cell has (0: not run yet)",
    Column.PRIOR_VAR: "the seed-noise model's prior variance for the cell (null until annotated)",
    Column.PRIOR_DF: "the degrees of freedom that prior counts for (null until annotated)",
}
VALUES: tuple[str, ...] = tuple(Column)
#: The per-seed statistics a combination of columns does not have (null in its table).
SEED_VALUES = (Column.LIFT, Column.GMD, Column.GMD_VAR, Column.SEEDS)
_FLOATS = [c for c in Column if c not in (Column.N, Column.SEEDS)]
_SEEDS_TYPE = pl.List(pl.Float64)


@dataclass(frozen=True)
class CellTable:
    """Per cell of one metric: its keys and the declared :class:`Column` values (module docstring).

    Build it with :func:`cell_table` or :meth:`of`; its frame always has every declared column (Float64, ``n``
    Int64) after the keys."""

    frame: pl.DataFrame
    keys: tuple[str, ...]
    #: :meth:`values` read once per column and fill (a frame is never changed in place: every change is a new table)
    _read: dict[tuple[str, float], Floats] = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def of(cls, frame: pl.DataFrame) -> CellTable:
        """A cell table of ``frame``: every column not declared in :class:`Column` is a key; declared ones it lacks
        are added (null; ``n`` 1, ``sd`` and ``lift`` 0), each cast to its type."""
        have = set(frame.columns)
        keys = tuple(c for c in frame.columns if c not in VALUES)
        fills = {Column.SD: 0.0, Column.LIFT: 0.0}
        values = [(pl.col(c).cast(pl.Float64) if c in have else pl.lit(fills.get(c), pl.Float64)).alias(c)
                  for c in _FLOATS]
        n = (pl.col(Column.N) if Column.N in have else pl.lit(1)).cast(pl.Int64).alias(Column.N)
        seeds = (pl.col(Column.SEEDS) if Column.SEEDS in have else pl.lit(None)).cast(_SEEDS_TYPE).alias(Column.SEEDS)
        return cls(frame.select(*keys, *values, n, seeds).select(*keys, *VALUES), keys)

    @property
    def height(self) -> int:
        """The number of cells."""
        return self.frame.height

    def is_empty(self) -> bool:
        """Whether the table has no cell."""
        return self.frame.is_empty()

    def values(self, column: Column, fill: float = math.nan) -> Floats:
        """A value column as float64 numbers, a null or NaN as ``fill`` (read-only: shared by every reader). Numpy,
        not a polars expression, read once per table: the verdicts read these columns thousands of times on small
        tables."""
        key = (str(column), fill)
        if key not in self._read:
            values = self.frame.get_column(column).to_numpy().astype(float)  # a null comes out NaN
            if not math.isnan(fill):
                values = np.where(np.isnan(values), fill, values)
            values.setflags(write=False)
            self._read[key] = values
        return self._read[key]

    def seed_values(self) -> list[Floats | None]:
        """Per cell its seeds' values (:data:`MEANING` of ``seeds``), None where the data has none."""
        # a list of Python floats per cell, not a Series each (iterating a list column builds one per cell: slower)
        seeds = self.frame.get_column(Column.SEEDS).to_list()
        return [None if v is None else np.asarray(v, dtype=float) for v in seeds]

    def replace(self, frame: pl.DataFrame) -> CellTable:
        """The same keys over ``frame`` (these cells, some of them or with changed values; the same columns)."""
        columns = [*self.keys, *VALUES]
        return CellTable(frame if frame.columns == columns else frame.select(columns), self.keys)

    def with_values(self, column: Column, values: Floats) -> CellTable:
        """The same cells with ``column`` set to ``values`` (one per cell); the other columns' reads (:meth:`values`)
        are shared, not read again."""
        dtype = pl.Int64 if column == Column.N else pl.Float64
        frame = self.frame.clone()  # the column replaced in place, not by a query (a verdict's every estimate does it)
        frame.replace_column(frame.get_column_index(column), pl.Series(str(column), values).cast(dtype))
        table = self.replace(frame)
        table._read.update({key: read for key, read in self._read.items() if key[0] != column})
        return table

    def filter(self, *predicates: pl.Expr) -> CellTable:
        """The cells for which every predicate holds."""
        return self.replace(self.frame.filter(*predicates))

    def where(self, region: Mapping[str, Any], what: str = "where") -> CellTable:
        """The cells inside ``region`` (:func:`analysis.stats.region.in_region`; a column that is no key:
        ValueError)."""
        return self.replace(in_region(self.frame, region, self.keys, what))

    def of_panel(self, panel: str, value: str) -> CellTable:
        """The cells whose ``panel`` column reads ``value`` (as text)."""
        return self.replace(rows(self.frame, self.frame.get_column(panel).cast(pl.String) == value))

    def run(self) -> CellTable:
        """The cells with at least one seed."""
        return self.replace(rows(self.frame, self.frame.get_column(Column.N) >= 1))

    def cell(self, index: int) -> CellTable:
        """The ``index``-th cell alone."""
        return self.replace(self.frame.slice(index, 1))

    def key(self, index: int = 0, columns: Sequence[str] | None = None) -> tuple[Any, ...]:
        """The ``index``-th cell's values of ``columns`` (default: its keys), in that order; no query (a row read)."""
        row = self.frame.row(index, named=True)
        return tuple(row[c] for c in (self.keys if columns is None else columns))

    def key_frame(self) -> pl.DataFrame:
        """The cells' keys."""
        return self.frame.select(self.keys)

    def with_expected(self, expected: pl.DataFrame | None) -> CellTable:
        """These cells plus one with ``n = 0`` for every cell of ``expected`` (configuration columns) they lack (cells
        not run yet)."""
        if expected is None:
            return self
        table = self.frame
        keys = [c for c in expected.columns if c in self.keys]
        as_text = [pl.col(c).cast(pl.String) for c in keys]  # axis values as the study wrote them vs the rows' types
        missing = (expected.select(keys).with_columns(_key=pl.concat_str(as_text, separator="\x1f"))
                   .join(table.select(pl.concat_str(as_text, separator="\x1f").alias("_key")), on="_key",
                         how="anti").drop("_key"))
        if missing.is_empty():
            return self
        filler = missing.with_columns(*(pl.col(c).cast(table.schema[c]) for c in keys),
                                      **{c: pl.lit(0.0 if c in (Column.SD, Column.LIFT) else None, pl.Float64)
                                         for c in _FLOATS}, n=pl.lit(0, pl.Int64),
                                      seeds=pl.lit(None, _SEEDS_TYPE))
        other = [c for c in table.columns if c not in filler.columns]
        filler = filler.with_columns(*(pl.lit(None).cast(table.schema[c]).alias(c) for c in other))
        return self.replace(pl.concat([table, filler.select(table.columns)]))


def rows(frame: pl.DataFrame, keep: pl.Series, drop: Sequence[str] = ()) -> pl.DataFrame:
    """The rows of ``frame`` where ``keep`` holds (a null: not kept, as a filter), less the columns ``drop``: Series
    operations, not a query (the verdicts and the budget ask this of small frames thousands of times a replay)."""
    return pl.DataFrame([c.filter(keep) for c in frame.get_columns() if c.name not in drop])


def cell_table(cells: Mapping[str, pl.DataFrame], metric: str) -> CellTable | None:
    """Per grid cell the :class:`CellTable` of ``metric`` (None: a column it reads is missing).

    ``cells``: column (or combination) -> per configuration ``g`` (G) and, where known, ``r``, ``b`` (worst and best
    seed), ``sd`` and ``n`` (or ``n_seeds``) and the per-seed statistics of :data:`SEED_VALUES`.
    """
    if metric in cells:
        return _normalised(cells[metric], metric)
    columns = metric_columns(metric)
    if any(c not in cells for c in columns):
        return None
    tables = [_normalised(cells[c], c) for c in columns]
    keys = list(tables[0].keys)
    joined = tables[0].frame.select(*keys, pl.col(Column.G).alias("g0"), pl.col(Column.SD).alias("s0"), Column.N)
    for i, table in enumerate(tables[1:], start=1):
        joined = joined.join(table.frame.select(*keys, pl.col(Column.G).alias(f"g{i}"),
                                                pl.col(Column.SD).alias(f"s{i}")), on=keys, how="inner",
                             nulls_equal=True)
    g = combine(metric, [pl.col(f"g{i}") for i in range(len(columns))])
    sd = combined_sd(metric, [pl.col(f"s{i}") for i in range(len(columns))])
    combined = joined.select(*keys, g.alias(Column.G), sd.alias(Column.SD), Column.N)
    return CellTable.of(combined.with_columns(**{c: pl.lit(None, _SEEDS_TYPE if c is Column.SEEDS else pl.Float64)
                                                 for c in SEED_VALUES}))


def _normalised(frame: pl.DataFrame, metric: str) -> CellTable:
    """A frame of one metric as a cell table (a missing G is the metric's worst; ``n_seeds`` read as ``n``)."""
    if "n_seeds" in frame.columns and Column.N not in frame.columns:
        frame = frame.rename({"n_seeds": Column.N})
    frame = frame.drop("n_seeds", strict=False)
    g = pl.col(Column.G).cast(pl.Float64)
    table = CellTable.of(frame.with_columns(pl.when(g.is_finite()).then(g).otherwise(worst_value(metric))
                                            .alias(Column.G)))
    return table.replace(table.frame.with_columns(pl.col(Column.SD, Column.LIFT).fill_null(0.0)))
