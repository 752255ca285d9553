"""The driver's side of a study's results table: fold finished trial files into the Delta table, then delete them.

Trials keep writing their own file atomically (``trials/<key>.parquet``: the unit of resume and fault tolerance);
the driver alone (``study run`` as it goes, ``study compact`` for a study on disk) folds them into
``<study>/table/`` in batches. One fold of a batch is:

1. list the files, load the table (its keys): a file whose key is already in the table was committed by a fold
   that stopped before deleting it, so it is deleted now; the others are the batch;
2. read the batch, sort it by (trial_key, seed, step) and append it to the table in **one commit** (a few large
   zstd Parquet files; new columns join the schema);
3. delete the batch's files.

A kill before 2's commit leaves the table as it was and the files in place; after it, readers ignore the files
whose key is in the table (``analysis.data.lake``) and the next fold deletes them. No row is lost or seen twice.
Trial files written before the ``mixer`` column meant one thing fold as rows written now
(``analysis.data.columns``); rows already in the table keep their values, and readers map them as they read.
Artifacts (``artifacts/<name>/``) fold the same way into ``artifacts_table/<name>/``, once their trial is in the
table. Only one process may fold a study at a time: ``study run`` and ``study compact`` hold the study's lock.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import polars as pl
from deltalake import ColumnProperties, CommitProperties, WriterProperties, write_deltalake

from analysis.data.columns import current_columns
from analysis.data.lake import ARTIFACT_TABLES, ARTIFACTS, TABLE, TRIALS, artifact_names, open_table, snapshot
from analysis.data.location import Location, key_of
from analysis.data.rows import scan_files
from core.errors import OneLineError

#: Test hook: kill this process (SIGKILL) at one step of a fold: before_commit, after_commit or mid_delete.
CRASH_ENV = "STUDY_FOLD_CRASH_AT"
CRASH_POINTS = ("before_commit", "after_commit", "mid_delete")
BATCH_FILES = 2000  # trial files per commit (bounds the driver's memory: ~2 MB of rows per 100 files)
MAX_TABLE_FILES = 32  # more data files than this (many small folds): rewrite them into few large ones
SORT_BY = ("trial_key", "seed", "step")
#: Created with the table: files replaced by a rewrite stay one hour for readers still on the older version.
TABLE_CONFIG = {"delta.deletedFileRetentionDuration": "interval 1 hours"}
_FLOATS = ColumnProperties(dictionary_enabled=False, encoding="BYTE_STREAM_SPLIT")


def _writer(schema: pl.Schema) -> WriterProperties:
    """zstd at level 1 (level 3 is 1% smaller, and slower); float columns byte-stream-split (15% smaller on the
    2,000-trial bench: measured metrics do not repeat, so dictionaries do not pay)."""
    floats = {name: _FLOATS for name, dtype in schema.items() if dtype.is_float()}
    return WriterProperties(compression="ZSTD", compression_level=1, column_properties=floats)


class FoldError(OneLineError, RuntimeError):
    """A batch that cannot join the table (a column typed differently from the table's); its files stay."""

    exit_code = 1  # not the input's fault


@dataclass
class Folded:
    """What one fold did."""

    trials: int = 0  # trial files whose rows were committed now
    cleaned: int = 0  # files deleted whose rows an interrupted fold had committed
    unreadable: list[str] = field(default_factory=list)  # pending trial files left in place (footer unreadable)
    artifacts: int = 0  # artifact files committed now
    commits: int = 0
    seconds: float = 0.0

    def line(self) -> str:
        """``table: 120 trial files folded in 1 commit (0 left over from an interrupted fold)``."""
        text = (f"table: {self.trials} trial file(s) folded in {self.commits} commit(s), {self.artifacts} artifact "
                f"file(s), {self.cleaned} left over from an interrupted fold deleted ({self.seconds:.1f} s)")
        if self.unreadable:
            text += f"; {len(self.unreadable)} unreadable trial file(s) left in place"
        return text


def _crash(point: str, at: str | None) -> None:
    if at == point:
        os.kill(os.getpid(), signal.SIGKILL)


def fold(location: Location, *, batch: int = BATCH_FILES, crash_at: str | None = None) -> Folded:
    """Fold every finished trial file (and its artifacts) of the study at ``location`` into its tables.

    ``crash_at`` (default: ``$STUDY_FOLD_CRASH_AT``) kills the process at that step: for the crash tests.

    Raises:
        FoldError: a column of a file has a type the table's column cannot hold without loss (the files stay).
    """
    crash_at = crash_at if crash_at is not None else os.environ.get(CRASH_ENV)
    if crash_at and crash_at not in CRASH_POINTS:
        raise ValueError(f"invalid {CRASH_ENV} {crash_at!r}; allowed: {', '.join(CRASH_POINTS)}")
    started = time.perf_counter()
    result = Folded()
    keys = _fold_kind(location, TRIALS, TABLE, result, batch=batch, crash_at=crash_at, trials=True)
    for name in artifact_names(location):
        _fold_kind(location, f"{ARTIFACTS}/{name}", f"{ARTIFACT_TABLES}/{name}", result, batch=batch,
                   crash_at=crash_at, only=keys)
    result.seconds = time.perf_counter() - started
    return result


def _fold_kind(location: Location, files: str, table: str, result: Folded, *, batch: int, crash_at: str | None,
               trials: bool = False, only: frozenset[str] | None = None) -> frozenset[str]:
    """Fold ``files/*.parquet`` into the table ``table``; returns the keys in the table afterwards.
    ``only``: fold only files of these keys (artifacts of trials in the trial table)."""
    snap = snapshot(location, files, table)
    for path in snap.folded:  # committed by a fold that was interrupted before it deleted them
        location.delete(path)
    result.cleaned += len(snap.folded)
    pending = [p for p in snap.pending if only is None or key_of(p) in only]
    keys = set(snap.keys)
    for start in range(0, len(pending), batch):
        chunk = pending[start:start + batch]
        done = _append(location, table, chunk, result, crash_at=crash_at, trials=trials)
        for i, path in enumerate(done):
            if i == len(done) // 2:
                _crash("mid_delete", crash_at)
            location.delete(path)
        keys.update(key_of(p) for p in done)
        if trials:
            result.trials += len(done)
        else:
            result.artifacts += len(done)
    _compact_files(location, table)
    return frozenset(keys)


def _append(location: Location, table: str, files: Sequence[str], result: Folded, *, crash_at: str | None,
            trials: bool) -> list[str]:
    """Append the rows of ``files`` to the table in one commit; returns the files committed (the readable ones)."""
    frame, good = _read_batch(location, files, result if trials else None)
    if frame is None:
        return []
    if trials:  # old files fold as rows written now (analysis.data.columns): new folds hold one meaning
        frame = current_columns(frame)
    frame = _fit_to_table(location, table, _in_order(frame))
    _crash("before_commit", crash_at)
    # One chunk: the writer keeps the order of its rows (several chunks were written interleaved).
    write_deltalake(location.join(table), frame.rechunk().to_arrow(), mode="append", schema_mode="merge",
                    storage_options=location.options() or None, writer_properties=_writer(frame.schema),
                    configuration=TABLE_CONFIG,
                    commit_properties=CommitProperties(custom_metadata={"folded_files": str(len(good))}))
    result.commits += 1
    _crash("after_commit", crash_at)
    return good


def _read_batch(location: Location, files: Sequence[str], result: Folded | None) -> tuple[pl.DataFrame | None,
                                                                                        list[str]]:
    """The rows of ``files`` and the files they came from. Fast path: one scan with the first file's schema, which
    fails (never casts or drops) on a column another file adds or types otherwise, or on an unreadable file; then
    the footers give one schema over all files and name the unreadable ones (``result.unreadable``)."""
    options = location.options() or None
    try:
        return pl.scan_parquet(list(files), missing_columns="insert", extra_columns="raise",
                               storage_options=options).collect(), list(files)
    except (pl.exceptions.PolarsError, OSError):
        pass
    lf, good, bad = scan_files(location, files)
    if result is not None:
        result.unreadable += bad
    if lf is None:
        return None, []
    try:
        return lf.collect(), good
    except pl.exceptions.PolarsError:  # a valid footer over corrupt pages: find the files one by one
        return _collect_one_by_one(location, good, result)


def _collect_one_by_one(location: Location, files: list[str],
                        result: Folded | None) -> tuple[pl.DataFrame | None, list[str]]:
    frames, good = [], []
    for path in files:
        lf, _, _ = scan_files(location, [path])
        try:
            frames.append(lf.collect())  # type: ignore[union-attr]
            good.append(path)
        except pl.exceptions.PolarsError:
            if result is not None:
                result.unreadable.append(path)
    return (pl.concat(frames, how="diagonal_relaxed") if frames else None), good


def _in_order(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows sorted by (trial_key, seed, step), for compression and file skipping; files are read in key
    order and trials write in (seed, step) order, so this is mostly a check (a sort only when it fails)."""
    keys = [c for c in SORT_BY if c in frame.columns]
    if not keys:
        return frame
    ordered = pl.lit(True)
    for key in reversed(keys):  # lexicographic: (a, b, c) >= previous row's
        col, prev = pl.col(key), pl.col(key).shift(1)
        ordered = (col > prev) | ((col == prev) & ordered)
    if frame.select(ordered.fill_null(True).all()).item():
        return frame
    return frame.sort(keys)


def _fit_to_table(location: Location, table: str, frame: pl.DataFrame) -> pl.DataFrame:
    """Cast the batch's columns to the table's types where that loses nothing (null -> any, an integer into a
    wider integer or a float column); a column the table types otherwise is a FoldError naming both types."""
    delta = open_table(location, table)
    if delta is None:
        return frame
    existing = pl.scan_delta(delta).collect_schema()
    casts = []
    for name, dtype in frame.schema.items():
        want = existing.get(name)
        if want is None or want == dtype or want == pl.Null:
            continue
        lossless = (dtype == pl.Null or (dtype.is_integer() and (want.is_float() or want.is_integer()))
                    or (dtype.is_float() and want.is_float()))
        if not lossless:
            raise FoldError(f"cannot fold into {location.join(table)}: column {name!r} is {dtype} in the trial files "
                            f"and {want} in the table; allowed: the table's type (the files stay, readers see them)")
        casts.append(pl.col(name).cast(want))
    return frame.with_columns(casts) if casts else frame


def _compact_files(location: Location, table: str) -> None:
    """Rewrite many small data files (one per fold of a long run) into few large ones, and delete the files
    that rewrites replaced more than the retention (one hour) ago: the table stays a handful of files."""
    delta = open_table(location, table)
    if delta is None or len(delta.file_uris()) <= MAX_TABLE_FILES:
        return
    delta.optimize.compact(writer_properties=_writer(pl.scan_delta(delta).collect_schema()))
    delta.vacuum(dry_run=False)


def fold_step(location: Location, echo: Callable[[str], None], *, quiet: bool = False) -> Folded | None:
    """One fold during a run: echoes what it did (``quiet``: only what needs attention, for the folds between
    the end-of-Tuner ones); a FoldError is echoed (the files stay, readers see them) instead of stopping."""
    try:
        result = fold(location)
    except FoldError as error:
        echo(f"warning: {error}")
        return None
    if result.unreadable or (not quiet and (result.trials or result.cleaned or result.artifacts)):
        echo(result.line())
    return result
