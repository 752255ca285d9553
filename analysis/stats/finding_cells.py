"""The cells a finding reads: per grid cell the metric's G, its seeds and their spread, over a region of the grid.

A finding (:class:`search_spaces.finding.Finding`) names a ``metric``: a results column, or ``min(a, b, ...)``,
``max(a, b, ...)`` or ``a - b`` of columns. Its G per cell is the paper's: the mean over seeds at each evaluation,
maximised over training. A combination is taken **at each evaluation** of the seed means, then maximised over
training (:func:`per_step`): "learns all three cases" is all three at the same time, "focuses on the first case"
is first minus argmin at one time, as the sentences mean them. A cell without a finite G (every seed diverged
before it was evaluated, or the rows have no value there) counts as the metric's worst: accuracy 0 (a loss: +inf).

Each cell also carries its seed noise for :mod:`analysis.stats.seed_noise`: ``n`` (seeds) and ``sd`` (the standard
deviation over its seeds of each seed's value at the evaluation where the cell's G is best; of a combination the
frames lack, the largest of its columns' for ``min`` / ``max`` and ``sqrt(sd_a² + sd_b²)`` for ``a - b``: on the safe
side), and for the spread statistic ``gmd`` (the mean absolute difference between two seeds' best over training) and
``gmd_var`` (its jackknife variance), and for a worst-seed-versus-best-seed comparison ``worst_seed`` and
``best_seed`` (the lowest and the highest of the seeds' bests over training). A
cell the grid has but the rows do not (not run yet, or failed) is kept with ``n = 0``: its interval spans the
metric's whole range.

``where`` keeps the cells of a region: ``column -> [values]`` (floats equal to a relative 1e-6) or
``column -> {"min": a, "max": b}`` (inclusive).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from analysis.stats.compare import approx_in
from analysis.stats.rgb import worst_value
from search_spaces.axes import show_value
from search_spaces.cells import REL_TOL
from search_spaces.finding import direction, metric_columns

_CALL = re.compile(r"^(min|max)\((.+)\)$")
#: The columns of a cell table besides the cell's configuration (the last two: the seed-noise prior,
#: :meth:`analysis.stats.seed_noise.NoiseModel.annotate`).
#: The seed statistics a combination of columns does not have (null in its table): ``lift`` and those after it.
SEED_VALUES = ("lift", "gmd", "gmd_var", "worst_seed", "best_seed")
VALUES = ("g", "r", "b", "sd", "lift", "gmd", "gmd_var", "worst_seed", "best_seed", "n", "prior_var", "prior_df")


def floats(cells: pl.DataFrame, column: str, fill: float = math.nan) -> np.ndarray:
    """A value column of a cell table as float64 numbers, a null or NaN as ``fill`` (a column the table lacks: all
    ``fill``). Numpy, not a polars expression: the verdicts read these columns thousands of times on small tables."""
    if column not in cells.columns:
        return np.full(cells.height, fill)
    values = cells.get_column(column).to_numpy().astype(float)  # a null comes out NaN
    return values if math.isnan(fill) else np.where(np.isnan(values), fill, values)


def lower_is_better(metric: str) -> bool:
    """A loss is minimised: its best G is the lowest (search_spaces.finding.direction)."""
    return direction(metric) == "min"


def is_combination(metric: str) -> bool:
    """Whether ``metric`` combines several columns (``min(...)``, ``max(...)``, ``a - b``)."""
    return len(metric_columns(metric)) > 1


def is_accuracy(metric: str) -> bool:
    """Whether the metric reads accuracies only (shown in percent; a loss or an output scale in its own unit)."""
    return all("accuracy" in c for c in metric_columns(metric))


def metric_range(metric: str) -> tuple[float, float]:
    """The values the metric's G can take: accuracies in [0, 1] (a difference of two in [-1, 1]), a loss >= 0."""
    columns = metric_columns(metric)
    if all("accuracy" in c for c in columns):
        return (-1.0, 1.0) if _is_difference(metric) else (0.0, 1.0)
    if lower_is_better(metric):
        return (0.0, math.inf)
    return (-math.inf, math.inf)


