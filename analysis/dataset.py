"""Reading a study's results dataset (see ``docs/results.md``) lazily with polars.

A study directory holds ``study.json``, ``trials/<trial_key>.parquet`` (one file per trial) and
``failed/<trial_key>.json``. Reading never needs Ray, torch or the code that wrote the files.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

#: Tolerant scan options: trial files may lack optional columns (e.g. case accuracies) or store
#: an integer column narrower than the first file does.
_SCAN_KWARGS: dict[str, Any] = {
    "missing_columns": "insert",
    "extra_columns": "ignore",
    "cast_options": pl.ScanCastOptions(integer_cast="upcast", float_cast="upcast"),
}


def trial_files(study_dir: str | Path) -> list[Path]:
    """The trial Parquet files of a study, sorted by name."""
    return sorted((Path(study_dir) / "trials").glob("*.parquet"))


def failed_files(study_dir: str | Path) -> list[Path]:
    """The ``failed/*.json`` records of trials that failed for good."""
    return sorted((Path(study_dir) / "failed").glob("*.json"))


@dataclass(frozen=True)
class TrialScan:
    """The trial files of a study split into readable and unreadable, and one LazyFrame over the readable."""

    lf: pl.LazyFrame | None
    readable: tuple[Path, ...]
    unreadable: tuple[Path, ...]


def open_trials(study_dir: str | Path) -> TrialScan:
    """All readable rows of a study as one LazyFrame, and which files could not be read (no warning: the caller
    reports them). ``lf`` is None when no file is readable.

    Every file's footer is read once (cheap) to build one schema over all of them: trials of other model
    families bring their own columns, and an all-null column in one file may be typed in another. A file with a
    valid footer but corrupt data pages is only detected when the frame is collected.
    """
    files = trial_files(study_dir)
    schema, good, conflicts = _union_schema(files)
    readable = set(good)
    bad = tuple(f for f in files if f not in readable)
    if not good:
        return TrialScan(None, (), bad)
    if conflicts:  # one column typed differently by two families (e.g. grad_clip: a switch vs a norm)
        lf = pl.concat([pl.scan_parquet(f) for f in good], how="diagonal_relaxed")
    else:
        lf = pl.scan_parquet(good, schema=schema, **_SCAN_KWARGS)
    return TrialScan(lf, tuple(good), bad)


def scan_study(study_dir: str | Path) -> pl.LazyFrame:
    """All rows of a study as one LazyFrame over ``<study_dir>/trials/*.parquet`` (see :func:`open_trials`).

    Unreadable files are skipped with a ``RuntimeWarning`` naming each of them; the report and the CLI use
    :func:`open_trials` and show them as unreadable instead.

    Raises:
        FileNotFoundError: when the study has no ``trials/`` directory or no readable trial file in it.
    """
    trials = Path(study_dir) / "trials"
    scan = open_trials(study_dir)
    if not scan.readable and not scan.unreadable:
        raise FileNotFoundError(
            f"no trial results in {trials} (expected trials/<trial_key>.parquet files; "
            "has the study run yet?)"
        )
    for path in scan.unreadable:
        warnings.warn(f"skipping unreadable trial file {path}", RuntimeWarning, stacklevel=2)
    if scan.lf is None:
        raise FileNotFoundError(f"no readable trial results in {trials}")
    return scan.lf


def _union_schema(files: list[Path]) -> tuple[dict[str, pl.DataType], list[Path], set[str]]:
    """One schema over every file's footer, the readable files (the caller reports the others), and the
    columns that two files type differently (non-null types; the caller then relaxes them to a supertype).

    Trials of one study may hold different columns (another model family's metrics) or an all-null column
    in one file that is typed in another (case accuracies of a ``mode`` trial beside a ``cases`` one): a
    scan that took its schema from the first file would drop or refuse them. Footers only: cheap.
    """
    schema: dict[str, pl.DataType] = {}
    good: list[Path] = []
    conflicts: set[str] = set()
    for path in files:
        try:
            columns = pl.read_parquet_schema(path)
        except Exception:  # noqa: BLE001 - any reader error means "unreadable"; the caller reports it
            continue
        good.append(path)
        for name, dtype in columns.items():
            if schema.get(name, pl.Null) == pl.Null:
                schema[name] = dtype
            elif dtype != pl.Null and dtype != schema[name]:
                conflicts.add(name)
    return schema, good, conflicts


def scan_artifacts(study_dir: str | Path, name: str) -> pl.LazyFrame | None:
    """The artifact table ``name`` of every trial (``artifacts/<name>/*.parquet``), or None when absent.

    Artifacts are extra per-trial tables a model family saves (e.g. attention maps of a probe input);
    each row carries the ``trial_key`` of the trial that wrote it.
    """
    schema, files, conflicts = _union_schema(sorted((Path(study_dir) / "artifacts" / name).glob("*.parquet")))
    if not files:
        return None
    if conflicts:
        return pl.concat([pl.scan_parquet(f) for f in files], how="diagonal_relaxed")
    return pl.scan_parquet(files, schema=schema, **_SCAN_KWARGS)


def load_study_meta(study_dir: str | Path) -> dict[str, Any]:
    """The study definition ``<study_dir>/study.json`` as a dict.

    Raises:
        FileNotFoundError: when the study has no ``study.json``.
    """
    path = Path(study_dir) / "study.json"
    if not path.is_file():
        raise FileNotFoundError(f"no study definition {path}")
    return json.loads(path.read_text())


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
