"""A tiny name -> object registry filled by a decorator (as in RobertCsordas/ndr).

Every pluggable part of the trainables (mixers, tasks, architectures) lives in one ``Registry`` keyed by a
stable name; the name is what appears in configs and Parquet columns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


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
