"""A tiny name -> object registry filled by a decorator (as in RobertCsordas/ndr).

Every pluggable part of the trainables (mixers, tasks, architectures) lives in one ``Registry`` keyed by a
stable name; the name is what appears in configs and Parquet columns.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")

#: Every registration of this process in order: (kind, name, the module whose code registered it). Plugin loading
#: (:mod:`trainables.plugins`) reads it to say what each of your modules registered.
REGISTRATIONS: list[tuple[str, str, str]] = []


def _registering_module() -> str:
    """The module whose code called :meth:`Registry.add` (through ``register`` or a helper of this floor)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__") in ("trainables.registry", "trainables.catalog"):
        frame = frame.f_back
    return frame.f_globals.get("__name__", "?") if frame is not None else "?"


class Registry(Generic[T]):
    """Maps stable names to objects; refuses duplicates and reports valid names on a miss.

    Args:
        kind: what is registered, used in error messages (``"architecture"`` -> ``unknown architecture 'x'``).
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator registering the decorated object under ``name``; a duplicate name raises ValueError."""

        def decorator(obj: T) -> T:
            self.add(name, obj)
            return obj

        return decorator

    def add(self, name: str, obj: T) -> None:
        """Register ``obj`` under ``name`` (non-decorator form); a duplicate name raises ValueError."""
        if name in self._items:
            raise ValueError(f"duplicate {self.kind} name {name!r}; already registered: {self._items[name]!r}")
        self._items[name] = obj
        REGISTRATIONS.append((self.kind, name, _registering_module()))

    def get(self, name: str) -> T:
        """Return the object registered as ``name``, or raise ValueError listing the valid names."""
        try:
            return self._items[name]
        except (KeyError, TypeError):
            raise ValueError(f"unknown {self.kind} {name!r}; valid: {', '.join(self._items)}") from None

    def names(self) -> list[str]:
        """All registered names in registration order."""
        return list(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)
