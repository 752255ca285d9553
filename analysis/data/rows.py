"""Reading a study's results (see ``docs/results.md``) lazily with polars, where they live.

A study directory holds ``study.json`` (read by :mod:`analysis.data.meta` alone), the Delta table ``table/``
and the files of finished trials not folded into it yet (``trials/<trial_key>.parquet``), and
``failed/<trial_key>.json``; :mod:`analysis.data.lake` says which rows a reader sees. The directory may be a
local path or an object-store URI: nothing is downloaded first. Reading never needs Ray, torch or the code
that wrote the files.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

from analysis.data.columns import current_columns
from analysis.data.lake import FAILED, Snapshot, artifact_snapshot, trial_snapshot
from analysis.data.location import Location, key_of

#: Tolerant scan options: trial files may lack optional columns (e.g. case accuracies) or store
#: an integer column narrower than the first file does.
_SCAN_KWARGS: dict[str, Any] = {
    "missing_columns": "insert",
    "extra_columns": "ignore",
    "cast_options": pl.ScanCastOptions(integer_cast="upcast", float_cast="upcast"),
}
Where = str | Path | Location


def failed_keys(where: Where) -> list[str]:
    """The keys of the ``failed/<trial_key>.json`` records (trials that failed for good), sorted."""
    return [key_of(f) for f in Location.of(where).list_files(FAILED, ".json")]


@dataclass(frozen=True)
class TrialScan:
    """The rows of a study (one LazyFrame over the table and the pending trial files), the keys of the readable
    trials, and the pending trial files that could not be read."""

    lf: pl.LazyFrame | None
    readable: tuple[str, ...]  # trial keys: in the table, or in a readable pending file
    unreadable: tuple[str, ...]  # pending trial files (paths or URIs) whose Parquet footer cannot be read


def open_trials(where: Where) -> TrialScan:
    """All readable rows of a study as one LazyFrame, and which pending files could not be read (no warning:
    the caller reports them). ``lf`` is None when nothing is readable.

    The pending files' footers are read once (cheap) to build one schema over all of them: trials of other model
    families bring their own columns, and an all-null column in one file may be typed in another. A file with a
    valid footer but corrupt data pages is only detected when the frame is collected. Rows written before the
    ``mixer`` column meant one thing read as rows written now (:mod:`analysis.data.columns`).
    """
    location = Location.of(where)
    snap = trial_snapshot(location)
    lf, good, bad = _scan(location, snap)
    readable = sorted(snap.keys | {key_of(f) for f in good})
    return TrialScan(None if lf is None else current_columns(lf), tuple(readable), bad)


def _scan(location: Location, snap: Snapshot) -> tuple[pl.LazyFrame | None, list[str], tuple[str, ...]]:
    """(rows of the table and the readable pending files, the readable pending files, the unreadable ones)."""
    files, good, bad = scan_files(location, snap.pending)
    parts = [lf for lf in (snap.scan_table(), files) if lf is not None]
    if not parts:
        return None, good, bad
    return (parts[0] if len(parts) == 1 else pl.concat(parts, how="diagonal_relaxed")), good, bad


def scan_files(location: Location, files: Sequence[str]) -> tuple[pl.LazyFrame | None, list[str], tuple[str, ...]]:
    """One LazyFrame over the Parquet ``files`` (paths or URIs under ``location``) with one schema over all of
    them, the readable files and the unreadable ones (footer unreadable); the frame is None when none is
    readable."""
    schema, good, conflicts = _union_schema(location, list(files))
    readable = set(good)
    bad = tuple(f for f in files if f not in readable)
    if not good:
        return None, good, bad
    options = location.options() or None
    if conflicts:  # one column typed differently by two families (e.g. grad_clip: a switch vs a norm)
        lf = pl.concat([pl.scan_parquet(f, storage_options=options) for f in good], how="diagonal_relaxed")
    else:
        lf = pl.scan_parquet(good, schema=schema, storage_options=options, **_SCAN_KWARGS)
    return lf, good, bad


def scan_study(where: Where) -> pl.LazyFrame:
    """All rows of a study as one LazyFrame over its table and pending trial files (see :func:`open_trials`).

    Unreadable files are skipped with a ``RuntimeWarning`` naming each of them; the report and the CLI use
    :func:`open_trials` and show them as unreadable instead.

    Raises:
        FileNotFoundError: when the study has no table and no readable trial file.
    """
    location = Location.of(where)
    scan = open_trials(location)
    if not scan.readable and not scan.unreadable:
        raise FileNotFoundError(
            f"no trial results in {location.uri} (expected table/ or trials/<trial_key>.parquet files; "
            "has the study run yet?)"
        )
    for path in scan.unreadable:
        warnings.warn(f"skipping unreadable trial file {path}", RuntimeWarning, stacklevel=2)
    if scan.lf is None:
        raise FileNotFoundError(f"no readable trial results in {location.join('trials')}")
    return scan.lf


def _union_schema(location: Location, files: list[str]) -> tuple[dict[str, pl.DataType], list[str], set[str]]:
    """One schema over every file's footer, the readable files (the caller reports the others), and the
    columns that two files type differently (non-null types; the caller then relaxes them to a supertype).

    Trials of one study may hold different columns (another model family's metrics) or an all-null column
    in one file that is typed in another (case accuracies of a ``mode`` trial beside a ``cases`` one): a
    scan that took its schema from the first file would drop or refuse them. Footers only: cheap.
    """
    schema: dict[str, pl.DataType] = {}
    good: list[str] = []
    conflicts: set[str] = set()
    for path in files:
        try:
            columns = _footer_schema(location, path)
        except Exception:  # noqa: BLE001 - any reader error means "unreadable"; the caller reports it
            continue
        good.append(path)
        for name, dtype in columns.items():
            if schema.get(name, pl.Null) == pl.Null:
                schema[name] = dtype
            elif dtype != pl.Null and dtype != schema[name]:
                conflicts.add(name)
    return schema, good, conflicts


def _footer_schema(location: Location, path: str) -> dict[str, pl.DataType]:
    if location.is_local:
        return dict(pl.read_parquet_schema(path))
    with location.open_input_file(path) as handle:
        return dict(pl.DataFrame(pq.read_schema(handle).empty_table()).schema)


def scan_artifacts(where: Where, name: str) -> pl.LazyFrame | None:
    """The artifact table ``name`` of every trial (``artifacts_table/<name>/`` plus the pending
    ``artifacts/<name>/*.parquet``), or None when absent.

    Artifacts are extra per-trial tables a model family saves (e.g. attention maps of a probe input);
    each row carries the ``trial_key`` of the trial that wrote it.
    """
    location = Location.of(where)
    lf, _, _ = _scan(location, artifact_snapshot(location, name))
    return lf


def find_study_dir(default: str = "results/richter2020.fig7.smoke") -> Path:
    """The study directory a notebook analyses: ``$STUDY_DIR``, else `default`.

    A relative path is taken from the working directory, or from its parent when the notebook runs
    inside ``notebooks/``.
    """
    import os

    path = Path(os.environ.get("STUDY_DIR", default))
    if not path.is_absolute() and not path.exists() and (Path("..") / path).exists():
        return Path("..") / path
    return path
