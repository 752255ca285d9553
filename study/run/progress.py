"""Live progress of a running study, on the terminal and in `progress.json` for `study status`.

What a person sees: a first line as soon as the first trial starts, then either a live bar redrawn in
place (a terminal) or plain lines (a CI log: at most one per ``plain_interval_s`` while trials run, and one
per finished trial, throttled). The estimate of the time left accounts for trials running at once:

    remaining work (trials) = pending trials + the unfinished fraction of every running trial
    time left = remaining work x mean trial duration / trials running at once

The mean trial duration comes from the trials finished in this run, or (before the first one finishes)
from the running trials: their start-up time plus their remaining evaluations at the rate measured since
their first one (evaluations a trial makes: from its budget, ``n_steps / eval_every`` x seeds). Once
twice as many trials have finished as run at once, the measured completion rate after the first round
replaces the duration / concurrency ratio: it also counts what happens between trials (scheduling,
writing), which dominates when trials are short.
"""

from __future__ import annotations

import math
import os
import socket
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from ray import tune

from core.errors import one_line
from search_spaces.axes import show_value
from search_spaces.study import Study
from study.results.storage import StudyStorage
from study.trial.spec import Trial

PROGRESS_FILE = "progress.json"
BAR_WIDTH = 24


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


def evaluations_per_trial(study: Study, point: dict[str, Any]) -> int | None:
    """How many (seed, evaluation) results one trial of ``point`` reports, when its budget says (else None)."""
    config = study.configuration(point)
    steps, every = config.get("n_steps"), config.get("eval_every")
    if not isinstance(steps, int) or not isinstance(every, int) or every <= 0:
        return None
    rates = config.get("learning_rate")
    n_rates = len(rates) if isinstance(rates, list | tuple) else 1
    return max(1, steps // every) * len(study.seeds) * n_rates


#: Evaluations a running trial must have reported before its duration is extrapolated from them.
MIN_REPORTS_TO_EXTRAPOLATE = 3


class _Running:
    """One running trial: its key, when it started, how many evaluations it reported and will report."""

    def __init__(self, key: str, started: float, expected: int | None) -> None:
        self.key, self.started, self.expected, self.reported = key, started, expected, 0
        self.first_report: float | None = None

    def report(self, now: float) -> None:
        self.reported += 1
        if self.first_report is None:
            self.first_report = now

    def fraction(self) -> float | None:
        if not self.expected:
            return None
        return min(1.0, self.reported / self.expected)

    def projected_duration(self, now: float) -> float | None:
        """Start-up (start to first evaluation) plus the remaining evaluations at the rate since the first one;
        None until :data:`MIN_REPORTS_TO_EXTRAPOLATE` evaluations are in."""
        if not self.expected or self.first_report is None or self.reported < MIN_REPORTS_TO_EXTRAPOLATE:
            return None
        per_eval = (now - self.first_report) / (self.reported - 1)
        return (self.first_report - self.started) + per_eval * (self.expected - 1)


class StudyProgress(tune.Callback):
    """Prints progress (a live bar on a terminal, plain lines otherwise) and records running / failed trials."""

    def __init__(self, *, study: Study, storage: StudyStorage, total: int, already_done: int,
                 echo: Callable[[str], None], min_interval_s: float = 2.0, live: bool | None = None,
                 stream: TextIO | None = None, clock: Callable[[], float] = time.time,
                 plain_interval_s: float = 30.0) -> None:
        self.study, self.storage, self.total, self.echo = study, storage, total, echo
        self.already_done = already_done
        #: where a study of rounds stands (an adaptive budget: ``look 2 of 4: 1 of 3 findings undecided``)
        self.stage = ""
        self.finished = 0
        self.failed = 0
        self.best: tuple[float, dict[str, Any]] | None = None
        self.clock = clock
        self.started = clock()
        self.min_interval_s = min_interval_s
        self.plain_interval_s = plain_interval_s
        # Tune pickles its callbacks with the experiment state: keep no reference to sys.stdout (under pytest's
        # capture it is not picklable); resolve it when writing.
        self._stream = stream
        self.live = self.stream.isatty() if live is None else live
        self._trials: dict[str, _Running] = {}
        self._durations: list[float] = []
        self._completed_at: list[float] = []  # clock time of each completion in this run
        self._peak_running = 0
        self._last_write = -math.inf
        self._last_echo = -math.inf
        self._drawn = False  # a live line is on screen (to clear before other output)

    @property
    def running(self) -> dict[str, str]:
        """The trials running now: Tune trial id -> trial key."""
        return {tid: t.key for tid, t in self._trials.items()}

    @property
    def stream(self) -> TextIO:
        """Where the live bar goes: the stream given, else the current ``sys.stdout``."""
        return self._stream or sys.stdout

    def _key(self, trial: Any) -> tuple[str, dict[str, Any]]:
        spec = Trial.from_config(trial.config, self.study)
        return spec.key(self.study), dict(spec.point)

    def _better(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        if self.best is None:
            return True
        return value > self.best[0] if self.study.mode == "max" else value < self.best[0]

    def remaining_seconds(self) -> float:
        """Estimated time left (see the module docstring); inf until anything can be estimated."""
        now = self.clock()
        durations = list(self._durations)
        if not durations:  # before the first trial finishes: extrapolate the running ones
            durations = [d for t in self._trials.values() if (d := t.projected_duration(now)) is not None]
        if not durations:
            return math.inf
        mean = sum(durations) / len(durations)
        running_left = 0.0
        for t in self._trials.values():
            f = t.fraction()
            running_left += 1.0 - (f if f is not None else min(1.0, (now - t.started) / mean))
        pending = max(0, self.total - self.already_done - self.finished - self.failed - len(self._trials))
        work = pending + running_left
        slots = max(1, self._peak_running)
        if len(self._completed_at) >= 2 * slots:  # steady state: the measured rate includes every overhead
            window = self._completed_at[-1] - self._completed_at[slots - 1]
            if window > 0:
                return work * window / (len(self._completed_at) - slots)
        return work * mean / slots

    def line(self) -> str:
        """The one-line progress summary."""
        done = self.already_done + self.finished
        best = "best -"
        if self.best is not None:
            value, point = self.best
            best = f"best {self.study.metric} {value:.3f} (" + ", ".join(
                f"{k}={show_value(v)}" for k, v in point.items()) + ")"
        failed = f" | failed {self.failed}" if self.failed else ""
        left = self.remaining_seconds()
        remaining = f"~{format_seconds(left)} left" if math.isfinite(left) else "time left: estimating"
        stage = f"{self.stage} | " if self.stage else ""
        return (f"{stage}[{done}/{self.total} {100 * done / max(self.total, 1):.0f}%] running {len(self._trials)} | "
                f"{best} | elapsed {format_seconds(self.clock() - self.started)} | {remaining}{failed}")

    def bar(self) -> str:
        """``[#######.................]`` over finished trials plus the running trials' fractions."""
        work = self.already_done + self.finished + sum(t.fraction() or 0.0 for t in self._trials.values())
        filled = int(round(BAR_WIDTH * min(1.0, work / max(self.total, 1))))
        return "[" + "#" * filled + "." * (BAR_WIDTH - filled) + "]"

    def _show(self, *, force: bool = False) -> None:
        """Redraw the live bar, or print a plain line when due (``force``: now)."""
        now = self.clock()
        if self.live:
            self.stream.write("\r\033[K" + self.bar() + " " + self.line())
            self.stream.flush()
            self._drawn = True
        elif force or now - self._last_echo >= self.plain_interval_s:
            self._last_echo = now
            self.echo(self.line())

    def _say(self, text: str) -> None:
        """A message of its own line (a failed trial), keeping the live bar below it."""
        if self.live and self._drawn:
            self.stream.write("\r\033[K")
            self._drawn = False
        self.echo(text)

    def _write(self, force: bool = False) -> None:
        now = self.clock()
        if not force and now - self._last_write < self.min_interval_s:
            return
        self._last_write = now
        self.storage.write_json(PROGRESS_FILE, {
            "pid": os.getpid(), "host": socket.gethostname(), "updated": now,
            "running": sorted(self.running.values()), "finished_this_run": self.finished,
            "failed_this_run": self.failed, "total": self.total, "line": self.line(),
        })

    def on_trial_start(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        # Forced write: a throttled one left trials that started together out of `running`.
        key, point = self._key(trial)
        self._trials[trial.trial_id] = _Running(key, self.clock(), evaluations_per_trial(self.study, point))
        self._peak_running = max(self._peak_running, len(self._trials))
        self._write(force=True)
        first = self.finished == 0 and self.failed == 0 and len(self._trials) == 1
        self._show(force=first)  # the first line as soon as the first trial starts

    def on_trial_result(self, iteration: int, trials: list[Any], trial: Any, result: dict[str, Any],
                        **info: Any) -> None:
        # Keeps `updated` fresh during long trials: `study status` on another host trusts a recent file only.
        running = self._trials.get(trial.trial_id)
        if running is not None and int(result.get("step", -1)) > 0:
            running.report(self.clock())
        self._write()
        if self.live and self.clock() - self._last_echo >= 1.0:  # redraw at most once a second
            self._last_echo = self.clock()
            self._show()
        elif not self.live:
            self._show()

    def on_trial_complete(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        failed = (trial.last_result or {}).get("failed")
        if failed:  # a bug in the trial's code ended it at its first attempt (study.trial.failures)
            self._trials.pop(trial.trial_id, None)
            self.failed += 1
            key, _ = self._key(trial)
            self._say(f"trial {key} failed (an error in its code, not retried): {failed}; its traceback is in "
                      f"{self.storage.uri}/failed/{key}.json")
            self._write(force=True)
            return
        running = self._trials.pop(trial.trial_id, None)
        if running is not None:
            self._durations.append(self.clock() - running.started)
        self._completed_at.append(self.clock())
        self.finished += 1
        _, point = self._key(trial)
        value = float((trial.last_result or {}).get("objective", math.nan))
        if self._better(value):
            self.best = (value, point)
        self._write(force=True)
        done = self.already_done + self.finished
        if self.live or done == self.total or self.clock() - self._last_echo >= self.min_interval_s:
            self._show(force=True)

    def on_trial_error(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        self._trials.pop(trial.trial_id, None)
        self.failed += 1
        key, point = self._key(trial)
        error = ""
        if getattr(trial, "error_file", None) and os.path.exists(trial.error_file):
            with open(trial.error_file) as handle:
                error = handle.read()[-4000:]
        self.storage.write_failed(key, {"trial_key": key, "point": point, "error": error,
                                        "tune_trial_id": trial.trial_id, "time": time.time()})
        self._say(f"trial {key} failed after retries: {one_line(error) or 'unknown error'}")
        self._write(force=True)

    def close(self) -> None:
        """Mark the study as no longer running (and end the live line)."""
        self._trials.clear()
        self._write(force=True)
        if self.live and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
