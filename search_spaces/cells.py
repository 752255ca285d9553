"""What makes two grid values one cell, for the driver and the analysis alike.

Grid values are computed (0.3 ** k), written to Parquet and JSON and read back, so a float may come back a few ulps
off, and an integer axis may come back as a float (64 -> 64.0). Two values are one cell's when they are equal, floats
within a relative :data:`REL_TOL`; :func:`cell_key` is the hashable form of that rule (numbers rounded to
:data:`KEY_DIGITS` significant digits, so that any two values within REL_TOL of grid values share a key).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Two grid values closer than this (relative) are one cell: 0.3**k and the like are inexact.
REL_TOL: float = 1e-6

#: A cell's hashable key: (column, value) pairs (:func:`cell_key`).
CellKey = tuple[tuple[str, object], ...]

#: Significant digits a number keeps in a cell key (REL_TOL is half a unit in the 6th digit).
KEY_DIGITS = 6


def same_value(a: object, b: object) -> bool:
    """Equal, floats to a relative :data:`REL_TOL`: what makes two grid values one cell."""
    if _is_number(a) and _is_number(b) and (isinstance(a, float) or isinstance(b, float)):
        fa, fb = float(a), float(b)  # type: ignore[arg-type]
        return abs(fa - fb) <= REL_TOL * max(abs(fa), abs(fb), 1e-300)
    return a == b


def key_value(value: object) -> object:
    """A value as a cell key holds it: a number rounded to :data:`KEY_DIGITS` significant digits (as a float, so
    64 and 64.0 are one), anything else as its text."""
    if _is_number(value):
        return float(f"{float(value):.{KEY_DIGITS}g}")  # type: ignore[arg-type]
    return str(value)


def cell_key(cell: Mapping[str, Any], names: tuple[str, ...] | None = None) -> CellKey:
    """The hashable key of a cell (column -> value), over ``names`` (None: every column of the cell, in name order;
    a name the cell lacks counts as None)."""
    names = tuple(sorted(cell)) if names is None else names
    return tuple((name, key_value(cell.get(name))) for name in names)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
