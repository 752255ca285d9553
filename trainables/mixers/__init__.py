"""Token mixers, one file each: ``trainables/mixers/<name>.py`` registers the mixer ``<name>``.

Adding a mixer is adding its file (see ``docs/mixers.md``): every module of this package is imported when the
registry is first used, the atlas enumerates the files, and the mixer trains solo and packed in every family
that takes one (its maths is written over leading batch dimensions, ``trainables.stacked``).

Importing this package does not import torch: :func:`mixer_names` reads the file names, and ``MIXERS`` (the
filled registry) is loaded on first access.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_HERE = Path(__file__).parent
_NOT_MIXERS = {"base"}


def mixer_names() -> tuple[str, ...]:
    """Every mixer's name, from the file names alone (sorted; no torch import)."""
    return tuple(sorted(p.stem for p in _HERE.glob("*.py") if not p.stem.startswith("_") and p.stem not in _NOT_MIXERS))


@functools.cache
def _load() -> Any:
    """Import every mixer file; each must register exactly the mixer its file is named after."""
    from trainables.mixers.base import MIXERS

    for name in mixer_names():
        before = set(MIXERS.names())
        importlib.import_module(f"{__name__}.{name}")
        added = set(MIXERS.names()) - before
        if added - {name} or (name not in MIXERS):
            raise ValueError(f"invalid mixer file trainables/mixers/{name}.py: it registers {sorted(added)}; "
                             f"allowed: exactly the mixer named after the file, {name!r}")
    return MIXERS


def build_mixer(name: str, d_model: int, n_heads: int, *, hidden_norm: bool, attention_gelu: bool,
                dropout: float, options: Mapping[str, Any] | None = None) -> Any:
    """The mixer ``name``; of ``options`` (e.g. ``seq_len``, ``conv_width``) it gets those its constructor takes.

    Mixer-specific settings (the bilinear projection's fixed length, the convolution's filter length) travel
    this way so that every other mixer keeps the common ``Mixer(d_model, n_heads, ...)`` interface.
    """
    cls = _load().get(name)
    accepted = inspect.signature(cls).parameters
    extra = {k: v for k, v in (options or {}).items() if k in accepted}
    return cls(d_model, n_heads, hidden_norm=hidden_norm, attention_gelu=attention_gelu, dropout=dropout, **extra)


def __getattr__(attribute: str) -> Any:
    if attribute == "MIXERS":  # the filled registry, loaded on first use (PEP 562)
        registry = _load()
        globals()["MIXERS"] = registry
        return registry
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


__all__ = ["MIXERS", "build_mixer", "mixer_names"]
