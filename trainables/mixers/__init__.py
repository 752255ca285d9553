"""Token mixers, one file each: ``trainables/mixers/<name>.py`` registers the mixer ``<name>``.

Adding a mixer is adding its file (see ``docs/mixers.md``): every module of this package is imported when the
registry is first used, the atlas enumerates the files, and the mixer trains solo and packed in every family
that takes one (its maths is written over leading batch dimensions, ``trainables.stacked``).

There is one registry, :data:`trainables.mixers.base.MIXERS`; ``trainables.mixers.MIXERS`` is that same object, and
either is filled with every mixer file on its first use (read or registration). Importing this package does not
import torch: :func:`mixer_names` reads the file names, and ``MIXERS`` (with torch) is imported on first access.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from trainables.mixers._files import mixer_names

if TYPE_CHECKING:  # not imported at run time: importing this package does not import torch
    from trainables.mixers.base import Mixer


def build_mixer(name: str, d_model: int, n_heads: int, *, hidden_norm: bool, attention_gelu: bool,
                dropout: float, options: Mapping[str, Any] | None = None) -> Mixer:
    """The mixer ``name``; of ``options`` (e.g. ``seq_len``, ``conv_width``) it gets those its constructor takes.

    Mixer-specific settings (the bilinear projection's fixed length, the convolution's filter length) travel
    this way so that every other mixer keeps the common ``Mixer(d_model, n_heads, ...)`` interface.
    """
    from trainables.mixers.base import MIXERS

    cls = MIXERS.get(name)
    accepted = inspect.signature(cls).parameters
    extra = {k: v for k, v in (options or {}).items() if k in accepted}
    return cls(d_model, n_heads, hidden_norm=hidden_norm, attention_gelu=attention_gelu, dropout=dropout, **extra)


def __getattr__(attribute: str) -> Any:
    if attribute == "MIXERS":  # the one registry, trainables.mixers.base's, imported on first use (PEP 562)
        from trainables.mixers.base import MIXERS

        globals()["MIXERS"] = MIXERS
        return MIXERS
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


__all__ = ["MIXERS", "build_mixer", "mixer_names"]
