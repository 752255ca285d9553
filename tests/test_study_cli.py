"""The `study` command end to end: a real local Ray, real Parquet read back, resume, clear errors.

Each test runs the installed entry point in a subprocess, as a user would; those that start Ray are
marked slow (they still run in CI).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import polars as pl
import pytest

from tests.cli import LOCAL_RAY, STUDY, finished_trials, rows, run_cli

HERE = Path(__file__).parent
STUDIES = HERE / "studies_for_tests.py"


@pytest.mark.slow
def test_smoke_study_end_to_end_with_report(tmp_path: Path) -> None:
    # A relative --storage, as a user types it: Ray workers run elsewhere and must still find it.
    result = run_cli("run", "richter2020.fig3", "--scale", "smoke", "--storage", "out", "--report", cwd=tmp_path)
    assert result.returncode == 0, result.stderr + result.stdout
    assert "[8/8 100%] running 0 | best val_accuracy" in result.stdout
    assert "[0/8 0%] running 1 | best - | elapsed" in result.stdout  # the first line: when the first trial starts
    assert "8/8 trials finished, 0 failed" in result.stdout
    study_dir = tmp_path / "out" / "richter2020.fig3.smoke"
    df = rows(study_dir)
    # 2 architectures x 2 d x 2 lr = 8 trials, 2 seeds, 20 steps / evaluation every 10 = 2 points
    assert df.height == 8 * 2 * 2
    assert df.select(pl.struct("trial_key", "seed", "step").is_unique().all()).item()
    assert set(df["architecture"]) == {"MTE", "max"} and set(df["d_model"]) == {8, 16}
    assert df["status"].unique().to_list() == ["ok"]
    assert df["val_accuracy"].is_between(0, 1).all() and df["val_argmin_accuracy"].is_not_null().all()
    assert (study_dir / "study.json").is_file()
    report = study_dir / "report"
    pngs = sorted(report.glob("*.png"))
    assert (report / "index.html").stat().st_size > 1000 and pngs
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 2000

    status = run_cli("status", "richter2020.fig3", "--scale", "smoke", "--storage", "out", cwd=tmp_path)
    assert "done 8 | running 0 | failed 0 | unreadable 0 | pending 0 | total 8" in status.stdout


@pytest.mark.slow
def test_a_where_subset_runs_its_points_and_the_whole_study_runs_the_rest(tmp_path: Path) -> None:
    """`--where` runs only the selected grid points into the study's own directory; the run without it then
    trains only the points still missing (same trial keys), and the grid is complete once, with no duplicate."""
    args = ("run", "richter2020.fig4", "--scale", "smoke", "--storage", str(tmp_path))
    part = run_cli(*args, "--where", "architecture=max", "--where", "learning_rate=0.027")
    assert part.returncode == 0, part.stderr + part.stdout
    assert "subset --where architecture=max learning_rate=0.027: 2 of the study's 8 trials" in part.stdout
    assert "2/2 trials finished, 0 failed" in part.stdout
    study_dir = tmp_path / "richter2020.fig4.smoke"
    df = rows(study_dir)
    assert set(df["architecture"]) == {"max"} and df["learning_rate"].unique().to_list() == [0.3**3]
    assert set(df["seq_len"]) == {4, 8}
    rest = run_cli(*args)
    assert rest.returncode == 0, rest.stderr + rest.stdout
    assert "2 finished before, 6 to run" in rest.stdout and "8/8 trials finished, 0 failed" in rest.stdout
    df = rows(study_dir)
    assert df["trial_key"].n_unique() == 8
    assert df.select(pl.struct("trial_key", "seed", "step").is_unique().all()).item()


@pytest.mark.slow
def test_killed_driver_resumes_without_losing_or_duplicating_trials(tmp_path: Path) -> None:
    name = f"{STUDIES}:EIGHT_SHORT"  # 8 trials of 60 steps: the kill lands with most of them pending
    study_dir = tmp_path / "test.eight_short"
    driver = subprocess.Popen([*STUDY, "run", name, "--storage", str(tmp_path)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True, env={**os.environ, **LOCAL_RAY})
    deadline = time.time() + 180
    while time.time() < deadline and finished_trials(study_dir) < 2:
        time.sleep(0.2)
    os.killpg(driver.pid, signal.SIGKILL)  # the driver and the Ray it started, mid-study (maybe mid-fold)
    driver.wait()
    time.sleep(2)  # trial workers live in their own process groups: let them notice their raylet is gone
    before = rows(study_dir)  # the table and the trial files not folded yet
    n_before = before["trial_key"].n_unique()
    assert 2 <= n_before < 8, "the kill must land mid-study"

    result = run_cli("run", name, "--storage", str(tmp_path))
    assert result.returncode == 0, result.stderr + result.stdout
    assert f"{n_before} finished before, {8 - n_before} to run" in result.stdout
    df = rows(study_dir)
    order = ["trial_key", "seed", "step"]
    kept = df.filter(pl.col("trial_key").is_in(before["trial_key"].unique().to_list()))
    # finished trials did not run again: their rows, wall times and hosts included, are the same
    assert kept.select(before.columns).sort(order).equals(before.sort(order)), "finished trials must not run again"
    assert df.height == 8 * 2 * 3  # trials x seeds x evaluations
    assert df.select(pl.struct(*order).is_unique().all()).item()
    assert not list((study_dir / "trials").glob("*.parquet")), "the end of the run folds every trial file"
    assert not list((study_dir / "trials").glob("*.tmp-*"))


@pytest.mark.slow
def test_tpe_sampler_runs_its_budget_and_resumes(tmp_path: Path) -> None:
    name = f"{STUDIES}:TPE"
    result = run_cli("run", name, "--storage", str(tmp_path))
    assert result.returncode == 0, result.stderr + result.stdout
    df = rows(tmp_path / "test.tpe")
    rates = df["learning_rate"].unique()
    assert df["trial_key"].n_unique() == 4 and rates.len() == 4
    assert rates.min() >= 1e-4 and rates.max() <= 1e-1
    again = run_cli("run", name, "--storage", str(tmp_path))
    assert "4 finished before, 0 to run" in again.stdout
    assert rows(tmp_path / "test.tpe")["trial_key"].n_unique() == 4


@pytest.mark.slow
def test_asking_for_a_gpu_on_a_cpu_machine_fails_fast(tmp_path: Path) -> None:
    started = time.time()
    result = run_cli("run", "demo", "--scale", "smoke", "--storage", str(tmp_path), "--gpus-per-trial", "0.25",
                     env={"CUDA_VISIBLE_DEVICES": ""})  # a CPU machine, also where the tests run on a GPU one
    assert result.returncode == 2
    assert "invalid --gpus-per-trial 0.25: the Ray cluster has 0 GPUs" in result.stderr
    assert "Traceback" not in result.stderr and time.time() - started < 60


_BROKEN_STUDY_FILE = "from search_spaces import Study\n\nBROKEN = Study(name='x', goal='y', tasks=('mode',),\n"
_PUBLISHED = "published:richter2020/mode__var_dim"


@pytest.mark.parametrize(("args", "message"), [
    (["run", "fig3"], "Error: unknown study 'fig3'; valid: "),
    (["show", "demo", "--scale", "huge"], "'huge' is not one of 'paper', 'cpu', 'smoke'"),
    (["run", f"{STUDIES}:UNKNOWN_ARCHITECTURE"],
     "invalid architecture='transfomer'; allowed: BERT, MTE, NAP, NON, sum, max"),
    (["run", "demo", "--cpus-per-trial", "0"], "invalid --cpus-per-trial 0.0; allowed: a number > 0"),
    (["run", "demo", "--scale", "smoke", "--max-concurrent", "0"],
     "invalid --max-concurrent 0; allowed: an integer >= 1"),
    (["run", "demo", "--precision", "fp8"], "'fp8' is not one of 'fp32', 'bf16', 'fp64'"),
    (["report", "demo", "--storage", "/nonexistent"], "invalid --storage '/nonexistent': no such directory"),
    (["run", "broken.py:BROKEN"],
     "Error: invalid study file 'broken.py': at broken.py:3: SyntaxError: '(' was never closed"),
    (["show", f"{STUDIES}:NOT_THERE"], "invalid study variable 'NOT_THERE' in "),
    (["compare", _PUBLISHED, _PUBLISHED, "--metric", "nope"], "invalid --metric ['nope']; allowed: metrics both"),
    (["compare", "published:nope", _PUBLISHED], "unknown reference 'nope'; valid: "),
    (["verify", "demo", "--trials", "0"], "invalid --trials 0; allowed: an integer >= 1"),
])
def test_bad_input_is_one_line_and_exit_status_2(args: list[str], message: str, tmp_path: Path) -> None:
    """docs/cli.md: every bad-input error of every command is one line and exits 2."""
    (tmp_path / "broken.py").write_text(_BROKEN_STUDY_FILE)
    result = run_cli(*args, timeout=60, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and message in errors[0], result.stderr
    assert not (tmp_path / "results").exists()  # a rejected study creates no directory


@pytest.mark.parametrize("command", ["show", "run"])
def test_a_misspelt_hyperparameter_fails_before_anything_runs(command: str, tmp_path: Path) -> None:
    """`learnig_rate` would otherwise train at the default rate with a stray column: one line names the key,
    the study and the valid names, and nothing starts (no Ray, no results directory)."""
    started = time.time()
    result = run_cli(command, f"{STUDIES}:TYPO", timeout=60, cwd=tmp_path)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith("Error: invalid hyperparameter 'learnig_rate' in study test.typo (task 'mode')")
    assert "allowed: architecture, task, d_model" in errors[0] and "learning_rate" in errors[0]
    assert "ray:" not in result.stdout and not (tmp_path / "results").exists()
    assert time.time() - started < 30


def test_list_and_show() -> None:
    listing = run_cli("list", timeout=60)
    assert "richter2020.fig7" in listing.stdout and "richter2020.table5" in listing.stdout
    lines = listing.stdout.splitlines()
    goal_column = lines[0].index("goal")  # every row's goal starts under the header's, the longest name included
    assert all(line[goal_column - 2:goal_column] == "  " and line[goal_column] != " " for line in lines[1:]), lines
    show = run_cli("show", "richter2020.fig7", timeout=60)
    assert "trials at paper:    480 (2400 models)" in show.stdout
    assert "scientific architecture: BERT, MTE, NAP, NON, sum, max" in show.stdout


def test_second_run_of_the_same_study_refuses(tmp_path: Path) -> None:
    from search_spaces import get_study
    from study.results.storage import StudyStorage
    from study.run.lock import StudyLock, StudyLocked

    storage = StudyStorage(storage=str(tmp_path), directory=get_study("demo").directory)
    with StudyLock(storage):
        result = run_cli("run", "demo", "--storage", str(tmp_path), timeout=60)
        assert result.returncode == 1 and "is in use by a running `study run`" in result.stderr
        with pytest.raises(StudyLocked):
            StudyLock(storage).__enter__()


@pytest.mark.slow
def test_packed_learning_rates_equal_one_rate_per_trial(tmp_path: Path) -> None:
    # Both studies pack (4 members: 2 rates x 2 seeds, vs 2 seeds per rate), so they differ only in
    # which models share a trial. Float32 rounding differs with the pack and training amplifies it
    # (packed == separate runs is shown in float64 in tests/test_richter2020_packed.py), so the first
    # evaluation is compared tightly: a learning rate or seed given to the wrong member shows there.
    for name in ("RATES_PACKED", "RATES_ALONE"):
        result = run_cli("run", f"{STUDIES}:{name}", "--storage", str(tmp_path), "--packing", "on")
        assert result.returncode == 0, result.stdout + result.stderr
    packed, alone = rows(tmp_path / "test.rates_packed"), rows(tmp_path / "test.rates_alone")
    assert packed["trial_key"].n_unique() == 2 and alone["trial_key"].n_unique() == 4
    assert sorted(packed["learning_rate"].unique()) == [0.0003, 0.001, 0.003, 0.01]
    key = ["learning_rate", "seed", "step"]
    joined = packed.sort(key).join(alone.sort(key), on=key, suffix="_alone")
    assert joined.height == packed.height == alone.height == 4 * 2 * 2
    first = joined.filter(pl.col("step") == pl.col("step").min())
    for metric in ("train_loss", "val_loss", "val_accuracy"):
        diff = (first[metric] - first[f"{metric}_alone"]).abs().max()
        assert diff < 1e-4, f"{metric} differs by {diff} at the first evaluation"
    # The Optuna journal (docs/tracking.md) records a packed trial as one completed trial per learning rate.
    import optuna

    from analysis.stats.rgb import objective

    journal = optuna.load_study(study_name="test.rates_packed", storage=optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(tmp_path / "test.rates_packed" / "optuna.journal"))))
    values = {t.params["learning_rate"]: t.value for t in journal.trials}
    assert values == pytest.approx({r: objective(packed.filter(pl.col("learning_rate") == r).to_dicts(),
                                                 "val_accuracy", "max") for r in (0.0003, 0.001, 0.003, 0.01)})


@pytest.mark.parametrize("command", [["status", "demo"], ["report", "demo"], ["importance", "demo"],
                                     ["compare", "demo", "published"], ["run", "demo", "--scale", "smoke"]])
def test_unusable_storage_is_an_error_in_every_command(command: list[str], tmp_path: Path) -> None:
    result = run_cli(*command, "--storage", "/proc/forbidden", timeout=60, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "invalid --storage '/proc/forbidden'" in result.stderr and "Traceback" not in result.stderr
    assert "pending" not in result.stdout


def test_a_paper_scale_study_without_gpus_needs_an_explicit_request(tmp_path: Path) -> None:
    no_gpu = {"CUDA_VISIBLE_DEVICES": ""}
    result = run_cli("run", "richter2020.fig7", "--storage", str(tmp_path), timeout=60, cwd=tmp_path, env=no_gpu)
    assert result.returncode == 2
    assert result.stdout.splitlines()[0] == "richter2020.fig7 at scale paper: 480 trials x 5 seeds = 2400 models"
    assert ("richter2020.fig7 at the paper scale trains 2400 models and this machine has no GPU; run it anyway "
            "with an explicit --scale paper, or choose --scale cpu (216 models), --scale smoke (16 models)") \
        in result.stderr.replace("\n", " ")
    assert list(tmp_path.iterdir()) == []  # nothing started, nothing written
    # the demo's paper scale is small: it starts without asking (here it stops at the storage check)
    demo = run_cli("run", "demo", "--storage", "/proc/forbidden", timeout=60, cwd=tmp_path, env=no_gpu)
    assert demo.stdout.startswith("demo at scale paper: 9 trials x 6 seeds = 54 models at most (adaptive budget: 27 "
                                  "to start, 3 seed(s) per cell)")
    assert demo.returncode == 2 and "invalid --storage" in demo.stderr


def _study_with_findings(storage: Path, directory: str, scale: str, findings: list[dict]) -> Path:
    from analysis.data.synthetic import write_synthetic_study

    grid = {"architecture": ["NAP", "sum", "max"], "d_model": [32], "learning_rate": [0.027, 0.0081, 0.0024]}
    write_synthetic_study(storage / directory, grid, seeds=(0, 1), cases=False, name="demo",
                          meta={"scale": scale, "findings": findings})
    return storage / directory


def test_report_exit_status_says_whether_a_checked_finding_failed(tmp_path: Path) -> None:
    """`study report NAME` checks the study's findings as its definition states them (here a study file of the
    user's: the demo with a claim its rows refute), not the ones study.json recorded at run time."""
    from click.testing import CliRunner

    from study.cli import main
    from study.cli.common import FINDING_FAILED_EXIT

    assert FINDING_FAILED_EXIT == 3
    study_file = tmp_path / "claims.py"
    study_file.write_text("from search_spaces import Finding\n"
                          "from search_spaces.demo import DEMO\n"
                          "STUDY = DEMO.replace(findings=(Finding(description='NAP cannot learn', "
                          "below={'NAP': 0.1}, scales=('paper', 'cpu')),))\n")
    name = f"{study_file}:STUDY"
    _study_with_findings(tmp_path, "demo", "paper", [])  # recorded before the claim was added
    result = CliRunner().invoke(main, ["report", name, "--storage", str(tmp_path)])
    assert result.exit_code == 3, result.output
    assert "  FAIL: NAP cannot learn" in result.output and "required <= 10.0%: fails" in result.output
    assert "1 finding(s) checked and failed: exit status 3" in result.output
    # the same claim at smoke scale is not checked: no failure, exit 0
    _study_with_findings(tmp_path, "demo.smoke", "smoke", [])
    smoke = CliRunner().invoke(main, ["report", name, "--scale", "smoke", "--storage", str(tmp_path)])
    assert smoke.exit_code == 0, smoke.output
    assert "  NOT CHECKED: NAP cannot learn" in smoke.output


