"""progress.json while a study runs: every running trial listed, the file kept fresh by results.

Tune calls the callback with its Trial objects; the callback reads only `trial_id`, `config` and
`last_result`, so a namespace with those three stands in for a Trial here (the real one needs a running
Tune controller; tests/test_study_cli.py covers the callback inside real runs).
"""

from __future__ import annotations

import io
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from study.results.storage import StudyStorage
from study.run.progress import PROGRESS_FILE, StudyProgress
from tests.studies_for_tests import INTERRUPTIBLE


def _progress(tmp_path: Path) -> tuple[StudyProgress, StudyStorage]:
    study = INTERRUPTIBLE
    storage = StudyStorage(str(tmp_path), study.directory)
    # A long interval: the throttle must not hide a trial that starts right after another.
    return StudyProgress(study=study, storage=storage, total=8, already_done=0, echo=lambda _: None,
                         min_interval_s=3600.0), storage


def _trial(trial_id: str, lr: float) -> SimpleNamespace:
    return SimpleNamespace(trial_id=trial_id, config={"point": {"architecture": "sum", "learning_rate": lr}},
                           last_result={"objective": 0.5})


def test_trials_started_together_are_all_listed_as_running(tmp_path: Path) -> None:
    progress, storage = _progress(tmp_path)
    first, second = _trial("a", 0.01), _trial("b", 0.003)
    progress.on_trial_start(0, [], first)
    progress.on_trial_start(0, [], second)
    running = storage.read_json(PROGRESS_FILE)["running"]
    assert len(running) == 2 and running[0] != running[1]
    progress.on_trial_complete(0, [], first)
    assert storage.read_json(PROGRESS_FILE)["running"] == [progress.running["b"]]


def test_a_result_refreshes_the_file_once_the_interval_has_passed(tmp_path: Path) -> None:
    progress, storage = _progress(tmp_path)
    trial = _trial("a", 0.01)
    progress.on_trial_start(0, [], trial)
    written = storage.read_json(PROGRESS_FILE)["updated"]
    progress.on_trial_result(0, [], trial, {"objective": 0.4})
    assert storage.read_json(PROGRESS_FILE)["updated"] == written  # within the interval: no write
    progress.min_interval_s = 0.0
    time.sleep(0.01)
    progress.on_trial_result(0, [], trial, {"objective": 0.4})
    assert storage.read_json(PROGRESS_FILE)["updated"] > written


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _timed(tmp_path: Path, *, live: bool, total: int = 10) -> tuple[StudyProgress, list[str], _Clock, io.StringIO]:
    lines: list[str] = []
    clock, stream = _Clock(), io.StringIO()
    progress = StudyProgress(study=INTERRUPTIBLE, storage=StudyStorage(str(tmp_path), INTERRUPTIBLE.directory),
                             total=total, already_done=0, echo=lines.append, live=live, stream=stream, clock=clock)
    return progress, lines, clock, stream


def test_the_first_line_comes_when_the_first_trial_starts(tmp_path: Path) -> None:
    progress, lines, clock, _ = _timed(tmp_path, live=False)
    clock.now += 3.0  # Ray and Tune starting
    progress.on_trial_start(0, [], _trial("a", 0.01))
    assert lines == ["[0/10 0%] running 1 | best - | elapsed 3s | time left: estimating"]


def test_time_left_accounts_for_trials_running_at_once(tmp_path: Path) -> None:
    progress, lines, clock, _ = _timed(tmp_path, live=False)
    first, second = _trial("a", 0.01), _trial("b", 0.003)
    progress.on_trial_start(0, [], first)
    progress.on_trial_start(0, [], second)
    # INTERRUPTIBLE: 2 seeds x 3 evaluations = 6 results per trial. 10 s of start-up, then one result every
    # 10 s: after 30 s three results are in (at 10, 20, 30 s), a trial is projected at 10 + 5 x 10 = 60 s
    for _ in range(3):
        clock.now += 10.0
        progress.on_trial_result(0, [], first, {"objective": 0.4, "seed": 0, "step": 10})
        progress.on_trial_result(0, [], second, {"objective": 0.4, "seed": 0, "step": 10})
    # 8 pending + 2 x 1/2 running = 9 trials of work, 60 s each, 2 at a time: 270 s
    assert progress.remaining_seconds() == pytest.approx(270.0)
    clock.now += 30.0
    progress.on_trial_complete(0, [], first)
    # printed at once: 8 pending + the other's last half (3 of 6 results), 60 s each, 2 at a time
    assert lines[-1].endswith("| elapsed 1m00s | ~4m15s left")
    progress.on_trial_complete(0, [], second)
    assert progress.remaining_seconds() == pytest.approx(8 * 60.0 / 2)  # not 8 x 60 s: two run at once


def test_a_terminal_gets_a_live_bar_and_a_log_gets_plain_lines(tmp_path: Path) -> None:
    live, lines, clock, stream = _timed(tmp_path, live=True, total=4)
    trial = _trial("a", 0.01)
    live.on_trial_start(0, [], trial)
    clock.now += 5.0
    live.on_trial_result(0, [], trial, {"objective": 0.4, "seed": 0, "step": 10})
    live.on_trial_complete(0, [], trial)
    live.close()
    out = stream.getvalue()
    assert out.count("\r\033[K") >= 3 and lines == []  # redrawn in place, nothing echoed
    assert "[######..................] [1/4 25%] running 0" in out and out.endswith("\n")

    plain, lines, clock, stream = _timed(tmp_path, live=False, total=4)
    plain.on_trial_start(0, [], trial)
    clock.now += 5.0
    plain.on_trial_result(0, [], trial, {"objective": 0.4, "seed": 0, "step": 10})
    clock.now += 31.0
    plain.on_trial_result(0, [], trial, {"objective": 0.4, "seed": 1, "step": 10})  # a heartbeat line
    assert stream.getvalue() == "" and len(lines) == 2 and all("\r" not in line for line in lines)
    assert lines[1] == "[0/4 0%] running 1 | best - | elapsed 36s | time left: estimating"  # 2 results: too few


def test_short_trials_are_estimated_from_the_measured_completion_rate(tmp_path: Path) -> None:
    progress, _, clock, _ = _timed(tmp_path, live=False, total=1000)
    # 10 ms of work per trial, one at a time, but a trial finishes only every 30 ms (scheduling, writing)
    for k in range(10):
        trial = _trial(f"t{k}", 0.01)
        progress.on_trial_start(0, [], trial)
        clock.now += 0.01
        progress.on_trial_complete(0, [], trial)
        clock.now += 0.02
    # 990 left at one per 30 ms: ~29.7 s (duration / concurrency alone would say 990 x 10 ms / 1)
    assert progress.remaining_seconds() == pytest.approx(990 * 0.03, rel=0.01)


def test_the_callback_pickles_as_tune_saves_it(tmp_path: Path) -> None:
    from ray import cloudpickle

    storage = StudyStorage(str(tmp_path), INTERRUPTIBLE.directory)
    progress = StudyProgress(study=INTERRUPTIBLE, storage=storage, total=8, already_done=0, echo=print)
    progress.on_trial_start(0, [], _trial("a", 0.01))
    again = cloudpickle.loads(cloudpickle.dumps(progress))  # Tune pickles its state, callbacks included
    assert again.running == progress.running and again.stream is not None
