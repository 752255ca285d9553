"""Report sections registered by name, and the context they read.

Every part of a report is a section: ``fn(page, ctx) -> list[str]`` writes to the page (``page.h``,
``page.p``, ``page.figure``, ``page.table``, ``page.raw``) and returns summary lines for ``summary.txt``
and the CLI. The built-in sections (progress, grids, robustness, ...) are registered by the modules of
:mod:`analysis.report`; a paper whose results are not (only) RGB grids registers its own in
:mod:`analysis.papers` (the Neural Data Router's Table 1, the expressive-attention curves, the atlas
leaderboard) and a study asks for them by name (``Study.sections``). Every module of the packages in
:data:`SECTION_PACKAGES` is imported on first use, so a new paper's sections are one new file there.

:class:`ReportContext` holds what sections share: the parsed study definition, the rows, and statistics
computed once on first use (the training statistics, the coverage counts). Sections are registered in
:data:`SECTIONS`, the project's one :class:`core.registry.Registry`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import polars as pl

from analysis.data.location import Location
from analysis.data.meta import parse_meta
from analysis.data.published_cells import is_cells
from analysis.data.rows import TrialScan, open_trials
from analysis.render.page import Page
from analysis.stats.coverage import Coverage, model_status, study_coverage
from analysis.stats.published import PublishedGrid, published_grid
from analysis.stats.training_stats import TrainingStats, training_stats
from analysis.stats.verdicts.evaluate import Verdict
from core.registry import Registry
from search_spaces.record import StudyRecord

#: The packages whose modules register sections (named, not imported: the papers' sections import this module).
SECTION_PACKAGES: tuple[str, ...] = ("analysis.report", "analysis.papers")


@dataclass
class ReportContext:
    """What every section of one report reads; statistics are computed on first use and shared."""

    meta: StudyRecord
    location: Location  # the study directory: a local path or a URI, read in place
    scan: TrialScan
    #: Filled by the findings section: the verdicts the CLI turns into an exit status.
    verdicts: list[Verdict] = field(default_factory=list)

    @classmethod
    def open(cls, study_dir: Path | str | Location, meta: StudyRecord) -> ReportContext:
        """The context of the study in ``study_dir`` (its table and trial files scanned, unreadable ones
        recorded)."""
        location = Location.of(study_dir)
        return cls(meta=meta, location=location, scan=open_trials(location))

    @classmethod
    def of(cls, lf: pl.LazyFrame, meta: StudyRecord | Mapping[str, Any], study_dir: Path) -> ReportContext:
        """A context over given rows (tests, notebooks): no files, nothing unreadable."""
        return cls(meta=parse_meta(meta, "meta"), location=Location.of(study_dir), scan=TrialScan(lf, (), ()))

    @property
    def lf(self) -> pl.LazyFrame:
        """Every readable row of the study."""
        if self.scan.lf is None:
            raise FileNotFoundError(f"no readable trial results in {self.location.uri}")
        return self.scan.lf

    @property
    def name(self) -> str:
        """The study's name (or its directory's)."""
        return self.meta.name or self.location.name

    @cached_property
    def columns(self) -> tuple[str, ...]:
        """The columns of the rows (none when nothing is readable)."""
        return () if self.scan.lf is None else tuple(self.scan.lf.collect_schema().names())

    @property
    def trained(self) -> bool:
        """Whether the rows are of trained models: every training family's rows carry the ``learning_rate`` they
        trained at; a measurement's (Fig. 1: poolings at initialisation) carry none."""
        return "learning_rate" in self.columns

    @cached_property
    def training(self) -> TrainingStats:
        """The training statistics (one scan of the rows)."""
        return training_stats(self.lf, self.meta)

    @cached_property
    def published(self) -> PublishedGrid | None:
        """The study's published grid on its cells (None when it names no reference or has no data)."""
        if not self.meta.reference or not self.trained or self.training.empty or is_cells(self.meta.reference):
            return None  # a table of means (analysis.data.published_cells) has no grid of its own to draw
        return published_grid(self.meta.reference, self.training.select_rgb, self.training.axes,
                              self.training.metrics.grids)

    @cached_property
    def counts(self) -> pl.DataFrame:
        """One status per trained model (trial x seed)."""
        if self.trained:
            return self.training.counts
        lf = self.lf
        if "status" not in lf.collect_schema().names():
            lf = lf.with_columns(status=pl.lit("ok"))
        return model_status(lf).collect()

    @cached_property
    def coverage(self) -> Coverage:
        """Trials expected, readable, unreadable, failed and pending; models diverged and failed."""
        return study_coverage(self.location, self.meta, self.scan.readable, self.scan.unreadable, self.counts)


Section = Callable[[Page, ReportContext], list[str]]
Applies = Callable[[ReportContext], bool]


def _import_section_modules() -> None:
    """Every module of :data:`SECTION_PACKAGES`: what registers the project's own sections."""
    for package in SECTION_PACKAGES:
        for module in pkgutil.iter_modules(importlib.import_module(package).__path__, f"{package}."):
            importlib.import_module(module.name)


#: Every report section by name (the project's own imported on first read; a plugin's registers on import).
SECTIONS: Registry[Section] = Registry("report section", fill=_import_section_modules)
_APPLIES: dict[str, Applies] = {}  # a section's ``applies``, by its name in SECTIONS


def section(name: str, *, applies: Applies | None = None) -> Callable[[Section], Section]:
    """Decorator registering a report section under ``name`` in :data:`SECTIONS` (a duplicate name is a
    RegistryError); ``applies``: whether the rows call for it when it is one of the report's built-in sections
    (None: always). A section a study names is always drawn."""

    def decorator(fn: Section) -> Section:
        SECTIONS.add(name, fn)
        if applies is not None:
            _APPLIES[name] = applies
        return fn

    return decorator


def applies(name: str, ctx: ReportContext) -> bool:
    """Whether the built-in section ``name`` has something to show in these rows."""
    get_section(name)
    return name not in _APPLIES or _APPLIES[name](ctx)


def trained(ctx: ReportContext) -> bool:
    """The ``applies`` of the sections that show training (RGB grids, curves, tables, findings)."""
    return ctx.trained


def get_section(name: str) -> Section:
    """The section registered as ``name``; a RegistryError (a ValueError) listing the valid names otherwise."""
    return SECTIONS.get(name)