def test_a_ray_that_cannot_start_is_not_blamed_on_the_storage(monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken Ray install (its GCS server not executable: seen when a bundle lost file modes) is reported as
    Ray's failure to start. `ray.init` is replaced by one raising what Popen raised then; breaking the real
    install of this machine to provoke it is not an option."""
    import ray

    from search_spaces import StudyError
    from study.run.cluster import start_ray

    def broken(**_: object) -> None:
        raise PermissionError(13, "Permission denied", "/site/ray/core/src/ray/gcs/gcs_server")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", broken)
    with pytest.raises(StudyError) as error:
        start_ray(None, print)
    assert str(error.value) == ("could not start a local Ray: [Errno 13] Permission denied: "
                                "'/site/ray/core/src/ray/gcs/gcs_server'")


@pytest.mark.parametrize(("args", "message"), [
    (["richter2020.fig1", "--scale", "smoke", "--packing", "on"],
     "Error: study richter2020.fig1: --packing on cannot be honoured for model family 'pooling_scale': its seeds "
     "never train as one stacked model (packs_when='never'); they train one after another; allowed: --packing auto "
     "or off"),
    ([f"{STUDIES}:RATES_PACKED", "--packing", "off"],
     "Error: study test.rates_packed: --packing off cannot be honoured for 2 packed learning rates of model family "
     "'richter2020': they train as one stacked model"),
])
def test_a_packing_request_no_trial_can_honour_is_refused_before_launch(args: list[str], message: str,
                                                                        tmp_path: Path) -> None:
    result = run_cli("run", *args, "--storage", str(tmp_path / "out"), timeout=120, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = [x for x in result.stderr.splitlines() if x.strip()]
    assert line.startswith(message), line
    assert "ray:" not in result.stdout and not (tmp_path / "out").exists()


def test_cpu_trials_that_the_packing_budget_unpacks_are_counted_before_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Packed learning rates always pack; on the CPU, members over the Richter family's packing budget train one
    at a time: said in a warning line before launch (and by a PackingWarning in each such trial)."""
    import trainables.richter2020.loop as loop
    from search_spaces import get_study
    from study.run.packing import check_packing

    study = get_study(f"{STUDIES}:RATES_PACKED", "paper")
    lines: list[str] = []
    check_packing(study, "auto", echo=lines.append)
    assert lines == []  # tiny models: every pack fits
    monkeypatch.setattr(loop, "CPU_PACK_BYTES", 1)
    check_packing(study, "auto", echo=lines.append)
    assert lines == ["warning: --packing auto: 2 of 2 trials train their members one after another on the CPU, e.g. "
                     "{architecture='NAP', learning_rate=[0.01, 0.003]}: one member's largest activation exceeds its "
                     "family's CPU packing budget (a PackingWarning in each such trial says how much)"]
    check_packing(study, "auto", gpus_per_trial=0.25, echo=lines.append)  # on GPUs there is no such budget
    assert len(lines) == 1


def test_a_packing_request_some_trials_cannot_honour_is_a_warning_naming_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """The atlas with --packing on, where one column's family cannot pack (every family of the atlas packs since
    issue 56: here the CTL family is made one that cannot, packs_when='never'): said, with how many trials; the rest
    pack. Without that change nothing is said."""
    import dataclasses

    import trainables.catalog as catalog
    from search_spaces import get_study
    from study.run.packing import check_packing
    from trainables.families import Family

    lines: list[str] = []
    check_packing(get_study("atlas", "smoke"), "on", gpus_per_trial=0.25, echo=lines.append)
    assert lines == []
    original = catalog.family_for_task

    def never_for_ctl(task: str) -> Family:
        family = original(task)
        return dataclasses.replace(family, packs_when="never") if family.name == "csordas2021" else family

    monkeypatch.setattr(catalog, "family_for_task", never_for_ctl)
    check_packing(get_study("atlas", "smoke"), "on", gpus_per_trial=0.25, echo=lines.append)
    assert lines == ["warning: --packing on cannot be honoured for model family 'csordas2021': its seeds never train "
                     "as one stacked model (packs_when='never'); they train one after another: 20 of the run's 100 "
                     "trials (the others pack as asked)"]
    lines.clear()
    check_packing(get_study("atlas", "smoke"), "on", gpus_per_trial=0.25, where={"task": ("mode",)},
                  echo=lines.append)
    assert lines == []  # the column that cannot pack is not in this run
