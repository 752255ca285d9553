"""Extra report sections a study asks for by name (``Study.sections``), beside the generic grids.

A paper whose results are not (only) RGB grids registers a section here: e.g. the Neural Data Router's
Table 1 and its attention/gate maps, or the expressive-attention learning curves. A section is
``fn(page, lf, meta, study_dir) -> list[str]``: it writes to the report page (``page.h``, ``page.p``,
``page.figure``, ``page.table``, ``page.raw``) and returns summary lines for ``summary.txt`` / the CLI.
Modules that define sections are listed in :data:`SECTION_MODULES` and imported on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

Section = Callable[[Any, pl.LazyFrame, dict[str, Any], Path], list[str]]

SECTION_MODULES: tuple[str, ...] = (
    "analysis.leaderboard",
    "analysis.ndr",
    "analysis.expressive",
)
_SECTIONS: dict[str, Section] = {}


def section(name: str) -> Callable[[Section], Section]:
    """Decorator registering a report section under ``name``."""

    def decorator(fn: Section) -> Section:
        if name in _SECTIONS:
            raise ValueError(f"duplicate report section {name!r}")
        _SECTIONS[name] = fn
        return fn

    return decorator


def get_section(name: str) -> Section:
    """The section registered as ``name``; ValueError listing the valid names otherwise."""
    for module in SECTION_MODULES:
        importlib.import_module(module)
    if name not in _SECTIONS:
        raise ValueError(f"unknown report section {name!r}; valid: {', '.join(sorted(_SECTIONS)) or 'none'}")
    return _SECTIONS[name]
