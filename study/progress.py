"""Live progress of a running study, on the terminal and in `progress.json` for `study status`."""

from __future__ import annotations

import math
import os
import socket
import time
from collections.abc import Callable
from typing import Any

from ray import tune

from search_spaces.study import Study
from study.identity import trial_key
from study.storage import StudyStorage

PROGRESS_FILE = "progress.json"


def format_seconds(seconds: float) -> str:
    """1h02m, 3m05s, 42s."""
    if not math.isfinite(seconds):
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _short(value: Any) -> str:
    return f"{value:.1e}" if isinstance(value, float) else str(value)


class StudyProgress(tune.Callback):
    """Prints `[done/total] best ... | elapsed | remaining` and records running / failed trials."""

    def __init__(self, *, study: Study, storage: StudyStorage, total: int, already_done: int,
                 echo: Callable[[str], None], min_interval_s: float = 2.0) -> None:
        self.study, self.storage, self.total, self.echo = study, storage, total, echo
        self.already_done = already_done
        self.finished = 0
        self.failed = 0
        self.running: dict[str, str] = {}  # Tune trial id -> trial key
        self.best: tuple[float, dict[str, Any]] | None = None
        self.started = time.time()
        self.min_interval_s = min_interval_s
        self._last_write = 0.0

    def _key(self, trial: Any) -> tuple[str, dict[str, Any]]:
        point = trial.config.get("point", trial.config)
        return trial_key(self.study.name, self.study.configuration(point), self.study.seeds), point

    def _better(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        if self.best is None:
            return True
        return value > self.best[0] if self.study.mode == "max" else value < self.best[0]

    def line(self) -> str:
        """The one-line progress summary."""
        done = self.already_done + self.finished
        elapsed = time.time() - self.started
        rate = self.finished / elapsed if self.finished else 0.0
        remaining = (self.total - done - self.failed) / rate if rate else math.inf
        best = "best -"
        if self.best is not None:
            value, point = self.best
            best = f"best {self.study.metric} {value:.3f} (" + ", ".join(
                f"{k}={_short(v)}" for k, v in point.items()) + ")"
        failed = f" | failed {self.failed}" if self.failed else ""
        return (f"[{done}/{self.total} {100 * done / max(self.total, 1):.0f}%] {best} | elapsed "
                f"{format_seconds(elapsed)} | remaining ~{format_seconds(remaining)}{failed}")

    def _write(self, force: bool = False) -> None:
        now = time.time()
        if not force and now - self._last_write < self.min_interval_s:
            return
        self._last_write = now
        self.storage.write_json(PROGRESS_FILE, {
            "pid": os.getpid(), "host": socket.gethostname(), "updated": now,
            "running": sorted(self.running.values()), "finished_this_run": self.finished,
            "failed_this_run": self.failed, "total": self.total, "line": self.line(),
        })

    def on_trial_start(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        # Forced: a throttled write here left trials that started together out of `running`.
        self.running[trial.trial_id] = self._key(trial)[0]
        self._write(force=True)

    def on_trial_result(self, iteration: int, trials: list, trial: Any, result: dict, **info: Any) -> None:
        # Keeps `updated` fresh during long trials: `study status` on another host trusts a recent file only.
        self._write()

    def on_trial_complete(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        self.running.pop(trial.trial_id, None)
        self.finished += 1
        _, point = self._key(trial)
        value = float((trial.last_result or {}).get("objective", math.nan))
        if self._better(value):
            self.best = (value, point)
        self._write(force=True)
        done = self.already_done + self.finished
        if done == self.total or time.time() - getattr(self, "_last_echo", 0.0) >= self.min_interval_s:
            self._last_echo = time.time()
            self.echo(self.line())

    def on_trial_error(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        self.running.pop(trial.trial_id, None)
        self.failed += 1
        key, point = self._key(trial)
        error = ""
        if getattr(trial, "error_file", None) and os.path.exists(trial.error_file):
            with open(trial.error_file) as handle:
                error = handle.read()[-4000:]
        self.storage.write_failed(key, {"trial_key": key, "point": point, "error": error,
                                        "tune_trial_id": trial.trial_id, "time": time.time()})
        last_line = error.strip().splitlines()[-1] if error.strip() else "unknown error"
        self.echo(f"trial {key} failed after retries: {last_line}")
        self._write(force=True)

    def close(self) -> None:
        """Mark the study as no longer running."""
        self.running.clear()
        self._write(force=True)
