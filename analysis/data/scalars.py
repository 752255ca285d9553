"""A polars aggregate of a numeric column as a Python number, typed.

polars types ``Series.max()``, ``.min()`` and ``.mean()`` as any Python literal (a date, a string, a list ...) or
None, whatever the column; :func:`as_float` and :func:`as_int` are ``float(...)`` and ``int(...)`` of such a value
that say which column it came from when it is not a number (an empty or all-null column's None).
"""

from __future__ import annotations


def _number(value: object, what: str) -> int | float:
    if isinstance(value, int | float):  # bool too: a bool column's max, as int() and float() take it
        return value
    raise ValueError(f"{what}: {value!r}; expected a number (a numeric column with a value)")


def as_float(value: object, what: str) -> float:
    """``float(value)`` of a numeric aggregate; ValueError naming ``what`` when it is not a number."""
    return float(_number(value, what))


def as_int(value: object, what: str) -> int:
    """``int(value)`` of a numeric aggregate (a float is truncated, as ``int`` does); ValueError naming ``what``
    when it is not a number."""
    return int(_number(value, what))
