"""The reader's side of a study's results table: the Delta table plus the trial files not yet folded into it.

A study's rows live in one Delta Lake table, ``<study>/table/`` (artifacts: ``<study>/artifacts_table/<name>/``),
and in the files of finished trials that the driver has not folded into it yet (``trials/<key>.parquet``,
``artifacts/<name>/<key>.parquet``). The driver folds files in one commit and deletes them only after it
(``study/results/table.py``), so a reader that lists the files *first* and then loads the table sees every row once:

* a file whose key is in the table was folded (a fold that stopped between its commit and its deletes): ignored;
* any other file is pending: read beside the table.

The Delta log is the truth about what the table holds; the keys in it come from its ``trial_key`` column.

``deltalake`` is imported only where a table exists: a study whose rows are all trial files (a GPU node that runs
without deltalake folds nothing, study.run.tuner) reads with polars alone.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from analysis.data.location import Location, key_of
from core.errors import OneLineError

if TYPE_CHECKING:
    from deltalake import DeltaTable

TRIALS = "trials"  # trials/<trial_key>.parquet: one file per finished trial, until folded
TABLE = "table"  # the study's Delta table
ARTIFACTS = "artifacts"  # artifacts/<name>/<trial_key>.parquet
ARTIFACT_TABLES = "artifacts_table"  # artifacts_table/<name>/: one Delta table per artifact name
FAILED = "failed"  # failed/<trial_key>.json: trials that failed for good


class NoDeltalake(OneLineError, RuntimeError):
    """A study that has a Delta table, read where ``deltalake`` is not installed."""

    exit_code = 1  # not the input's fault


def has_deltalake() -> bool:
    """Whether ``deltalake`` can be imported here (a GPU node's offline bundle leaves it out: docs/gpu.md)."""
    try:
        return importlib.util.find_spec("deltalake") is not None
    except (ImportError, ValueError):
        return False


def open_table(location: Location, relative: str) -> DeltaTable | None:
    """The Delta table at ``<study>/<relative>`` (its latest version), or None when there is none yet."""
    if not has_deltalake():
        if location.exists(f"{relative}/_delta_log"):
            raise NoDeltalake(f"{location.join(relative)} is a Delta table and deltalake is not installed here; "
                              "allowed: a machine with deltalake (pip install deltalake), or a study of trial files")
        return None
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    try:
        return DeltaTable(location.join(relative), storage_options=location.options() or None)
    except TableNotFoundError:
        return None


def table_keys(table: DeltaTable | None) -> frozenset[str]:
    """The trial keys in the table at its loaded version (one column read)."""
    if table is None:
        return frozenset()
    keys = pl.scan_delta(table).select(pl.col("trial_key").unique()).collect()
    return frozenset(keys.get_column("trial_key").to_list())


@dataclass(frozen=True)
class Snapshot:
    """A consistent view of one kind of rows: the table at one version and the files it does not hold."""

    table: DeltaTable | None
    keys: frozenset[str]  # trial keys in the table at that version
    pending: tuple[str, ...]  # files (paths or URIs) whose key is not in the table
    folded: tuple[str, ...]  # files whose key is in the table: readers ignore them, the next fold deletes them

    def scan_table(self) -> pl.LazyFrame | None:
        """The table's rows at the snapshot's version, or None without a table."""
        return None if self.table is None else pl.scan_delta(self.table)


def snapshot(location: Location, files: str = TRIALS, table: str = TABLE, *, need_keys: bool = True) -> Snapshot:
    """The table ``table`` and the ``files/*.parquet`` not in it. Files are listed before the table is loaded (see
    the module docstring). ``need_keys=False`` skips reading the table's keys when no file is pending."""
    listed = location.list_files(files, ".parquet")
    delta = open_table(location, table)
    keys = table_keys(delta) if (listed or need_keys) else frozenset()
    pending = tuple(f for f in listed if key_of(f) not in keys)
    folded = tuple(f for f in listed if key_of(f) in keys)
    return Snapshot(delta, keys, pending, folded)


def trial_snapshot(location: Location) -> Snapshot:
    """The trials' rows: ``table/`` and ``trials/``."""
    return snapshot(location, TRIALS, TABLE)


def artifact_snapshot(location: Location, name: str) -> Snapshot:
    """The artifact ``name``: ``artifacts_table/<name>/`` and ``artifacts/<name>/``."""
    return snapshot(location, f"{ARTIFACTS}/{name}", f"{ARTIFACT_TABLES}/{name}", need_keys=False)


def artifact_names(location: Location) -> list[str]:
    """The artifact names of a study: in files, in tables or both."""
    names: set[str] = set()
    for sub in (ARTIFACTS, ARTIFACT_TABLES):
        names.update(location.list_dirs(sub))
    return sorted(names)
