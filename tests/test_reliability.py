"""Failures injected for real: a trial process killed, a worker node stopped, a diverging trial,
a corrupt result file. Every test runs the real `study` command against a real Ray (slow marker).

The studies whose trials are killed are short (EIGHT_SHORT: 60 steps, ~1 CPU s a trial): what the tests check is that
Ray's failures lose nothing, which needs trials running when the failure lands, not long training. The two-node test
keeps 300-step trials: both nodes must have trained before one stops."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import polars as pl
import pytest
from deltalake import DeltaTable

from tests.cli import (
    STUDY,
    TOKEN_AUTH,
    alive_nodes,
    command_env,
    finished_trials,
    free_port,
    ray_node,
    rows,
    run_cli,
    shared_head,
)
from tests.test_study_cli import STUDIES

EIGHT_TRIALS = f"{STUDIES}:EIGHT_SHORT"  # 8 trials x 2 seeds x 3 evaluations, ~1 CPU s per trial
STUDY_DIR = "test.eight_short"


def _files(study_dir: Path) -> list[Path]:
    return sorted((study_dir / "trials").glob("*.parquet"))


def _trial_workers() -> set[int]:
    out = subprocess.run(["pgrep", "-f", "ray::ImplicitFunc"], capture_output=True, text=True).stdout
    return {int(pid) for pid in out.split()}


def _assert_complete(study_dir: Path, trials: int = 8, seeds: int = 2, evaluations: int = 3) -> pl.DataFrame:
    df = rows(study_dir)
    assert df["trial_key"].n_unique() == trials
    assert df.height == trials * seeds * evaluations
    assert df.select(pl.struct("trial_key", "seed", "step").is_unique().all()).item()
    return df


@pytest.mark.slow
def test_a_killed_trial_process_is_retried(tmp_path: Path) -> None:
    """On the tests' shared Ray head (tests/cli.py), as run_cli's runs: a fresh local Ray would add ~4 CPU s."""
    before = _trial_workers()  # other Ray users of this machine are left alone
    driver = subprocess.Popen([*STUDY, "run", EIGHT_TRIALS, "--storage", str(tmp_path), "--address", shared_head()],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=command_env())
    deadline, killed = time.time() + 120, None
    while time.time() < deadline and killed is None:
        ours = _trial_workers() - before
        if ours:
            time.sleep(1.5)  # let it get into training
            killed = min(ours)
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.1)
    output, _ = driver.communicate(timeout=240)
    assert killed is not None, "no trial process to kill"
    assert driver.returncode == 0, output
    assert "8/8 trials finished, 0 failed" in output
    _assert_complete(tmp_path / STUDY_DIR)


@pytest.mark.slow
def test_a_diverging_trial_is_recorded_and_the_study_goes_on(tmp_path: Path) -> None:
    result = run_cli("run", f"{STUDIES}:DIVERGING", "--storage", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    df = rows(tmp_path / "test.diverging")
    status = dict(df.group_by("learning_rate").agg(pl.col("status").unique().sort()).iter_rows())
    assert status == {0.003: ["ok"], 1e6: ["diverged"]}
    diverged = df.filter(pl.col("learning_rate") == 1e6)
    assert diverged.height == 2 * 2 and (diverged["val_accuracy"] == 0.0).any()


@pytest.mark.slow
def test_a_corrupt_result_file_is_listed_skipped_and_rerun(tmp_path: Path) -> None:
    first = run_cli("run", "demo", "--scale", "smoke", "--storage", str(tmp_path), "--report")
    assert first.returncode == 0, first.stdout + first.stderr  # a smoke run cannot show the finding: not FAIL
    assert "NOT CHECKED: max pooling cannot learn mode finding" in first.stdout
    assert "not checked at this scale (smoke); checked at: paper, cpu" in first.stdout
    study_dir = tmp_path / "demo.smoke"
    assert _files(study_dir) == []  # the run folded every trial file into the table
    # A trial file that lost its end (e.g. on a failing disk) before the driver folded it: take one trial's rows
    # back out of the table (a real Delta delete) into a file, and truncate that file.
    table = DeltaTable(str(study_dir / "table"))
    key = sorted(set(pl.from_arrow(table.to_pyarrow_table(columns=["trial_key"]))["trial_key"]))[0]
    victim = study_dir / "trials" / f"{key}.parquet"
    pl.scan_delta(table).filter(pl.col("trial_key") == key).collect().write_parquet(victim)
    table.delete(f"trial_key = '{key}'")
    victim.write_bytes(victim.read_bytes()[:100])

    status = run_cli("status", "demo", "--scale", "smoke", "--storage", str(tmp_path))
    assert "done 8 | running 0 | failed 0 | unreadable 1 | pending 0 | total 9" in status.stdout
    assert f"unreadable {victim}" in status.stdout
    assert "INCOMPLETE: a report now would leave out 1 of 9 trials" in status.stdout

    report = run_cli("report", "demo", "--scale", "smoke", "--storage", str(tmp_path))
    assert report.returncode == 0, report.stderr
    assert "demo: INCOMPLETE, computed from 8 of 9 trials (1 unreadable)" in report.stdout
    assert f"unreadable trial file: {victim}" in report.stdout

    rerun = run_cli("run", "demo", "--scale", "smoke", "--storage", str(tmp_path))
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert f"trial file {victim} is unreadable" in rerun.stdout and "8 finished before, 1 to run" in rerun.stdout
    assert (study_dir / "trials" / f"{victim.name}.corrupt").is_file()
    _assert_complete(study_dir, trials=9, seeds=1, evaluations=2)
    assert _files(study_dir) == []  # the retrained trial is in the table too


NODE_ENV = {**os.environ, **TOKEN_AUTH}  # what `ray start` clusters require since Ray 2.60


@pytest.mark.slow
def test_two_nodes_share_the_study_and_a_stopped_node_loses_nothing(tmp_path: Path) -> None:
    port = free_port()
    address = f"127.0.0.1:{port}"
    head = ray_node("--head", "--port", str(port), "--include-dashboard", "false", "--node-ip-address", "127.0.0.1",
                    env=NODE_ENV)
    worker = None
    try:
        deadline = time.time() + 60
        assert alive_nodes(address, 1, NODE_ENV) == 1, "the head did not start"
        worker = ray_node("--address", address, "--node-ip-address", "127.0.0.1", env=NODE_ENV)
        assert alive_nodes(address, 2, NODE_ENV) == 2, "the second Ray node did not join"

        # 300-step trials (INTERRUPTIBLE): the worker node's first trial process takes seconds to start, and the
        # head trained all eight 60-step trials of EIGHT_SHORT before it in a full suite run.
        study_dir = tmp_path / "test.interruptible"
        driver = subprocess.Popen([*STUDY, "run", f"{STUDIES}:INTERRUPTIBLE", "--storage", str(tmp_path), "--address",
                                   address],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # Wait until both nodes have finished trials, then stop the worker node mid-study.
        nodes: set[str] = set()
        while time.time() < deadline + 120 and len(nodes) < 2 and driver.poll() is None:
            if finished_trials(study_dir):  # the table and the trial files not folded yet
                nodes = set(rows(study_dir)["node_id"])
            time.sleep(0.2)
        if len(nodes) < 2:
            driver.kill()
            pytest.fail(f"trials must have run on both nodes, ran on {nodes}: {driver.communicate()[0]}")
        finished_at_stop = finished_trials(study_dir)
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
        output, _ = driver.communicate(timeout=300)
        assert finished_at_stop < 8, "the stop must land mid-study"
        assert driver.returncode == 0, output
        df = _assert_complete(study_dir)
        assert df["node_id"].n_unique() == 2  # the rest finished on the head node
        assert (df["hostname"] == socket.gethostname()).all()
    finally:
        for node in (worker, head):
            if node is not None and node.poll() is None:
                os.killpg(node.pid, signal.SIGKILL)
                node.wait()
    # The dead cluster stays recorded in /tmp/ray; the embedded default must not try to join it (one trial shows it).
    local = run_cli("run", EIGHT_TRIALS, "--where", "architecture=sum", "--where", "learning_rate=0.01", "--storage",
                    str(tmp_path / "local"), timeout=120, ray="local")
    assert local.returncode == 0 and "(local," in local.stdout, local.stdout + local.stderr


@pytest.mark.slow
def test_a_grid_runs_as_several_tuner_runs_of_bounded_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One trial at a time: each Tuner run starts its own trial processes (~5 CPU s each), so one per run instead of
    two. On a local Ray of this process's own: the shared head needs Ray's token mode, which Ray reads when it is
    first imported, long before this test in a suite's worker."""
    from search_spaces import get_study
    from study.run.ray_env import ray_environment

    ray_environment(None)
    import ray

    from study.results.storage import StudyStorage
    from study.run import runner, tuner
    from study.trial.resources import Resources

    tuner_runs: list[int] = []  # trials per Tuner run
    fit = tuner.fit

    def counted(entry: object, param_space: dict, *args: object, **kwargs: object) -> None:
        tuner_runs.append(len(param_space["trial"]["grid_search"]))
        fit(entry, param_space, *args, **kwargs)

    monkeypatch.setattr(tuner, "fit", counted)
    study = get_study(EIGHT_TRIALS)
    storage = StudyStorage(storage=str(tmp_path), directory=study.directory)
    try:
        counts = runner.run_study(study, storage, Resources(max_concurrent=1), echo=lambda _: None, chunk_size=3)
    finally:
        ray.shutdown()
    assert counts == {"finished": 8, "failed": 0, "total": 8}
    assert tuner_runs == [3, 3, 2]
    assert list((tmp_path / study.directory / "_tune").rglob("*")) == []  # no failed trial: Tune left nothing
    _assert_complete(tmp_path / study.directory)


