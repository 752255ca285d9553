"""`study verify`: finished trials trained again and compared with their record (study/run/reproduce.py).

Same machine and software: bit for bit (a smoke study trained twice gives identical rows). A changed value is
found and named; another machine's drift is told apart from a real change by the seeds' own spread.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from search_spaces import Study
from study.cli import main
from study.results.storage import StudyStorage
from study.run.reproduce import (
    DIFFERENT,
    IDENTICAL,
    NOISE,
    ROUNDED,
    compare_rows,
    pick_trials,
    verify_study,
    within_seed_noise,
)
from study.run.runner import run_record
from study.trial.resources import Resources
from study.trial.trainable import run_trial

STUDY = Study(name="test.verify", goal="trials trained twice", tasks=("mode",),
              scientific={"architecture": ("sum", "NAP")}, nuisance={"learning_rate": (0.01, 0.003)},
              fixed={"n_steps": 20, "eval_every": 10, "eval_batches": 2, "batch_size": 8, "seq_len": 16,
                     "d_model": 8}, seeds=(0, 1, 2))


@pytest.fixture(scope="module")
def trained_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The study, every trial run in-process once for the module (one torch thread), with the study.json `study
    run` writes: the storage root that each test gets a copy of."""
    import torch

    root = tmp_path_factory.mktemp("verify") / "results"
    storage = StudyStorage(str(root), STUDY.directory)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for config in STUDY.grid():
            run_trial(STUDY, storage, {n: config[n] for n in STUDY.axes})
    finally:
        torch.set_num_threads(threads)
    run = run_record(Resources()).replace(plugins=())  # as its rows: no plugin of yours made them
    storage.write_json("study.json", {**STUDY.to_json(), "run": run.model_dump(mode="json")})
    return root


@pytest.fixture
def finished(trained_once: Path, tmp_path: Path, one_torch_thread: None) -> StudyStorage:
    """A copy of the trained study of its own for each test (tests change its trial files)."""
    shutil.copytree(trained_once, tmp_path / "results")
    return StudyStorage(str(tmp_path / "results"), STUDY.directory)


def _rewrite(storage: StudyStorage, key: str, change) -> None:
    """Replace a trial file by its rows passed through ``change`` (a function of the list of row dicts)."""
    rows = storage.read_trial(key).to_pylist()
    pq.write_table(pa.Table.from_pylist(change(rows)), storage.trial_path(key))


def test_a_study_trained_again_here_is_bit_identical(finished) -> None:
    checks = verify_study(STUDY, finished, trials=4)
    assert [c.verdict for c in checks] == [IDENTICAL] * 4
    assert all(c.same_machine and c.passed and not c.largest for c in checks)


def test_a_changed_value_is_found_named_and_fails(finished) -> None:
    key = sorted(finished.finished_keys())[0]
    _rewrite(finished, key, lambda rows: [{**r, "val_loss": r["val_loss"] * 1.001} if r["seed"] == 1 else r
                                          for r in rows])
    (check,) = [c for c in verify_study(STUDY, finished, trials=4) if c.key == key]
    assert check.verdict == DIFFERENT and not check.passed
    assert set(check.largest) == {"val_loss"} and check.largest["val_loss"] > 1e-3


def test_another_machine_drift_that_keeps_the_seed_mean_passes_a_real_shift_fails(finished) -> None:
    keys = sorted(finished.finished_keys())
    other = "Another CPU | AVX2 | torch 2.13.0+cpu | numpy 2.4.6 | 1 thread"
    offsets = {0: 0.05, 1: 0.0, 2: -0.05}

    def drift(rows):  # seeds moved apart by float32 drift on another CPU: their mean stays where it was
        return [{**r, "machine": other, "val_accuracy": r["val_accuracy"] + offsets[r["seed"]]} for r in rows]

    def shift(rows):  # every seed 0.5 better: no drift does that
        return [{**r, "machine": other, "val_accuracy": r["val_accuracy"] + 0.5} for r in rows]

    _rewrite(finished, keys[0], drift)
    _rewrite(finished, keys[1], shift)
    checks = {c.key: c for c in verify_study(STUDY, finished, trials=4)}
    drifted, shifted = checks[keys[0]], checks[keys[1]]
    assert not drifted.same_machine and drifted.recorded_machine == other
    assert drifted.verdict == NOISE and drifted.passed and "moved 0.0000" in drifted.why
    assert shifted.verdict == DIFFERENT and not shifted.passed and "moved 0.5000" in shifted.why
    assert [checks[k].verdict for k in keys[2:]] == [IDENTICAL, IDENTICAL]


