"""The mixer files of this folder by name (no torch import): ``trainables/mixers/<name>.py`` is the mixer ``<name>``.

Read by the package (:func:`trainables.mixers.mixer_names`, which the atlas enumerates without importing torch) and by
the registry's first use (:data:`trainables.mixers.base.MIXERS` imports every file then).
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
NOT_MIXERS = {"base"}


def mixer_names() -> tuple[str, ...]:
    """Every mixer's name, from the file names alone (sorted; no torch import)."""
    return tuple(sorted(p.stem for p in HERE.glob("*.py") if not p.stem.startswith("_") and p.stem not in NOT_MIXERS))