def test_tunes_leftovers_are_dropped_but_a_failed_trials_error_files_stay(tmp_path: Path) -> None:
    import pyarrow.fs as pafs

    from study.run.tuner import _drop_tune_leftovers

    experiment = tmp_path / "_tune" / "tune-20260101-000000-1-0"
    for trial in ("a_00000", "a_00001", "a_00002"):
        (experiment / trial).mkdir(parents=True)
    (experiment / "a_00001" / "error.txt").write_text("Traceback ...\nValueError: boom\n")
    (experiment / "a_00001" / "error.pkl").write_bytes(b"pickled")
    for name in ("experiment_state-2026-01-01_00-00-00.json", "basic-variant-state-2026-01-01_00-00-00.json",
                 "tuner.pkl", ".validate_storage_marker"):
        (experiment / name).write_text("{}")
    _drop_tune_leftovers(pafs.LocalFileSystem(), str(experiment))
    left = sorted(str(p.relative_to(experiment)) for p in experiment.rglob("*"))
    assert left == ["a_00001", "a_00001/error.pkl", "a_00001/error.txt"]
    (experiment / "a_00001" / "error.txt").unlink()
    (experiment / "a_00001" / "error.pkl").unlink()
    _drop_tune_leftovers(pafs.LocalFileSystem(), str(experiment))
    assert list((tmp_path / "_tune").iterdir()) == []  # nothing failed: the run's folder goes too
