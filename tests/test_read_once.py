"""What the verdicts read once and share (a replay reads a cell table's columns and a curve's intervals thousands of
times): the shared arrays cannot be changed by a reader, and a curve with another grid floor reads its own intervals,
never the ones of the curve it was made from."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl
import pytest

from analysis.stats.intervals.curves import curve, curve_bounds
from analysis.stats.intervals.errors import Errors
from analysis.stats.table import CellTable, Column

ERRORS = Errors(0.025, 0.025)


def _rows() -> pl.DataFrame:
    """Three seeds of one cell, evaluated at four steps; the seeds close together."""
    rng = np.random.default_rng(5)
    return pl.DataFrame({"step": np.repeat([10, 20, 30, 40], 3), "seed": np.tile([0, 1, 2], 4),
                         "val_accuracy": np.clip(np.repeat([0.2, 0.5, 0.7, 0.8], 3) + rng.normal(0, 0.01, 12), 0, 1)})


def test_a_tables_columns_are_read_once_and_read_only() -> None:
    table = CellTable.of(pl.DataFrame({"d_model": [8, 16], "g": [0.5, None], "n": [2, 0]}))
    g = table.values(Column.G, 0.0)
    assert g.tolist() == [0.5, 0.0] and table.values(Column.G, 0.0) is g  # the same array, not a second read
    assert np.isnan(table.values(Column.G)[1])  # another fill is another array
    with pytest.raises(ValueError, match="read-only"):
        g[0] = 1.0
    assert table.replace(table.frame.with_columns(g=pl.lit(0.9))).values(Column.G, 0.0).tolist() == [0.9, 0.9]


def test_a_table_keeps_its_columns_when_nothing_changes_them() -> None:
    table = CellTable.of(pl.DataFrame({"d_model": [8, 16], "g": [0.5, 0.7], "n": [2, 2]}))
    assert table.replace(table.frame).frame is table.frame
    shuffled = table.frame.select(Column.G, "d_model", *[c for c in table.frame.columns if c not in ("g", "d_model")])
    assert table.replace(shuffled).frame.columns == table.frame.columns  # other orders are put back in order
    assert table.key(1) == (16,) and table.key(0, columns=["n", "d_model"]) == (2, 8)


def test_a_curve_with_another_grid_floor_reads_its_own_intervals() -> None:
    points = curve(_rows(), "val_accuracy", "step")
    own_low, own_high = curve_bounds(points, "val_accuracy", ERRORS, union=False)
    assert curve_bounds(points, "val_accuracy", ERRORS, union=False)[0] is own_low  # shared by every reader
    with pytest.raises(ValueError, match="read-only"):
        own_low[0] = 0.0
    floored = replace(points, grid=(0.05, 3.0))  # a split cell's seed noise in the grid as the floor
    low, high = curve_bounds(floored, "val_accuracy", ERRORS, union=False)
    assert (low < own_low).all() and (high > own_high).all(), (low, own_low)
    # and the shared intervals are per error and per union: a Bonferroni end over the four evaluations is wider
    wide_low, _ = curve_bounds(points, "val_accuracy", ERRORS, union=True)
    assert (wide_low < own_low).all()
