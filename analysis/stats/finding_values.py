"""The number a finding tests, per panel value: a statistic of a metric's G over a region of the grid.

A finding (``study.json["findings"]``, docs/cli.md) names a ``metric``: a results column, or ``min(a, b, ...)``,
``max(a, b, ...)`` or ``a - b`` of columns. Its G per cell is the paper's: the mean over seeds at each evaluation,
maximised over training. A combination is taken **at each evaluation** of the seed means, then maximised over
training (:func:`per_step`): "learns all three cases" is all three at the same time, "focuses on the first case"
is first minus argmin at one time, as the sentences mean them (maximising each column on its own would combine peaks
from different steps). A cell without a finite G (every seed diverged before it was evaluated, or the rows have no
value there) counts as the metric's worst: accuracy 0 (a loss: +inf), in every statistic alike, as the leaderboard
scores it. ``where`` keeps the cells of a region: ``column -> [values]`` (floats equal to a relative 1e-6) or
``column -> {"min": a, "max": b}`` (inclusive). The ``statistic`` over the region's cells, per panel value:

* ``best`` - the best G (max; min for a loss): what the paper's cross marks;
* ``worst`` - the worst G (every cell of the region is at least / at most it);
* ``mean`` - the mean G of the cells;
* ``share`` - the share of cells with G >= ``level``;
* ``spread`` - the mean of B - R, the best seed's value minus the worst's (each maximised over training, as the
  paper's pixels), over the cells whose best seed reaches ``level``: how much the seeds disagree where the model
  learns at all (a cell where no seed learns has no spread to speak of; one column only).

:class:`PanelValue` says which way a cell not yet run could move the value: what decides UNDECIDED.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from analysis.stats.compare import REL_TOL, approx_in

_CALL = re.compile(r"^(min|max)\((.+)\)$")
_RGB = ("r", "g", "b", "n_seeds")


def metric_columns(metric: str) -> tuple[str, ...]:
    """The results columns a finding's metric reads: ``min(a, b)`` -> ``(a, b)``, ``a - b`` -> ``(a, b)``."""
    compact = metric.replace(" ", "")
    call = _CALL.match(compact)
    if call:
        return tuple(call.group(2).split(","))
    if "-" in compact:
        return tuple(compact.split("-", 1))
    return (compact,)


def lower_is_better(metric: str) -> bool:
    """A loss is minimised: its best G is the lowest."""
    return "loss" in metric and len(metric_columns(metric)) == 1


def is_combination(metric: str) -> bool:
    """Whether ``metric`` combines several columns (``min(...)``, ``max(...)``, ``a - b``)."""
    return len(metric_columns(metric)) > 1


def per_step(metric: str) -> pl.Expr:
    """The combination at each evaluation, over :func:`analysis.stats.rgb.step_stats`' seed means ``{column}__g``
    (a mean that a NaN seed made -inf, or a missing one, is that column's worst there: 0 for an accuracy)."""
    columns = metric_columns(metric)
    parts = [pl.when(pl.col(f"{c}__g").is_finite()).then(pl.col(f"{c}__g")).otherwise(0.0) for c in columns]
    compact = metric.replace(" ", "")
    if _CALL.match(compact):
        return pl.min_horizontal(parts) if compact.startswith("min") else pl.max_horizontal(parts)
    return parts[0] - parts[1]


def cell_values(frames: Mapping[str, pl.DataFrame], metric: str) -> pl.DataFrame | None:
    """Per grid cell: its configuration columns and ``value``, the metric's G there (None: a column is missing).

    ``frames``: column (or combination, :func:`per_step`) -> RGB frame per configuration (``g`` = G), as
    :func:`analysis.stats.rgb.rgb_from_step_stats`. A cell without a finite G gets the metric's worst (module
    docstring).
    """
    worst = float("inf") if lower_is_better(metric) else 0.0
    if metric in frames:  # a single column, or a combination taken per evaluation
        frame = frames[metric]
        keys = [c for c in frame.columns if c not in _RGB]
        return frame.select(*keys, pl.col("g").cast(pl.Float64).fill_null(worst).alias("value"))
    columns = metric_columns(metric)
    if any(c not in frames for c in columns):
        return None
    keys = [c for c in frames[columns[0]].columns if c not in _RGB]
    joined = frames[columns[0]].select(*keys, pl.col("g").alias("v0"))
    for i, c in enumerate(columns[1:], start=1):
        joined = joined.join(frames[c].select(*keys, pl.col("g").alias(f"v{i}")), on=keys, how="inner",
                             nulls_equal=True)
    parts = [pl.col(f"v{i}") for i in range(len(columns))]
    compact = metric.replace(" ", "")
    if _CALL.match(compact):
        combine = pl.min_horizontal(parts) if compact.startswith("min") else pl.max_horizontal(parts)
    elif len(columns) == 2:
        combine = parts[0] - parts[1]
    else:
        combine = parts[0]
    value = pl.when(pl.any_horizontal(p.is_null() for p in parts)).then(None).otherwise(combine)
    return joined.select(*keys, value.cast(pl.Float64).fill_null(worst).alias("value"))


