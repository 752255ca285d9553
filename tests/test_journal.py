"""The study's Optuna journal (study/run/journal.py): real journal files, read back with optuna.load_study."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import time
from pathlib import Path

import optuna
import pytest

from analysis.stats.rgb import objective
from search_spaces import get_study
from study.results.storage import StudyStorage
from study.run.journal import JOURNAL, sync_journal
from study.trial.identity import trial_key
from study.trial.trainable import run_trial
from tests.cli import LOCAL_RAY, STUDY, rows, run_cli
from tests.test_study_cli import STUDIES


def _load(study_dir: Path, name: str) -> optuna.Study:
    backend = optuna.storages.journal.JournalFileBackend(str(study_dir / JOURNAL))
    return optuna.load_study(study_name=name, storage=optuna.storages.JournalStorage(backend))


def _completed(loaded: optuna.Study) -> list[optuna.trial.FrozenTrial]:
    return loaded.get_trials(states=(optuna.trial.TrialState.COMPLETE,))


def test_sync_adds_finished_trials_from_parquet_and_closes_running_ones(tmp_path: Path) -> None:
    study = get_study(f"{STUDIES}:TPE")  # TPE over a continuous learning rate; 100 steps, 1 seed
    storage = StudyStorage(str(tmp_path), study.directory)
    points = [{"architecture": "sum", "learning_rate": rate} for rate in (0.01, 0.001)]
    scores = [run_trial(study, storage, point) for point in points]  # finished before any journal existed
    left_running = sync_journal(study, storage).ask()  # a trial a killed driver never told

    synced = sync_journal(study, storage)
    loaded = _load(tmp_path / study.directory, study.name)
    assert loaded.trials[left_running.number].state == optuna.trial.TrialState.FAIL
    done = {t.params["learning_rate"]: t for t in _completed(loaded)}
    assert sorted(done) == [0.001, 0.01]
    for point, score in zip(points, scores, strict=True):
        trial = done[point["learning_rate"]]
        key = trial_key(study.name, study.configuration(point), study.seeds)
        assert trial.params == point and trial.value == score and trial.user_attrs["trial_key"] == key
        assert trial.value == objective(storage.read_trial(key).to_pylist(), study.metric, study.mode)
    assert synced.direction == optuna.study.StudyDirection.MAXIMIZE
    sync_journal(study, storage)  # again: nothing to add
    assert len(_completed(_load(tmp_path / study.directory, study.name))) == 2


def test_a_trial_killed_after_writing_its_file_is_completed_from_its_rows(tmp_path: Path) -> None:
    """The kill lands between a trial's file and its entry: the journal has it running, the rows are on disk. The
    next sync marks the running entry failed and adds the rows as a completed trial (it had kept the failed entry as
    the trial's only one, and the sampler never saw the result)."""
    study = get_study(f"{STUDIES}:TPE")
    storage = StudyStorage(str(tmp_path), study.directory)
    run_trial(study, storage, {"architecture": "sum", "learning_rate": 0.003})  # a journal needs a first trial
    journal = sync_journal(study, storage)
    point = {"architecture": "sum", "learning_rate": 0.01}
    journal.enqueue_trial(point)
    running = journal.ask()
    running.set_user_attr("trial_key", trial_key(study.name, study.configuration(point), study.seeds))
    score = run_trial(study, storage, point)  # its file written; the driver killed before it told the journal

    sync_journal(study, storage)
    loaded = _load(tmp_path / study.directory, study.name)
    assert loaded.trials[running.number].state == optuna.trial.TrialState.FAIL
    done = [t for t in _completed(loaded) if t.params["learning_rate"] == 0.01]
    assert len(done) == 1 and done[0].value == score


@pytest.mark.slow
def test_journal_loads_while_running_after_a_killed_driver_and_resume_continues_it(tmp_path: Path) -> None:
    name = f"{STUDIES}:TPE_INTERRUPTIBLE"
    study_dir = tmp_path / "test.tpe_interruptible"
    driver = subprocess.Popen([*STUDY, "run", name, "--storage", str(tmp_path)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent), **LOCAL_RAY})
    deadline, live = time.time() + 240, []
    while time.time() < deadline and len(list((study_dir / "trials").glob("*.parquet"))) < 2:
        if (study_dir / JOURNAL).exists():
            live.append(len(_load(study_dir, "test.tpe_interruptible").trials))  # read while the driver writes
        time.sleep(0.2)
    os.killpg(driver.pid, signal.SIGKILL)  # the driver and its Ray, mid-study
    driver.wait()
    finished = len(list((study_dir / "trials").glob("*.parquet")))
    assert 2 <= finished < 8, "the kill must land mid-study"
    assert live and max(live) >= 1, "the journal must load while the study runs"
    killed = _load(study_dir, "test.tpe_interruptible")
    assert len(_completed(killed)) >= finished - 1  # a trial's file can precede its entry by one tell

    result = run_cli("run", name, "--storage", str(tmp_path))
    assert result.returncode == 0, result.stderr + result.stdout
    assert f"{finished} finished before, {8 - finished} to run" in result.stdout
    loaded = _load(study_dir, "test.tpe_interruptible")
    assert not loaded.get_trials(states=(optuna.trial.TrialState.RUNNING,))
    df = rows(study_dir)
    assert df["trial_key"].n_unique() == 8
    by_rate = {r: objective(df.filter(df["learning_rate"] == r).to_dicts(), "val_accuracy", "max")
               for r in df["learning_rate"].unique()}
    done = _completed(loaded)
    assert sorted(t.params["learning_rate"] for t in done) == sorted(by_rate)  # each trial once, none lost
    assert all(math.isclose(t.value, by_rate[t.params["learning_rate"]]) for t in done)
