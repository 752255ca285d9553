"""What the numbers of a report are computed from: trials expected, readable, unreadable, failed, pending.

A statistic over a grid silently changes when a trial is missing (the best G of a panel is a max over its
cells), so every count here is shown beside the numbers, and :meth:`Coverage.note` says which numbers were
computed without which trials. :func:`expected_cells` tells the findings which cells the grid will have
(a cell not run yet spans its metric's range: a bound it could flip stays undecided).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from analysis.data.location import Location, key_of
from analysis.data.rows import failed_keys
from search_spaces.record import StudyRecord


@dataclass(frozen=True)
class Coverage:
    """Trial and model counts of a study directory (a trial: a configuration and the seeds it trains; a model: one
    of those seeds)."""

    expected: int | None  # the trials the study runs (StudyRecord.trial_count; None: not stated)
    readable: int  # trials in the table or in a readable pending file
    unreadable: tuple[str, ...]  # pending trial files whose Parquet footer cannot be read
    failed: tuple[str, ...]  # trial keys in failed/*.json without a trial file
    models: int = 0  # (trial, seed) pairs with rows
    diverged_models: int = 0
    failed_models: int = 0
    trials_with_diverged: int = 0

    @property
    def total(self) -> int:
        """The trials the bar is drawn over: expected, or what exists when the study states none."""
        seen = self.readable + len(self.unreadable) + len(self.failed)
        return max(self.expected, seen) if self.expected is not None else seen

    @property
    def pending(self) -> int:
        """Trials neither readable, unreadable nor failed (not run yet, or lost)."""
        return max(0, self.total - self.readable - len(self.unreadable) - len(self.failed))

    @property
    def complete(self) -> bool:
        """Every expected trial readable, none failed, no model failed."""
        return (not self.unreadable and not self.failed and self.pending == 0 and self.failed_models == 0
                and self.readable > 0)

    def missing_text(self) -> str:
        """``1 unreadable, 2 failed, 3 pending`` (only the non-zero parts), or ``""``."""
        parts = [(len(self.unreadable), "unreadable"), (len(self.failed), "failed"), (self.pending, "pending")]
        text = ", ".join(f"{n} {what}" for n, what in parts if n)
        if self.failed_models:
            text += (", " if text else "") + f"{self.failed_models} models failed inside readable trials"
        return text

    def note(self) -> str:
        """Empty when complete, else ``computed from 8 of 9 trials (1 unreadable)``: shown beside every number."""
        if self.complete:
            return ""
        return f"computed from {self.readable} of {self.total} trials ({self.missing_text()})"


def model_counts(counts: pl.DataFrame) -> dict[str, int]:
    """Models, diverged / failed models and trials with a diverged seed, from :func:`model_status`."""
    if counts.is_empty():
        return {"models": 0, "diverged_models": 0, "failed_models": 0, "trials_with_diverged": 0}
    status = counts.get_column("status")
    diverged = counts.filter(pl.col("status") == "diverged")
    return {
        "models": counts.height,
        "diverged_models": int((status == "diverged").sum()),
        "failed_models": int((status == "failed").sum()),
        "trials_with_diverged": diverged.get_column("trial_key").n_unique(),
    }


def study_coverage(location: Location, meta: StudyRecord, readable: Sequence[str], unreadable: Sequence[str],
                   counts: pl.DataFrame) -> Coverage:
    """The :class:`Coverage` of the study at ``location`` from its readable trial keys, unreadable pending files
    and the per-model status frame ``counts``."""
    present = {*readable, *(key_of(p) for p in unreadable)}
    failed = tuple(k for k in failed_keys(location) if k not in present)
    return Coverage(expected=meta.trial_count(), readable=len(readable), unreadable=tuple(unreadable), failed=failed,
                    **model_counts(counts))


def expected_cells(meta: StudyRecord, by: Sequence[str]) -> pl.DataFrame | None:
    """Every cell (configuration over ``by``'s axes) a grid study will have at its scale; None when the study is no
    full grid over them (a sampler's study, or a continuous axis). A column of ``by`` that is no axis of the study (a
    value its base configuration fixes, e.g. gros2024's learning rate) does not tell cells apart and is left out."""
    axes = [c for c in by if c in meta.axes]
    values = {c: meta.axis_values(c) for c in axes}
    if meta.sampler != "grid" or not axes or any(v is None for v in values.values()):
        return None
    frame = pl.DataFrame({axes[0]: values[axes[0]]}, strict=False)
    for column in axes[1:]:
        frame = frame.join(pl.DataFrame({column: values[column]}, strict=False), how="cross")
    return frame


def model_status(lf: pl.LazyFrame) -> pl.LazyFrame:
    """One status per trained model (trial x seed): failed, else diverged if any row is, else ok."""
    return lf.group_by("trial_key", "seed").agg(
        pl.when((pl.col("status") == "failed").any())
        .then(pl.lit("failed"))
        .when((pl.col("status") == "diverged").any())
        .then(pl.lit("diverged"))
        .otherwise(pl.lit("ok"))
        .alias("status"),
        pl.len().alias("n_rows"),
    )
