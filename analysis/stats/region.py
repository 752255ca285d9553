"""Regions of a grid: the cells a finding reads (``where``), matched as the one cell rule says.

A region is ``column -> [values]`` (floats equal to a relative :data:`search_spaces.cells.REL_TOL`) or
``column -> {"min": a, "max": b}`` (inclusive, to the same tolerance).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from search_spaces.axes import show_value
from search_spaces.cells import REL_TOL


def approx_in(column: str, values: Sequence[object]) -> pl.Expr:
    """``column`` is one of ``values``; floats compared to a relative 1e-6 (0.3**k is inexact)."""
    floats = [float(v) for v in values if isinstance(v, float)]
    if not floats:
        return pl.col(column).is_in(list(values))
    col = pl.col(column).cast(pl.Float64)
    return pl.any_horizontal([(col - v).abs() <= REL_TOL * abs(v) for v in floats])


def in_region(cells: pl.DataFrame, region: Mapping[str, Any], allowed: Sequence[str],
              what: str = "where") -> pl.DataFrame:
    """The rows of ``cells`` inside ``region``.

    Raises:
        ValueError: the region names a column not among ``allowed`` (the grid's columns), naming it and them.
    """
    for column, spec in region.items():
        if column not in allowed or column not in cells.columns:
            raise ValueError(f"finding {what} names column {column!r}, not a column of the grid; allowed: "
                             f"{', '.join(allowed)}")
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
            if in_region(swept, {column: spec}, [column]).is_empty():
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
