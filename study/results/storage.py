"""Where a study's results live: `<storage>/<study>/` on a local path or any URI pyarrow reaches.

Layout and row schema: docs/results.md. Every write is atomic (temporary name, then move), so a
reader sees a whole file or none; the Delta table `table/` plus the trial files not folded into it yet
(analysis.data.lake), not Tune's own state, are the record that resume and analysis rely on. Folding is
study/results/table.py's job (the driver's alone).
"""

from __future__ import annotations

import errno
import functools
import io
import json
import os
import uuid
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, overload

import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from analysis.data.columns import current_columns
from analysis.data.lake import ARTIFACTS, FAILED, TABLE, TRIALS, open_table, trial_snapshot
from analysis.data.location import Location, key_of
from core.errors import OneLineError, one_line

#: Trials :meth:`StudyStorage.read_trials` takes from the table in one scan (bounds the rows held at once).
READ_BATCH = 2_000


class StorageError(OneLineError, OSError):
    """Storage that cannot be used, in one line that names it and says what is wrong (:func:`storage_fault`)."""


#: What an OSError's errno says about the results root (the words after ``invalid --storage '...': ``).
_IN_THE_WAY = "not a directory (a file is in the way)"
_FAULTS = {errno.ENOENT: "no such directory (and none could be made there)", errno.ENOTDIR: _IN_THE_WAY,
           errno.EEXIST: _IN_THE_WAY, errno.EACCES: "not writable (permission denied)",
           errno.EPERM: "not writable (operation not permitted)", errno.EROFS: "not writable (read-only file system)",
           errno.ENOSPC: "full (no space left on device)", errno.EDQUOT: "full (disk quota exceeded)"}
#: The same for object storage, whose errors carry no errno: words of the provider's message -> what they mean.
_DENIED = "not writable (permission denied)"
_REMOTE_FAULTS = (("no such bucket", "no such bucket"), ("nosuchbucket", "no such bucket"),
                  ("bucket does not exist", "no such bucket"), ("not found", "no such bucket or path"),
                  ("access denied", _DENIED), ("accessdenied", _DENIED), ("forbidden", _DENIED))


@overload  # reaching the storage itself failed: always its fault
def storage_fault(storage: str, error: OSError | ValueError, *, certain: Literal[True]) -> StorageError: ...
@overload
def storage_fault(storage: str, error: BaseException, *, certain: bool = False) -> StorageError | None: ...
def storage_fault(storage: str, error: BaseException, *, certain: bool = False) -> StorageError | None:
    """What ``error`` says about the results root ``storage`` (a ``--storage`` value), as a StorageError of one
    line: ``invalid --storage 'x': <what>: <path>`` where what is no such directory, not a directory, not writable
    (permission denied, read-only), full (no space left), an invalid URI, or unreachable (the provider's words).
    None when the error is not about the storage: an OSError whose file lies outside it (another component's),
    unless ``certain`` (it came from reaching the storage itself)."""
    if not isinstance(error, OSError):
        if isinstance(error, ValueError):  # pyarrow's ArrowInvalid for a URI it cannot resolve
            return StorageError(f"invalid --storage {storage!r}: invalid URI ({one_line(error, typed=False)})")
        return None
    if isinstance(error, StorageError):
        return error
    remote = "://" in storage and not storage.startswith("file://")
    files = [f for f in (error.filename, error.filename2) if isinstance(f, str | os.PathLike)]
    if remote:
        whole = str(error)  # a provider's details may follow a first line that says little (deltalake's)
        bucket = storage.split("://", 1)[1].split("/", 1)[0]
        if bucket not in whole and not certain:
            return None  # not about the storage's bucket: another component's
        what = next((meaning for words, meaning in _REMOTE_FAULTS if words in whole.lower().replace("_", " ")), None)
        return StorageError(f"invalid --storage {storage!r}: " + (f"{what}: {storage}" if what else
                                                                   f"unreachable ({one_line(error, typed=False)})"))
    root = Path(storage.removeprefix("file://")).expanduser().resolve()
    mine = [f for f in files if _within(Path(f), root)]
    if not mine and (files or error.errno not in _FAULTS) and not certain:
        return None  # about another file (a plugin, torch's cache ...): not the storage's fault
    what = (_FAULTS.get(error.errno) if error.errno is not None else None) or one_line(error, typed=False)
    return StorageError(f"invalid --storage {storage!r}: {what}: {mine[0] if mine else root}")