def _is_difference(metric: str) -> bool:
    return len(metric_columns(metric)) == 2 and not _CALL.match(metric.replace(" ", ""))


def per_step(metric: str) -> pl.Expr:
    """The combination at each evaluation, over :func:`analysis.stats.rgb.step_stats`' seed means ``{column}__g``
    (a mean that a NaN seed made -inf, or a missing one, is that column's worst there: 0 for an accuracy)."""
    columns = metric_columns(metric)
    parts = [pl.when(pl.col(f"{c}__g").is_finite()).then(pl.col(f"{c}__g")).otherwise(0.0) for c in columns]
    return _combine(metric, parts)


def per_row(metric: str) -> pl.Expr:
    """The combination in one row (one seed at one evaluation; a NaN or missing column counts as 0): its best over
    training per seed is the seed's value of the combination, whose spread over seeds is the combination's noise."""
    columns = metric_columns(metric)
    parts = [pl.when(pl.col(c).is_finite()).then(pl.col(c)).otherwise(0.0) for c in columns]
    return _combine(metric, parts).alias(metric)


def _combine(metric: str, parts: list[pl.Expr]) -> pl.Expr:
    compact = metric.replace(" ", "")
    if _CALL.match(compact):
        return pl.min_horizontal(parts) if compact.startswith("min") else pl.max_horizontal(parts)
    return parts[0] - parts[1] if len(parts) == 2 else parts[0]


def combined_sd(metric: str, parts: list[pl.Expr]) -> pl.Expr:
    """The seed noise of a combination from its columns' (module docstring)."""
    if len(parts) == 1:
        return parts[0]
    if _CALL.match(metric.replace(" ", "")):
        return pl.max_horizontal(parts)
    return (parts[0] ** 2 + parts[1] ** 2).sqrt()


def cell_table(cells: Mapping[str, pl.DataFrame], metric: str) -> pl.DataFrame | None:
    """Per grid cell: its configuration columns and :data:`VALUES` of ``metric`` (None: a column is missing).

    ``cells``: column (or combination, :func:`per_step`) -> per configuration ``g`` (G) and, where known, ``r``,
    ``b`` (worst and best seed), ``sd`` and ``n`` (``n_seeds``). A combination the frames lack is combined from its
    columns' G per cell.
    """
    if metric in cells:
        return _normalised(cells[metric], metric)
    columns = metric_columns(metric)
    if any(c not in cells for c in columns):
        return None
    frames = [_normalised(cells[c], c) for c in columns]
    keys = [c for c in frames[0].columns if c not in VALUES]
    joined = frames[0].select(*keys, pl.col("g").alias("g0"), pl.col("sd").alias("s0"), "n")
    for i, frame in enumerate(frames[1:], start=1):
        joined = joined.join(frame.select(*keys, pl.col("g").alias(f"g{i}"), pl.col("sd").alias(f"s{i}")), on=keys,
                             how="inner", nulls_equal=True)
    g = _combine(metric, [pl.col(f"g{i}") for i in range(len(columns))])
    sd = combined_sd(metric, [pl.col(f"s{i}") for i in range(len(columns))])
    return joined.select(*keys, g.alias("g"), pl.lit(None, pl.Float64).alias("r"), pl.lit(None, pl.Float64).alias("b"),
                         sd.alias("sd"), *(pl.lit(None, pl.Float64).alias(c) for c in SEED_VALUES), "n")


def _normalised(frame: pl.DataFrame, metric: str) -> pl.DataFrame:
    """A frame of one metric with every column of :data:`VALUES` (a missing G is the metric's worst)."""
    have = set(frame.columns)
    n = pl.col("n") if "n" in have else pl.col("n_seeds") if "n_seeds" in have else pl.lit(1)
    keys = [c for c in frame.columns if c not in (*VALUES, "n_seeds")]
    g = pl.col("g").cast(pl.Float64)
    return frame.select(
        *keys, pl.when(g.is_finite()).then(g).otherwise(worst_value(metric)).alias("g"),
        *((pl.col(c).cast(pl.Float64) if c in have else pl.lit(None, pl.Float64)).alias(c) for c in ("r", "b")),
        (pl.col("sd").cast(pl.Float64) if "sd" in have else pl.lit(0.0)).fill_null(0.0).alias("sd"),
        (pl.col("lift").cast(pl.Float64) if "lift" in have else pl.lit(0.0)).fill_null(0.0).alias("lift"),
        *((pl.col(c).cast(pl.Float64) if c in have else pl.lit(None, pl.Float64)).alias(c) for c in SEED_VALUES[1:]),
        n.cast(pl.Int64).alias("n"))


