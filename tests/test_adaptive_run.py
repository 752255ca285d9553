"""An adaptive budget run through a real local Ray (issue 41): rounds of trials decided by the findings, each look
recorded in study.json before its seeds train, a killed driver resumed without losing or duplicating a model and with
the looks an uninterrupted run takes, the study completed to the full grid later without training anything twice,
and the budget refused in one line where it cannot apply."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

from tests.cli import LOCAL_RAY, STUDY, rows, run_cli

HERE = Path(__file__).resolve().parent
ADAPTIVE = f"{HERE / 'studies_for_tests.py'}:ADAPTIVE"
CELL = ["architecture", "learning_rate"]


def _looks(study_dir: Path) -> list[dict]:
    try:
        return json.loads((study_dir / "study.json").read_text()).get("looks_taken", [])
    except (FileNotFoundError, json.JSONDecodeError):
        return []


def _seeds_per_cell(study_dir: Path) -> dict[tuple, list[int]]:
    models = rows(study_dir).group_by([*CELL, "seed"]).agg(pl.col("trial_key").n_unique().alias("trials"))
    assert models.get_column("trials").max() == 1  # every model trained once
    return {(a, lr): sorted(s) for a, lr, s in models.group_by(CELL).agg(pl.col("seed")).iter_rows()}


def _given(looks: list[dict]) -> dict[tuple, int]:
    """Per cell the seeds the budget gave it: one to start, one per request of a look."""
    given: dict[tuple, int] = {}
    for look in looks:
        for request in look["requests"]:
            cell = (request["cell"]["architecture"], request["cell"]["learning_rate"])
            given[cell] = given.get(cell, 1) + 1
    return given


@dataclass(frozen=True)
class FirstRun:
    """An uninterrupted adaptive run: its storage, output, and the looks and seeds per cell it ended with (read
    before the first test resumes and completes the same storage)."""

    storage: Path
    result: subprocess.CompletedProcess
    looks: list[dict]
    seeds: dict[tuple, list[int]]


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> FirstRun:
    """One uninterrupted run for both tests (the killed driver's reference, and the run the first test goes on
    from): a study run less."""
    storage = tmp_path_factory.mktemp("adaptive")
    result = run_cli("run", ADAPTIVE, "--storage", str(storage))
    assert result.returncode == 0, result.stderr + result.stdout
    return FirstRun(storage, result, _looks(storage / "test.adaptive"), _seeds_per_cell(storage / "test.adaptive"))


@pytest.mark.slow
def test_an_adaptive_study_runs_in_rounds_resumes_and_completes_to_the_full_grid(first_run: FirstRun) -> None:
    storage, first = first_run.storage, first_run.result
    study_dir = storage / "test.adaptive"
    looks = _looks(study_dir)
    assert looks == first_run.looks, "this test runs first on the module's run (its next steps change it)"
    assert [look["look"] for look in looks] == list(range(1, len(looks) + 1)) and len(looks) >= 2
    assert looks[0]["statuses"] == ["UNDECIDED", "UNDECIDED"]  # one seed per cell: no noise, nothing decided
    assert "look 1 of 4: 2 of 2 finding(s) undecided, 6 models so far" in first.stdout
    assert "look 2 of 4:" in first.stdout and "| [" in first.stdout  # the progress line names the look
    seeds = _seeds_per_cell(study_dir)
    given = _given(looks)
    assert {cell: len(s) for cell, s in seeds.items()} == {cell: given.get(cell, 1) for cell in seeds}
    assert all(s == list(range(len(s))) for s in seeds.values())  # seeds in their order
    assert sum(len(s) for s in seeds.values()) < 6 * 4  # the budget saved models
    assert [look["models"] for look in looks] == sorted(look["models"] for look in looks)
    # the run ends with its verdicts: the very lines `study findings` prints (one function builds both)
    findings = run_cli("findings", ADAPTIVE, "--storage", str(storage))
    assert "findings on" in findings.stdout and first.stdout.rstrip().endswith(findings.stdout.rstrip())

    again = run_cli("run", ADAPTIVE, "--storage", str(storage))
    assert again.returncode == 0 and "6 finished before" in again.stdout
    assert "running" not in again.stdout  # nothing trained again, the looks replayed from study.json
    assert _looks(study_dir) == looks and _seeds_per_cell(study_dir) == seeds
    status = run_cli("status", ADAPTIVE, "--storage", str(storage)).stdout
    trials = 6 + sum(len(look["requests"]) for look in looks)  # a cell's first seed, then one trial per request
    assert f"done {trials} | running 0 | failed 0 | unreadable 0 | pending 0 | total {trials}" in status
    assert f"{len(looks)} of 4 looks taken, {looks[-1]['models']} models given of the full grid's 24" in status

    full = run_cli("run", ADAPTIVE, "--budget", "fixed", "--storage", str(storage))
    assert full.returncode == 0, full.stderr + full.stdout
    short = sum(len(s) < 4 for s in seeds.values())
    assert f"{6 - short} finished before, {short} to run" in full.stdout  # each short cell: one trial of the rest
    completed = _seeds_per_cell(study_dir)
    status = run_cli("status", ADAPTIVE, "--storage", str(storage)).stdout
    assert "done 6 | running 0 | failed 0 | unreadable 0 | pending 0 | total 6" in status  # every point, every seed
    assert all(s == [0, 1, 2, 3] for s in completed.values())
    kept = rows(study_dir).filter(pl.col("seed") == 0).sort(CELL)  # the first seeds' rows are the first run's
    assert kept.height == 6 * 2
    verify = run_cli("verify", ADAPTIVE, "--storage", str(storage), "--trials", "3")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "3 of 3 trial(s) reproduced" in verify.stdout


@pytest.mark.slow
def test_a_driver_killed_mid_round_resumes_to_the_looks_of_an_uninterrupted_run(first_run: FirstRun,
                                                                                tmp_path: Path) -> None:
    study_dir = tmp_path / "killed" / "test.adaptive"
    # one trial at a time: the round's second model trains for seconds after its first one's rows land, so the kill
    # lands between them on a loaded machine too (two at once finished within one poll: CI saw look 2 recorded)
    driver = subprocess.Popen([*STUDY, "run", ADAPTIVE, "--storage", str(tmp_path / "killed"), "--max-concurrent", "1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                              env={**os.environ, **LOCAL_RAY})
    deadline = time.time() + 180
    while time.time() < deadline and not (_looks(study_dir) and _seeds_beyond_the_first(study_dir)):
        time.sleep(0.05)
    os.killpg(driver.pid, signal.SIGKILL)  # after look 1 was recorded, while its round trains
    driver.wait()
    time.sleep(2)
    assert len(_looks(study_dir)) == 1, "the kill must land in the second round"

    resumed = run_cli("run", ADAPTIVE, "--storage", str(tmp_path / "killed"))
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert _looks(study_dir) == first_run.looks
    assert _seeds_per_cell(study_dir) == first_run.seeds


def _seeds_beyond_the_first(study_dir: Path) -> bool:
    try:
        return rows(study_dir).filter(pl.col("seed") > 0).height > 0
    except FileNotFoundError:
        return False


@pytest.mark.parametrize(("study", "extra", "message"), [
    ("INTERRUPTIBLE", (), "invalid budget of study test.interruptible 'adaptive'; allowed: fixed (it states no "
                          "findings"),
    ("TPE", (), "invalid budget of study test.tpe 'adaptive'; allowed: fixed (it samples with tpe"),
    ("ADAPTIVE", ("--where", "architecture=sum"), "invalid --where with budget adaptive of study test.adaptive; "
                                                  "allowed: --where with budget fixed"),
])
def test_an_adaptive_budget_where_it_cannot_apply_is_one_line_and_exit_2(study: str, extra: tuple, message: str,
                                                                         tmp_path: Path) -> None:
    done = run_cli("run", f"{HERE / 'studies_for_tests.py'}:{study}", "--budget", "adaptive", *extra, "--storage",
                   str(tmp_path / "results"))
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "results").exists()