def _within(path: Path, root: Path) -> bool:
    """Whether ``path`` is the root, lies under it, or is one of its parents (which the root's creation makes)."""
    path = path.expanduser().resolve()
    return path.is_relative_to(root) or root.is_relative_to(path)


def _resolve(storage: str) -> tuple[pafs.FileSystem, str, bool]:
    """(filesystem, root path inside it, is_local) for a directory path or a URI."""
    if "://" in storage and not storage.startswith("file://"):
        fs, root = pafs.FileSystem.from_uri(storage)
        return fs, root.rstrip("/"), False
    path = Path(storage.removeprefix("file://")).expanduser().resolve()
    return pafs.LocalFileSystem(), str(path), True


class TrialStore(Protocol):
    """What a trial reads and writes of its study's results (study.trial: a Ray worker, or `study verify`'s scratch
    run): its own rows and artifacts, the rows of its cell's earlier trials, its failure record. :class:`StudyStorage`
    is the one implementation; the driver's planning, folding and reports use the rest of it."""

    def read_trial(self, trial_key: str) -> pa.Table | None: ...

    def read_trials(self, keys: Collection[str]) -> Iterator[tuple[str, pa.Table]]: ...

    def write_trial(self, trial_key: str, table: pa.Table) -> None: ...

    def write_artifact(self, name: str, trial_key: str, table: pa.Table) -> None: ...

    def write_failed(self, trial_key: str, info: dict[str, Any]) -> None: ...

    def clear_failed(self, trial_key: str) -> None: ...