def test_the_cli_prints_one_line_per_trial_and_exits_3_when_one_is_not_reproduced(finished, tmp_path) -> None:
    studies = tmp_path / "verify_studies.py"
    studies.write_text("from tests.test_verify import STUDY\n")
    storage = str(finished.storage)

    def _invoke(*args: str):
        return CliRunner().invoke(main, ["verify", f"{studies}:STUDY", "--storage", storage, *args])

    missing = CliRunner().invoke(main, ["verify", f"{studies}:MISSING", "--storage", storage])
    assert missing.exit_code == 2 and "invalid study variable 'MISSING'" in missing.output
    key = sorted(finished.finished_keys())[2]
    _rewrite(finished, key, lambda rows: [{**r, "train_loss": r["train_loss"] + 1.0} for r in rows])
    result = _invoke("--trials", "4")
    assert result.exit_code == 3, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("  ")]
    assert len(lines) == 4 and sum(line.startswith("  FAIL") for line in lines) == 1
    assert f"FAIL {key}" in result.output and "train_loss 1" in result.output
    assert "3 of 4 trial(s) reproduced" in result.output
    bad = _invoke("--trials", "0")
    assert bad.exit_code == 2 and "invalid --trials 0; allowed: an integer >= 1" in bad.output


def test_trials_are_chosen_by_seed_and_a_bad_count_is_refused() -> None:
    keys = {f"k{i}" for i in range(10)}
    assert pick_trials(keys, 3, 0) == pick_trials(keys, 3, 0) != pick_trials(keys, 3, 1)
    assert pick_trials(keys, 30, 0) == sorted(keys)
    with pytest.raises(ValueError, match=r"invalid --trials 0; allowed: an integer >= 1"):
        pick_trials(keys, 0, 0)


def test_rows_compare_by_precision_and_seed_noise_needs_two_seeds() -> None:
    old = [{"seed": 0, "step": 1, "val_loss": 2.0, "status": "ok", "wall_time_s": 1.0}]
    assert compare_rows(old, [{**old[0], "wall_time_s": 9.0}], "fp32").verdict == IDENTICAL
    assert compare_rows(old, [{**old[0], "val_loss": 2.0 * (1 + 1e-9)}], "fp64").verdict == ROUNDED
    assert compare_rows(old, [{**old[0], "val_loss": 2.0 * (1 + 1e-6)}], "fp64").verdict == DIFFERENT
    assert compare_rows(old, [{**old[0], "val_loss": 2.0 * (1 + 1e-6)}], "fp32").verdict == ROUNDED
    status = compare_rows(old, [{**old[0], "status": "diverged"}], "fp32")
    assert status.verdict == DIFFERENT and not status.floats_only and "status" in status.why
    assert compare_rows(old, [], "fp32").verdict == DIFFERENT
    one_seed = [{"seed": 0, "step": 1, "val_accuracy": 0.5}]
    assert within_seed_noise(one_seed, one_seed, "val_accuracy", "max") == (
        False, "seed noise unknown (1 seed(s) with a val_accuracy)")
    a = [{"seed": s, "step": 1, "val_accuracy": v} for s, v in enumerate((0.5, 0.7, 0.6))]
    b = [{**r, "val_accuracy": r["val_accuracy"] + 0.01} for r in a]
    assert within_seed_noise(a, b, "val_accuracy", "max")[0]  # 0.01 against a standard error of ~0.08
    c = [{**r, "val_accuracy": r["val_accuracy"] + 0.3} for r in a]
    assert not within_seed_noise(a, c, "val_accuracy", "max")[0]


def test_status_the_report_and_compare_say_where_the_numbers_come_from(finished, tmp_path) -> None:
    from analysis.data.machines import PUBLISHED, machines_line
    from analysis.report.build import build_report
    from study.trial.identity import machine, machine_text

    studies = tmp_path / "verify_studies.py"
    studies.write_text("from tests.test_verify import STUDY\n")
    status = CliRunner().invoke(main, ["status", f"{studies}:STUDY", "--storage", str(finished.storage)])
    driver = machine_text({k: v for k, v in machine().items() if k != "threads"})
    assert f"latest run: driver on {driver}; threads per trial 1, precision fp32" in status.output
    summary = build_report(finished.local_path(), tmp_path / "report").summary
    assert f"machines: {driver} | 1 thread (4 trials)" in summary.splitlines()
    assert "Machines</h2>" in (tmp_path / "report" / "index.html").read_text()
    assert machines_line("a", ["X"], "b", ["X"]).startswith("machines: both sides ran on X")
    assert machines_line("a", ["X"], "b", [PUBLISHED]).startswith("machines: DIFFERENT or unknown")


@pytest.mark.slow
def test_a_smoke_study_run_twice_through_ray_is_bit_identical_and_verifies(tmp_path) -> None:
    """docs/reproducibility.md's first promise, end to end: two `study run`s (real local Rays), then `verify`."""
    from analysis.data.rows import scan_study
    from study.run.reproduce import VOLATILE
    from tests.cli import run_cli

    for name in ("first", "second"):
        result = run_cli("run", "demo", "--scale", "smoke", "--storage", str(tmp_path / name), timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
    first, second = (scan_study(tmp_path / n / "demo.smoke").drop(VOLATILE).sort("trial_key", "seed", "step")
                     .collect() for n in ("first", "second"))
    assert first.height == 18 and first.equals(second, null_equal=True)  # 9 trials x 1 seed x 2 evaluations
    verified = run_cli("verify", "demo", "--scale", "smoke", "--storage", str(tmp_path / "first"), "--trials", "2")
    assert verified.returncode == 0 and "2 of 2 trial(s) reproduced" in verified.stdout, verified.stdout
