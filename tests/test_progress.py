"""progress.json while a study runs: every running trial listed, the file kept fresh by results.

Tune calls the callback with its Trial objects; the callback reads only `trial_id`, `config` and
`last_result`, so a namespace with those three stands in for a Trial here (the real one needs a running
Tune controller; tests/test_study_cli.py covers the callback inside real runs).
"""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

from study.progress import PROGRESS_FILE, StudyProgress
from study.storage import StudyStorage
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