def with_expected(table: pl.DataFrame, expected: pl.DataFrame | None) -> pl.DataFrame:
    """``table`` plus a row with ``n = 0`` for every cell of ``expected`` it lacks (cells not run yet)."""
    if expected is None:
        return table
    keys = [c for c in expected.columns if c in table.columns]
    as_text = [pl.col(c).cast(pl.String) for c in keys]  # axis values as the study wrote them vs the rows' types
    missing = (expected.select(keys).with_columns(_key=pl.concat_str(as_text, separator="\x1f"))
               .join(table.select(pl.concat_str(as_text, separator="\x1f").alias("_key")), on="_key", how="anti")
               .drop("_key"))
    if missing.is_empty():
        return table
    filler = missing.with_columns(*(pl.col(c).cast(table.schema[c]) for c in keys), g=pl.lit(None, pl.Float64),
                                  r=pl.lit(None, pl.Float64), b=pl.lit(None, pl.Float64), sd=pl.lit(0.0),
                                  lift=pl.lit(0.0), **{c: pl.lit(None, pl.Float64) for c in SEED_VALUES[1:]},
                                  n=pl.lit(0, pl.Int64))
    other = [c for c in table.columns if c not in filler.columns]
    filler = filler.with_columns(*(pl.lit(None).cast(table.schema[c]).alias(c) for c in other))
    return pl.concat([table, filler.select(table.columns)])


def in_region(cells: pl.DataFrame, region: Mapping[str, Any], what: str = "where") -> pl.DataFrame:
    """The cells inside ``region``.

    Raises:
        ValueError: the region names a column the cells do not have (naming it and the columns there are).
    """
    for column, spec in region.items():
        if column not in cells.columns:
            raise ValueError(f"finding {what} names column {column!r}, not a column of the grid; allowed: "
                             f"{', '.join(c for c in cells.columns if c not in VALUES)}")
        if isinstance(spec, Mapping):
            col = pl.col(column).cast(pl.Float64)
            if "min" in spec:
                cells = cells.filter(col >= spec["min"] - REL_TOL * abs(spec["min"]))
            if "max" in spec:
                cells = cells.filter(col <= spec["max"] + REL_TOL * abs(spec["max"]))
        else:
            cells = cells.filter(approx_in(column, list(spec)))
    return cells


def outside_grid(region: Mapping[str, Any], axis_values: Callable[[str], Sequence[Any] | None]) -> str:
    """Why no cell of the grid can lie in ``region`` (empty when some can): an axis the region bounds takes
    no value there at this scale, e.g. ``seq_len in {4}`` on a grid of seq_len 16, 64, 256. A column that is
    not a grid axis (a fixed value) is left to :func:`in_region`."""
    for column, spec in region.items():
        values = axis_values(column)
        if values is None:
            continue
        swept = pl.DataFrame({column: list(values)}, strict=False)
        if swept.schema[column].is_numeric() or not isinstance(spec, Mapping):
            if in_region(swept, {column: spec}).is_empty():
                shown = ", ".join(map(show_value, values))
                return f"the grid has no cell at {region_text({column: spec})} (its {column}: {shown})"
    return ""


def region_text(region: Mapping[str, Any]) -> str:
    """``learning_rate >= 0.027, seq_len in {256}`` (empty for the whole grid)."""
    parts = []
    for column, spec in region.items():
        if isinstance(spec, Mapping):
            parts += [f"{column} {sign} {show_value(spec[k])}" for k, sign in (("min", ">="), ("max", "<="))
                      if k in spec]
        else:
            parts.append(f"{column} in {{{', '.join(map(show_value, spec))}}}")
    return ", ".join(parts)

