"""Trackers as views of a study (study/tracking): a real MLflow SQLite store read back with mlflow.search_runs, real
TensorBoard event files read back with tensorboard's EventAccumulator, through `study run --track` (a real local
Ray) and `study export`. No network."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import optuna
import polars as pl
import pytest

from analysis.stats.rgb import objective
from search_spaces import get_study
from study.results.storage import StudyStorage
from study.run.journal import JOURNAL
from study.tracking import TrackError, TrackSpec, parse_track
from study.tracking.series import TrialSeries
from study.trial.trainable import run_trial, trial_params
from tests.cli import rows, run_cli
from tests.test_study_cli import STUDIES

GRID = f"{STUDIES}:TRACKED"  # 4 trials (learning rates) x 2 seeds x 3 evaluations (60 steps: ~1 CPU s a trial)
METRICS = ("val_accuracy", "train_loss")


def test_series_per_seed_and_the_mean_once_every_seed_is_in() -> None:
    series = TrialSeries((0, 1), {"learning_rate": 0.01, "d_model": 8})
    row = {"seed": 0, "step": 100, "epoch": 1, "val_accuracy": 0.5, "status": "ok", "wall_time_s": 1.0,
           "n_params": 10, "device": "cpu", "learning_rate": 0.01}
    assert series.add(row) == (100, {"seed_0/val_accuracy": 0.5})
    assert series.add({**row, "seed": 1, "val_accuracy": 0.75}) == (
        100, {"seed_1/val_accuracy": 0.75, "mean/val_accuracy": 0.625})
    packed = TrialSeries((0,), {"learning_rate": [0.01, 0.001]})
    assert packed.add({**row, "learning_rate": 0.001}) == (100, {"lr_0.001/seed_0/val_accuracy": 0.5,
                                                                 "lr_0.001/mean/val_accuracy": 0.5})


def test_a_tracker_without_its_extra_or_unknown_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(TrackError, match=r"^invalid --track 'neptune'; allowed: mlflow\[=URI\], tensorboard"):
        parse_track("neptune")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mlflow" else real(name, *a))
    with pytest.raises(TrackError) as error:
        parse_track("mlflow=sqlite:///x.db")
    assert str(error.value) == "--track mlflow needs the mlflow extra: pip install 'attention-studies[mlflow]'"
    assert parse_track("tensorboard=/tmp/tb") == TrackSpec("tensorboard", "/tmp/tb")


def _last_rows(df: pl.DataFrame) -> pl.DataFrame:
    return df.sort("step").group_by("trial_key", "seed").last()


def _assert_mlflow_matches(uri: str, experiment: str, df: pl.DataFrame, params_of: dict[str, dict]) -> None:
    import mlflow  # here, not at collection: ~3 CPU s of the worker that runs no test of it (as tensorboard's)

    mlflow.set_tracking_uri(uri)
    runs = mlflow.search_runs(experiment_names=[experiment], output_format="list")
    assert sorted(r.data.tags["trial_key"] for r in runs) == sorted(df["trial_key"].unique())  # each trial once
    last = _last_rows(df)
    client = mlflow.MlflowClient(uri)
    for run in runs:
        key = run.data.tags["trial_key"]
        first = df.filter(pl.col("trial_key") == key).row(0, named=True)
        assert run.data.params == {k: str(v) for k, v in params_of[key].items()}
        assert all(run.data.params[k] == str(first[k]) for k in params_of[key])  # the Parquet columns
        mine = last.filter(pl.col("trial_key") == key)
        for metric in METRICS:
            for seed, value in mine.select("seed", metric).iter_rows():
                assert run.data.metrics[f"seed_{seed}/{metric}"] == pytest.approx(value, nan_ok=True)
            assert run.data.metrics[f"mean/{metric}"] == pytest.approx(mine[metric].mean())
        history = client.get_metric_history(run.info.run_id, "seed_0/val_accuracy")
        assert [m.step for m in history] == [20, 40, 60]  # one point per evaluation: nothing logged twice


def _assert_tensorboard_matches(root: Path, df: pl.DataFrame) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    assert sorted(p.name for p in root.iterdir()) == sorted(df["trial_key"].unique())
    for key in df["trial_key"].unique():
        events = EventAccumulator(str(root / key))
        events.Reload()
        mine = df.filter(pl.col("trial_key") == key)
        for seed in (0, 1):
            curve = mine.filter(pl.col("seed") == seed).sort("step")
            got = [(e.step, e.value) for e in events.Scalars(f"seed_{seed}/val_accuracy")]
            assert got == [(s, pytest.approx(v, rel=1e-6)) for s, v in curve.select("step", "val_accuracy").rows()]
        means = mine.group_by("step").agg(pl.col("val_accuracy").mean()).sort("step")
        assert [e.value for e in events.Scalars("mean/val_accuracy")] == pytest.approx(means["val_accuracy"].to_list())


@pytest.mark.slow
def test_track_logs_every_trial_live_and_export_puts_the_same_into_fresh_trackers(tmp_path: Path) -> None:
    study = get_study(GRID)
    study_dir = tmp_path / study.directory
    result = run_cli("run", GRID, "--storage", str(tmp_path), "--track", "mlflow", "--track", "tensorboard")
    assert result.returncode == 0, result.stderr + result.stdout
    df = rows(study_dir)
    points = {k: {"architecture": a, "learning_rate": r}
              for k, a, r in df.select("trial_key", "architecture", "learning_rate").unique().rows()}
    params_of = {k: trial_params(study, p) for k, p in points.items()}
    live_uri = f"sqlite:///{study_dir / 'mlflow.db'}"
    _assert_mlflow_matches(live_uri, study.directory, df, params_of)
    _assert_tensorboard_matches(study_dir / "tensorboard", df)

    # A relaunched trial that finds its rows logs nothing (run_trial returns early).
    before = {p: p.stat().st_mtime_ns for p in (study_dir / "tensorboard").rglob("*") if p.is_file()}
    key, point = next(iter(points.items()))
    storage = StudyStorage(str(tmp_path), study.directory)
    specs = [TrackSpec("mlflow", live_uri), TrackSpec("tensorboard", str(study_dir / "tensorboard"))]
    run_trial(study, storage, point, track=specs)
    _assert_mlflow_matches(live_uri, study.directory, df, params_of)
    assert {p: p.stat().st_mtime_ns for p in (study_dir / "tensorboard").rglob("*") if p.is_file()} == before

    # The grid's finished trials are in its Optuna journal, with the Parquet objective.
    journal = optuna.load_study(study_name=study.name, storage=optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(study_dir / JOURNAL))))
    assert {t.user_attrs["trial_key"]: t.value for t in journal.trials} == pytest.approx(
        {k: objective(df.filter(pl.col("trial_key") == k).to_dicts(), "val_accuracy", "max") for k in points})

    uri, tb = f"sqlite:///{tmp_path / 'exported.db'}", tmp_path / "exported_tb"
    for _ in range(2):  # exporting again replaces each trial's run
        exported = run_cli("export", GRID, "--storage", str(tmp_path), "--to", f"mlflow={uri}",
                           "--to", f"tensorboard={tb}")
        assert exported.returncode == 0, exported.stderr + exported.stdout
        assert f"exported 4 trials of {study.name} (scale paper) to mlflow {uri}, tensorboard {tb}" in exported.stdout
    _assert_mlflow_matches(uri, study.directory, df, params_of)
    _assert_tensorboard_matches(tb, df)


def test_bad_tracker_input_is_one_line_and_exit_status_2(tmp_path: Path) -> None:
    result = run_cli("run", GRID, "--storage", str(tmp_path), "--track", "neptune")
    assert result.returncode == 2 and result.stderr.strip() == (
        "Error: invalid --track 'neptune'; allowed: mlflow[=URI], tensorboard[=DIR], wandb[=PROJECT]")
    missing = run_cli("export", GRID, "--storage", str(tmp_path), "--to", "tensorboard")
    assert missing.returncode == 1 and "no results for study test.tracked" in missing.stderr
    (tmp_path / "a_file").write_text("not a directory")
    bad = f"sqlite:///{tmp_path}/a_file/x.db"
    nowhere = run_cli("export", GRID, "--storage", str(tmp_path), "--to", f"mlflow={bad}")
    assert nowhere.returncode == 2 and nowhere.stderr.startswith(f"Error: invalid --to mlflow={bad!r}: ")
    assert len(nowhere.stderr.strip().splitlines()) == 1


def _assert_wandb_matches(where: Path, study_dir: Path, params_of: dict[str, dict]) -> None:
    from tests.wandb_files import read_run

    df = rows(study_dir)
    runs = [read_run(d) for d in sorted((where / "wandb").glob("offline-run-*"))]
    assert sorted(r["id"] for r in runs) == sorted(df["trial_key"].unique())  # one run per trial
    for run in runs:
        key = run["id"]
        assert (run["name"], run["group"], run["job_type"], run["project"]) == (key, "test.tpe", "trial", "studies")
        assert {k: v for k, v in run["config"].items() if k != "_wandb"} == params_of[key]
        curve = df.filter(pl.col("trial_key") == key).sort("step")
        logged = [(h["step"], h["seed_0/val_accuracy"]) for h in run["history"] if "seed_0/val_accuracy" in h]
        assert logged == [(s, pytest.approx(v)) for s, v in curve.select("step", "val_accuracy").rows()]
        assert [h["mean/val_accuracy"] for h in run["history"] if "mean/val_accuracy" in h] == pytest.approx(
            curve["val_accuracy"].to_list())  # one seed: the mean is the seed's curve


def test_wandb_offline_live_and_exported_runs_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WANDB_MODE", "offline")  # no network: the run files stay on disk
    monkeypatch.setenv("WANDB_SILENT", "true")
    study = get_study(f"{STUDIES}:TPE")  # 100 steps, 1 seed
    storage = StudyStorage(str(tmp_path), study.directory)
    points = [{"architecture": "sum", "learning_rate": rate} for rate in (0.01, 0.001)]
    live = TrackSpec("wandb", "studies", str(tmp_path / "live"))
    for point in points:  # the trial entry Tune runs, without Ray
        run_trial(study, storage, point, track=[live])
    study_dir = tmp_path / study.directory
    params_of = {k: trial_params(study, {"architecture": a, "learning_rate": r}) for k, a, r in
                 rows(study_dir).select("trial_key", "architecture", "learning_rate").unique().rows()}
    _assert_wandb_matches(tmp_path / "live", study_dir, params_of)

    exported = run_cli("export", f"{STUDIES}:TPE", "--storage", str(tmp_path), "--to", "wandb=studies",
                       env={"WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_DIR": str(tmp_path / "exported")})
    assert exported.returncode == 0, exported.stderr + exported.stdout
    _assert_wandb_matches(tmp_path / "exported", study_dir, params_of)
