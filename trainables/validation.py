"""Type checks shared by the model families' config dataclasses (bools are not numbers here)."""

from __future__ import annotations

import numbers


def is_int(v: object) -> bool:
    """An integer (numpy integers included), not a bool."""
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def is_real(v: object) -> bool:
    """A real number (ints and numpy floats included), not a bool."""
    return isinstance(v, numbers.Real) and not isinstance(v, bool)
