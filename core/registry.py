"""The one name -> object registry, filled by a decorator (as in RobertCsordas/ndr).

Every pluggable part lives in one ``Registry`` keyed by a stable name, the name that appears in configs, Parquet
columns and study definitions: mixers, tasks, architectures and model families (trainables), studies
(search_spaces) and report sections (analysis.report.sections). A duplicate or an unknown name is a
:class:`RegistryError` (one line naming the kind, the name and the valid ones).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from core.errors import OneLineError

T = TypeVar("T")


class RegistryError(OneLineError, ValueError):
    """A duplicate name, or an unknown one (the message lists the valid names): bad input, exit status 2."""


@dataclass(frozen=True)
class Registration:
    """One registration: what registered (``kind``, ``name``, the object) and the module it names as its own.

    ``module``: the one passed to :meth:`Registry.add` / :meth:`Registry.register`, else what the object says of
    itself (a class's or function's ``__module__``), else None (an instance: :mod:`trainables.plugins` then finds
    it among a module's globals, as ``FAMILY = register_family(Family(...))`` keeps it).
    """

    kind: str
    name: str
    obj: object
    module: str | None


#: Every registration of this process in order. Plugin loading (:mod:`trainables.plugins`) reads it to say what each
#: of your modules registered; nothing here looks at who called (no stack walking).
REGISTRATIONS: list[Registration] = []


def module_of(obj: object) -> str | None:
    """The module a class or function says it was defined in (None for other objects)."""
    return getattr(obj, "__module__", None) if inspect.isclass(obj) or inspect.isroutine(obj) else None


class Registry(Generic[T]):
    """Maps stable names to objects; refuses duplicates and reports valid names on a miss.

    Args:
        kind: what is registered, used in error messages (``"architecture"`` -> ``unknown architecture 'x'``).
        fill: called once, before the registry is first read, to import what registers the project's own entries
            (the mixers' files): every reader sees a filled registry, whichever name it imported. Adding does not
            fill (an addition runs while a module is being imported, which the fill may import again).
    """

    def __init__(self, kind: str, *, fill: Callable[[], None] | None = None) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._fill = fill

    def _filled(self) -> dict[str, T]:
        if self._fill is not None:
            fill, self._fill = self._fill, None  # cleared first: the modules it imports register here
            try:
                fill()
            except BaseException:
                self._fill = fill
                raise
        return self._items

    def register(self, name: str, *, module: str | None = None) -> Callable[[T], T]:
        """Decorator registering the decorated object under ``name``; a duplicate name is a RegistryError.
        ``module``: the module to credit it to (default: the object's own ``__module__``)."""

        def decorator(obj: T) -> T:
            self.add(name, obj, module=module)
            return obj

        return decorator

    def add(self, name: str, obj: T, *, module: str | None = None) -> None:
        """Register ``obj`` under ``name`` (non-decorator form); a duplicate name is a RegistryError. ``module``: the
        module to credit it to (default: a class's or function's own ``__module__``; :class:`Registration`)."""
        if name in self._items:
            raise RegistryError(f"duplicate {self.kind} name {name!r}; already registered: {self._items[name]!r}")
        self._items[name] = obj
        REGISTRATIONS.append(Registration(self.kind, name, obj, module or module_of(obj)))

    def get(self, name: str) -> T:
        """Return the object registered as ``name``, or raise :class:`RegistryError` listing the valid names."""
        items = self._filled()
        try:
            return items[name]
        except (KeyError, TypeError):
            raise RegistryError(f"unknown {self.kind} {name!r}; valid: {', '.join(items) or 'none'}") from None

    def names(self) -> list[str]:
        """All registered names in registration order."""
        return list(self._filled())

    def __contains__(self, name: object) -> bool:
        return name in self._filled()

    def __iter__(self) -> Iterator[str]:
        return iter(self._filled())

    def __len__(self) -> int:
        return len(self._filled())