def spread_values(frames: Mapping[str, pl.DataFrame], metric: str, level: float) -> pl.DataFrame | None:
    """Per grid cell whose best seed reaches ``level``: its configuration columns and ``value`` = B - R of ``metric``
    (one column; None if absent)."""
    if metric not in frames or {"r", "b"} - set(frames[metric].columns):
        return None
    frame = frames[metric].filter(pl.col("b") >= level)
    keys = [c for c in frame.columns if c not in _RGB]
    return frame.select(*keys, (pl.col("b") - pl.col("r")).cast(pl.Float64).fill_null(0.0).alias("value"))


def in_region(cells: pl.DataFrame, region: Mapping[str, Any], what: str = "where") -> pl.DataFrame:
    """The cells inside ``region``.

    Raises:
        ValueError: the region names a column the cells do not have (naming it and the columns there are).
    """
    for column, spec in region.items():
        if column not in cells.columns:
            raise ValueError(f"finding {what} names column {column!r}, not a column of the grid; allowed: "
                             f"{', '.join(c for c in cells.columns if c != 'value')}")
        if isinstance(spec, Mapping):
            col = pl.col(column).cast(pl.Float64)
            if "min" in spec:
                cells = cells.filter(col >= spec["min"] - REL_TOL * abs(spec["min"]))
            if "max" in spec:
                cells = cells.filter(col <= spec["max"] + REL_TOL * abs(spec["max"]))
        else:
            cells = cells.filter(approx_in(column, list(spec)))
    return cells


def outside_grid(region: Mapping[str, Any], axis_values: Callable[[str], list | None]) -> str:
    """Why no cell of the grid can lie in ``region`` (empty when some can): an axis the region bounds takes
    no value there at this scale, e.g. ``seq_len in {4}`` on a grid of seq_len 16, 64, 256. A column that is
    not a grid axis (a fixed value) is left to :func:`in_region`."""
    for column, spec in region.items():
        values = axis_values(column)
        if values is None:
            continue
        swept = pl.DataFrame({column: values}, strict=False)
        if swept.schema[column].is_numeric() or not isinstance(spec, Mapping):
            if in_region(swept, {column: spec}).is_empty():
                shown = ", ".join(map(_shown, values))
                return f"the grid has no cell at {region_text({column: spec})} (its {column}: {shown})"
    return ""


def region_text(region: Mapping[str, Any]) -> str:
    """``learning_rate >= 0.027, seq_len in {256}`` (empty for the whole grid)."""
    parts = []
    for column, spec in region.items():
        if isinstance(spec, Mapping):
            parts += [f"{column} {sign} {_shown(spec[k])}" for k, sign in (("min", ">="), ("max", "<=")) if k in spec]
        else:
            parts.append(f"{column} in {{{', '.join(map(_shown, spec))}}}")
    return ", ".join(parts)


def _shown(value: Any) -> str:
    """A float to 3 significant digits (a learning rate 0.3^7 -> 0.000219), a whole number whole (d >= 1024, which
    study.json's region bounds hold as 1024.0), anything else as it is."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return f"{value:.3g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class PanelValue:
    """A panel value's statistic over the region, and whether cells not yet run could raise or lower it."""

    value: float | None
    may_rise: bool
    may_fall: bool


def _moves(statistic: str, lower_better: bool) -> tuple[bool, bool]:
    """(may rise, may fall) when cells are missing: a best can only get better, a worst only worse."""
    if statistic == "best":
        return (not lower_better, lower_better)
    if statistic == "worst":
        return (lower_better, not lower_better)
    return (True, True)


def panel_statistic(cells: pl.DataFrame, panel: str, statistic: str, level: float, metric: str,
                    complete: set[str] | None) -> dict[str, PanelValue]:
    """Per panel value (as a string) in ``cells``: the statistic of ``value`` (see the module docstring)."""
    lower = lower_is_better(metric)
    v = pl.col("value")
    agg = {
        "best": v.min() if lower else v.max(),
        "worst": v.max() if lower else v.min(),
        "mean": v.mean(),
        "spread": v.mean(),
        "share": (v >= level).mean(),
    }[statistic]
    rows = cells.group_by(panel).agg(agg.alias("stat")).iter_rows()
    rise, fall = _moves(statistic, lower)
    out = {}
    for key, stat in rows:
        done = complete is None or str(key) in complete
        out[str(key)] = PanelValue(stat, rise and not done, fall and not done)
    return out
