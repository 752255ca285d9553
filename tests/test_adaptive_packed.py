"""An adaptive budget whose trials pack every learning rate of a configuration (`--learning-rates-per-trial all`, the
way a GPU runs a figure: bench/gpu_checks.sh figure), through a real local Ray: a configuration's first seeds of every
rate train as one trial, each look's extra seeds for rates of one configuration train as one more trial, every model
once, and a second run trains nothing."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tests.cli import rows, run_cli
from tests.test_adaptive_run import ADAPTIVE, CELL, _given, _looks


@pytest.mark.slow
def test_an_adaptive_budget_packs_a_configurations_rates_and_its_looks_seeds(tmp_path: Path) -> None:
    study_dir = tmp_path / "test.adaptive"
    first = run_cli("run", ADAPTIVE, "--storage", str(tmp_path), "--learning-rates-per-trial", "all")
    assert first.returncode == 0, first.stderr + first.stdout
    assert "2 trials x 4 seeds, adaptive budget" in first.stdout  # sum and max, each with its 3 rates in one trial
    looks = _looks(study_dir)
    assert len(looks) >= 2 and looks[0]["statuses"] == ["UNDECIDED", "UNDECIDED"]
    assert json.loads((study_dir / "study.json").read_text())["learning_rates_per_trial"] == 3
    models = rows(study_dir).group_by([*CELL, "seed"]).agg(pl.col("trial_key").n_unique().alias("trials"))
    assert models.get_column("trials").max() == 1  # every model trained once
    seeds = {(a, lr): sorted(s) for a, lr, s in models.group_by(CELL).agg(pl.col("seed")).iter_rows()}
    given = _given(looks)
    assert {cell: len(s) for cell, s in seeds.items()} == {cell: given.get(cell, 1) for cell in seeds}
    assert all(s == list(range(len(s))) for s in seeds.values())
    # trials: one per configuration to start, then per look one per (configuration, seed) it gave
    per_look = [len({(r["cell"]["architecture"], r["seed"]) for r in look["requests"]}) for look in looks]
    trials = rows(study_dir).get_column("trial_key").n_unique()
    assert trials == 2 + sum(per_look) < 6 + sum(len(look["requests"]) for look in looks)
    packed = rows(study_dir).group_by("trial_key").agg(pl.col("learning_rate").n_unique().alias("rates"))
    assert packed.get_column("rates").max() == 3  # a first trial holds every rate of its configuration

    again = run_cli("run", ADAPTIVE, "--storage", str(tmp_path))  # auto resumes the grouping on disk
    assert again.returncode == 0, again.stderr + again.stdout
    assert "running" not in again.stdout and _looks(study_dir) == looks
    assert rows(study_dir).get_column("trial_key").n_unique() == trials
    status = run_cli("status", ADAPTIVE, "--storage", str(tmp_path)).stdout
    assert f"done {trials} | running 0 | failed 0 | unreadable 0 | pending 0 | total {trials}" in status


@pytest.mark.slow
def test_order_by_takes_a_numeric_axis_of_the_grid(tmp_path: Path) -> None:
    done = run_cli("run", "richter2020.fig7", "--scale", "smoke", "--storage", str(tmp_path), "--order-by", "task")
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "Error: invalid --order-by 'task' for study richter2020.fig7; allowed: an axis of numbers of its grid "
        "(d_model)"]
    assert not (tmp_path / "richter2020.fig7.smoke" / "trials").exists()  # refused before anything trained
