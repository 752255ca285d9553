"""What the model families' config dataclasses share: type checks (bools are not numbers here) and the
dict round trip with errors that name the field, the bad value and what is allowed."""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any, ClassVar, TypeVar

C = TypeVar("C", bound="ConfigFields")


def is_int(v: object) -> bool:
    """An integer (numpy integers included), not a bool."""
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def is_real(v: object) -> bool:
    """A real number (ints and numpy floats included), not a bool."""
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


class ConfigFields:
    """Mixin of a frozen config dataclass: ``field_names``, ``from_dict``, ``to_dict`` and ``invalid``.

    ``REQUIRED`` names the fields ``from_dict`` insists on (those without a default).
    """

    REQUIRED: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def field_names(cls) -> list[str]:
        """Every hyperparameter name in declaration order (the Parquet columns)."""
        return [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls: type[C], d: dict[str, Any]) -> C:
        """Build from a flat dict; unknown or missing keys and invalid values raise ValueError naming the field."""
        allowed = cls.field_names()
        for key, value in d.items():
            if key not in allowed:
                raise ValueError(f"invalid hyperparameter {key!r}={value!r}; allowed: {', '.join(allowed)}")
        for key in cls.REQUIRED:
            if key not in d:
                raise ValueError(f"missing hyperparameter {key!r}; required: {', '.join(cls.REQUIRED)}")
        return cls(**d)

    def to_dict(self) -> dict[str, Any]:
        """The fields as given (None = a default still unresolved)."""
        return dataclasses.asdict(self)  # type: ignore[call-overload]

    def invalid(self, name: str, allowed: str) -> ValueError:
        """The error for field ``name``: its value and what is allowed."""
        return ValueError(f"invalid {name}={getattr(self, name)!r}; allowed: {allowed}")
