"""The number a finding tests, per panel value: a statistic of a metric's G over a region of the grid.

A finding (``study.json["findings"]``, docs/cli.md) names a ``metric``: a results column, or per cell
``min(a, b, ...)``, ``max(a, b, ...)`` or ``a - b`` of the G of columns (G: the mean over seeds, maximised
over training, as in the paper's grids; each column is maximised on its own, as the case grids' R, G and B
are). ``where`` keeps the cells of a region: ``column -> [values]`` (floats equal to a relative 1e-6) or
``column -> {"min": a, "max": b}`` (inclusive). The ``statistic`` over the region's cells, per panel value:

* ``best`` - the best G (max; min for a loss): what the paper's cross marks;
* ``worst`` - the worst G (every cell of the region is at least / at most it);
* ``mean`` - the mean G of the cells;
* ``share`` - the share of cells with G >= ``level`` (a cell without a G, every seed diverged, does not count).

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


def cell_values(frames: Mapping[str, pl.DataFrame], metric: str) -> pl.DataFrame | None:
    """Per grid cell: its configuration columns and ``value``, the metric's G there (None: a column is missing).

    ``frames``: column -> RGB frame per configuration (``g`` = G), as :func:`analysis.stats.rgb.rgb_from_step_stats`.
    """
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
    return joined.select(*keys, value.cast(pl.Float64).alias("value"))


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
        "share": (v.fill_null(float("-inf")) >= level).mean(),
    }[statistic]
    rows = cells.group_by(panel).agg(agg.alias("stat")).iter_rows()
    rise, fall = _moves(statistic, lower)
    out = {}
    for key, stat in rows:
        done = complete is None or str(key) in complete
        out[str(key)] = PanelValue(stat, rise and not done, fall and not done)
    return out