@dataclass(frozen=True)
class StudyStorage:
    """The results directory of one study (at one scale)."""

    storage: str
    directory: str

    def __post_init__(self) -> None:
        # Resolve a relative path now: Ray workers run with another working directory.
        if "://" not in self.storage or self.storage.startswith("file://"):
            absolute = str(Path(self.storage.removeprefix("file://")).expanduser().resolve())
            object.__setattr__(self, "storage", absolute)

    @functools.cached_property
    def _fs(self) -> tuple[pafs.FileSystem, str, bool]:
        # Resolved once: for object storage this builds a client (credentials, region lookup).
        return _resolve(self.storage)

    @property
    def is_local(self) -> bool:
        """Whether results are on this machine's filesystem (locks and reports need that today)."""
        return self._fs[2]

    @property
    def root(self) -> str:
        """The study directory inside the filesystem (an absolute path when local)."""
        return f"{self._fs[1]}/{self.directory}"

    @property
    def uri(self) -> str:
        """The study directory as a path or URI that Ray Tune and pyarrow both accept."""
        fs, root, local = self._fs
        return f"{root}/{self.directory}" if local else f"{self.storage.rstrip('/')}/{self.directory}"

    @functools.cached_property
    def location(self) -> Location:
        """The study directory for readers (analysis): read in place, local or remote."""
        return Location.of(self.uri)

    def check_uri(self) -> None:
        """Fail unless the storage resolves to a filesystem: StorageError ``invalid --storage '...': invalid URI
        (...)`` for a scheme pyarrow does not know, or what the provider said (a bucket it cannot find)."""
        try:
            _ = self._fs  # resolved once (cached): what every later access uses
        except (OSError, ValueError) as error:
            raise storage_fault(self.storage, error, certain=True) from None

    def check_readable(self) -> None:
        """Fail unless the storage root exists and can be listed (every command reads it first).

        Raises:
            StorageError: ``invalid --storage '...': <why>`` (no such directory, not a directory, not readable,
                an invalid URI, or what the remote filesystem said: :func:`storage_fault`).
        """
        try:
            fs, root, local = self._fs
        except (OSError, ValueError) as error:  # a URI pyarrow cannot resolve (unknown scheme, no bucket)
            raise storage_fault(self.storage, error, certain=True) from None
        if local:
            path = Path(root)
            why = ("no such directory" if not path.exists() else "not a directory (a file)" if not path.is_dir()
                   else "not readable (permission denied)" if not os.access(path, os.R_OK | os.X_OK) else "")
            if why:
                raise StorageError(f"invalid --storage {self.storage!r}: {why}: {path}")
            return
        try:
            info = fs.get_file_info(root)
        except OSError as error:
            raise storage_fault(self.storage, error, certain=True) from None
        if info.type == pafs.FileType.File:
            raise StorageError(f"invalid --storage {self.storage!r}: not a directory (a file)")

    def _write_atomic(self, relative: str, data: bytes) -> None:
        fs, _, _ = self._fs
        final = f"{self.root}/{relative}"
        fs.create_dir(final.rsplit("/", 1)[0], recursive=True)
        temporary = f"{final}.tmp-{uuid.uuid4().hex[:8]}"
        with fs.open_output_stream(temporary) as stream:
            stream.write(data)
        fs.move(temporary, final)  # atomic rename on POSIX; object stores publish on close

    def trial_path(self, trial_key: str) -> str:
        """Where the Parquet file of one trial lives."""
        return f"{self.root}/{TRIALS}/{trial_key}.parquet"

    def write_trial(self, trial_key: str, table: pa.Table) -> None:
        """Write one trial's rows atomically."""
        self._write_parquet(f"{TRIALS}/{trial_key}.parquet", table)

    def write_artifact(self, name: str, trial_key: str, table: pa.Table) -> None:
        """Write one of a trial's extra tables (e.g. probe attention maps) to ``artifacts/<name>/``."""
        self._write_parquet(f"{ARTIFACTS}/{name}/{trial_key}.parquet", table)

    def _write_parquet(self, relative: str, table: pa.Table) -> None:
        buffer = io.BytesIO()
        pq.write_table(table, buffer, compression="zstd")
        self._write_atomic(relative, buffer.getvalue())

    def read_trial(self, trial_key: str) -> pa.Table | None:
        """One trial's rows (its file, else the table's; old rows read as rows written now, analysis.data.columns),
        or None when it has not finished (or its file is unreadable)."""
        fs, _, _ = self._fs
        try:
            with fs.open_input_file(self.trial_path(trial_key)) as handle:
                return _current(pq.read_table(handle))
        except (FileNotFoundError, OSError, pa.ArrowInvalid):
            pass
        table = open_table(self.location, TABLE)
        if table is None:
            return None
        rows = pl.scan_delta(table).filter(pl.col("trial_key") == trial_key).collect()
        return current_columns(rows).to_arrow() if rows.height else None

    def read_trials(self, keys: Collection[str]) -> Iterator[tuple[str, pa.Table]]:
        """``(key, rows)`` of each finished trial of ``keys``, as :meth:`read_trial` gives them, reading the table
        once per :data:`READ_BATCH` keys instead of once per key (a journal sync of a large study: 25,000 scans
        otherwise). Pending trial files first, then the table's trials in key order; unfinished keys are skipped."""
        wanted = sorted(set(keys))
        snap = trial_snapshot(self.location)
        pending = {key_of(p) for p in snap.pending}
        for key in (k for k in wanted if k in pending):
            table = self.read_trial(key)
            if table is not None:
                yield key, table
        if snap.table is None:
            return  # no table yet: every finished trial is a pending file
        in_table = [k for k in wanted if k in snap.keys and k not in pending]
        for start in range(0, len(in_table), READ_BATCH):
            batch = in_table[start:start + READ_BATCH]
            rows = pl.scan_delta(snap.table).filter(pl.col("trial_key").is_in(batch)).collect()
            parts = current_columns(rows).partition_by("trial_key", as_dict=True, maintain_order=True)
            for key in batch:
                if (key,) in parts:
                    yield key, parts[(key,)].to_arrow()

    def _list(self, sub: str, suffix: str) -> Iterator[str]:
        fs, _, _ = self._fs
        selector = pafs.FileSelector(f"{self.root}/{sub}", allow_not_found=True)
        for info in fs.get_file_info(selector):
            name = info.base_name
            if info.type == pafs.FileType.File and name.endswith(suffix) and ".tmp-" not in name:
                yield name.removesuffix(suffix)

    def finished_keys(self) -> set[str]:
        """Trial keys in the table or with a trial file not folded yet (finished trials, whatever their status)."""
        snap = trial_snapshot(self.location)
        return set(snap.keys) | {key_of(p) for p in snap.pending}

    def corrupt_keys(self) -> set[str]:
        """Pending trial files (not in the table) whose Parquet footer cannot be read (checked file by file)."""
        fs, _, _ = self._fs
        corrupt = set()
        for key in {key_of(p) for p in trial_snapshot(self.location).pending}:
            try:
                with fs.open_input_file(self.trial_path(key)) as handle:
                    pq.read_metadata(handle)
            except (OSError, pa.ArrowInvalid):
                corrupt.add(key)
        return corrupt

    def quarantine(self, trial_key: str) -> str:
        """Move an unreadable trial file aside (kept as evidence) so that the trial runs again."""
        fs, _, _ = self._fs
        target = f"{self.trial_path(trial_key)}.corrupt"
        fs.move(self.trial_path(trial_key), target)
        return target

    def failed_keys(self) -> set[str]:
        """Trial keys that failed for good (after Ray's retries) and have no Parquet file."""
        return set(self._list(FAILED, ".json")) - self.finished_keys()

    def write_failed(self, trial_key: str, info: dict[str, Any]) -> None:
        """Record a trial that failed for good: its configuration and the error."""
        self._write_atomic(f"{FAILED}/{trial_key}.json", json.dumps(info, indent=1, default=str).encode())

    def clear_failed(self, trial_key: str) -> None:
        """Forget an earlier failure (the trial is being tried again)."""
        fs, _, _ = self._fs
        try:
            fs.delete_file(f"{self.root}/{FAILED}/{trial_key}.json")
        except (FileNotFoundError, OSError):
            pass

    def write_json(self, name: str, payload: dict[str, Any]) -> None:
        """Write a JSON document (study.json, progress.json) atomically."""
        self._write_atomic(name, json.dumps(payload, indent=1, default=str).encode())

    def read_json(self, name: str) -> dict[str, Any] | None:
        """A JSON document of the study directory, or None when absent."""
        fs, _, _ = self._fs
        try:
            with fs.open_input_stream(f"{self.root}/{name}") as stream:
                document: dict[str, Any] = json.loads(stream.read())
                return document
        except (FileNotFoundError, OSError, json.JSONDecodeError):
            return None

    def local_path(self) -> Path:
        """The study directory as a local Path (only for local storage)."""
        if not self.is_local:
            raise ValueError(f"storage {self.storage!r} is not local")
        return Path(self.root)


def ensure_local_dir(storage: StudyStorage) -> Path | None:
    """Create the study directory when local and return it; None for remote storage."""
    if not storage.is_local:
        return None
    path = storage.local_path()
    os.makedirs(path, exist_ok=True)
    return path


def _current(table: pa.Table) -> pa.Table:
    """A trial file's rows with the columns of now (``analysis.data.columns``); unchanged without a mixer."""
    if "mixer" not in table.column_names:
        return table
    return current_columns(pl.DataFrame(pl.from_arrow(table))).to_arrow()
