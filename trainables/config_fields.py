"""What the model families' config dataclasses share: type checks (bools are not numbers here), the dict
round trip, and field checks whose errors name the field, the bad value and what is allowed.

A config's ``__post_init__`` states its constraints as calls to the ``require_*`` methods (one line per
field or group of fields); each normalises the value it accepts (numpy integers become ``int``, numbers
``float``), so a config built from a Parquet row or an Optuna sample holds plain Python values.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from core.probe_names import probe_request

C = TypeVar("C", bound="ConfigFields")


def is_int(v: object) -> bool:
    """An integer (numpy integers included), not a bool."""
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def is_real(v: object) -> bool:
    """A real number (ints and numpy floats included), not a bool."""
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


class ConfigFields:
    """Mixin of a frozen config dataclass: ``field_names``, ``from_dict``, ``to_dict`` and the field checks.

    ``REQUIRED`` names the fields ``from_dict`` insists on (those without a default).
    """

    REQUIRED: ClassVar[tuple[str, ...]] = ()
    if TYPE_CHECKING:  # every subclass is a dataclass: what dataclasses.fields() and asdict() look for
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    @classmethod
    def field_names(cls) -> list[str]:
        """Every hyperparameter name in declaration order (the Parquet columns)."""
        return [f.name for f in dataclasses.fields(cls)]

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
        return dataclasses.asdict(self)

    def invalid(self, name: str, allowed: str) -> ValueError:
        """The error for field ``name``: its value and what is allowed."""
        return ValueError(f"invalid {name}={getattr(self, name)!r}; allowed: {allowed}")

    def _set(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)  # the dataclasses are frozen; normalising happens in __post_init__

    def require_ints(self, names: Sequence[str], *, minimum: int = 1, optional: bool = False,
                     allowed: str | None = None) -> None:
        """Each field an integer >= ``minimum`` (None too when ``optional``); normalised to ``int``."""
        for name in names:
            v = getattr(self, name)
            if v is None and optional:
                continue
            if not is_int(v) or v < minimum:
                text = allowed or ("a positive integer" if minimum == 1 else f"an integer >= {minimum}")
                raise self.invalid(name, text)
            self._set(name, int(v))

    def require_real(self, name: str, *, low: float, high: float | None = None, low_open: bool = True,
                     optional: bool = False, allowed: str | None = None) -> None:
        """The field a number in (low, high) (``low_open=False``: [low, high)); normalised to ``float``."""
        v = getattr(self, name)
        if v is None and optional:
            return
        ok = is_real(v) and (v > low if low_open else v >= low) and (high is None or v < high)
        if not ok:
            if allowed is None:
                bound = f"> {low:g}" if low_open else f">= {low:g}"
                allowed = f"a number {bound}" if high is None else f"a number in [{low:g}, {high:g})"
            raise self.invalid(name, allowed)
        self._set(name, float(v))

    def require_choice(self, name: str, choices: Sequence[object], *, allowed: str | None = None) -> None:
        """The field one of ``choices``."""
        if getattr(self, name) not in choices:
            raise self.invalid(name, allowed or ", ".join(map(str, choices)))

    def require_bools(self, names: Sequence[str], *, allowed: str, optional: bool = True) -> None:
        """Each field True or False, or None when ``optional`` (a numpy bool is normalised to ``bool``)."""
        for name in names:
            v = getattr(self, name)
            if (v is None and optional) or isinstance(v, bool):
                continue
            if type(v).__name__ != "bool_":
                raise self.invalid(name, allowed)
            self._set(name, bool(v))

    def require_probes(self, allowed: Sequence[str], name: str = "probes") -> None:
        """The field in its canonical form (:func:`core.probe_names.probe_request`: None, or the names asked of
        ``allowed``, comma-separated); anything else is refused naming the field, the value and ``allowed``."""
        self._set(name, probe_request(getattr(self, name), allowed, field=name))

    def without_unasked_probes(self, columns: dict[str, Any]) -> dict[str, Any]:
        """The hyperparameter columns without ``probes`` when none are asked: a trial without probes writes the
        columns it wrote before probes existed."""
        if columns.get("probes", "") is None:
            del columns["probes"]
        return columns
