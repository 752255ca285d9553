"""One `study run` per study at a time: a second one refuses with a clear message."""

from __future__ import annotations

import fcntl
import os
import socket
from typing import IO

from core.errors import OneLineError
from study.results.storage import StudyStorage, ensure_local_dir


class StudyLocked(OneLineError, RuntimeError):
    """Another `study run` of the same study holds the lock."""

    exit_code = 1  # not the input's fault


class StudyLock:
    """An advisory lock on `<study dir>/.lock` (local storage; released when the process dies).

    Remote storage has no portable lock: there, running the same study twice is the user's care.
    """

    def __init__(self, storage: StudyStorage) -> None:
        self.storage = storage
        self._handle: IO[str] | None = None

    def __enter__(self) -> StudyLock:
        directory = ensure_local_dir(self.storage)
        if directory is None:
            return self
        handle = open(directory / ".lock", "a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise StudyLocked(f"study directory {directory} is in use by a running `study run` ({holder}); "
                              "wait for it to finish or stop it, then run again") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} on {socket.gethostname()}")
        handle.flush()
        self._handle = handle
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None
