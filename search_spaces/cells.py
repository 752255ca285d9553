"""What makes two grid values one cell, for the driver and the analysis alike.

Grid values are computed (0.3 ** k), written to Parquet and JSON and read back, so a float may come back a few ulps
off, and an integer axis may come back as a float (64 -> 64.0). One rule says which values are one cell's:
:func:`key_value` maps a value to its cell's canonical value (a number rounded to :data:`KEY_DIGITS` significant
digits, as a float; anything else its text), :func:`cell_key` is a cell's hashable form of it, and
:func:`same_value` is "the same canonical value". Being an equality of canonical values, it is transitive, which a
tolerance is not (a within b and b within c, yet a and c apart), so the key and :func:`same_value` never disagree.

A value within a few ulps of a rounding boundary of the 6th digit (``0.5 ** 10 = 0.0009765625`` is one exactly) is
rounded to :data:`_NOISE_DIGITS` significant digits first, which takes the ulps away, so it keeps its key whichever
side of the boundary they put it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: A relative tolerance of the size of the key's rounding (half a unit in the 6th digit is 5e-7 to 5e-6 of a value),
#: for filters that compare numbers inside a polars expression rather than through :func:`key_value`.
REL_TOL: float = 1e-6

#: A cell's hashable key: (column, value) pairs (:func:`cell_key`).
CellKey = tuple[tuple[str, object], ...]

#: Significant digits a number keeps in a cell key.
KEY_DIGITS = 6

#: Significant digits a number is rounded to before :data:`KEY_DIGITS`: far below a grid's resolution, far above a
#: float's few-ulp noise (about 1e-16 of the value).
_NOISE_DIGITS = 12


def key_value(value: object) -> object:
    """A value as a cell key holds it, its cell's canonical value: a number rounded to :data:`KEY_DIGITS` significant
    digits (as a float, so 64 and 64.0 are one; first to :data:`_NOISE_DIGITS`, so a few ulps never move it across a
    rounding boundary), anything else as its text. A canonical value is its own: ``key_value(key_value(v))`` is
    ``key_value(v)``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(f"{float(f'{float(value):.{_NOISE_DIGITS}g}'):.{KEY_DIGITS}g}")
    return str(value)


def same_value(a: object, b: object) -> bool:
    """Whether two grid values are one cell's: the same canonical value (:func:`key_value`), exactly when their
    cell keys are equal."""
    return key_value(a) == key_value(b)


def cell_key(cell: Mapping[str, Any], names: tuple[str, ...] | None = None) -> CellKey:
    """The hashable key of a cell (column -> value), over ``names`` (None: every column of the cell, in name order;
    a name the cell lacks counts as None)."""
    names = tuple(sorted(cell)) if names is None else names
    return tuple((name, key_value(cell.get(name))) for name in names)
