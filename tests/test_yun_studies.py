"""yun2020.hybrid and atlas: stacks per k, every registered mixer in the atlas, lengths, scales."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from search_spaces import StudyError, get_study
from search_spaces.atlas import ATLAS, ATLAS_MIXERS, RICHTER_TASKS, atlas_with
from search_spaces.yun2020 import BUDGET, CONV_LAYERS, HYBRID, HYBRID_LONG, hybrid_stack
from study.run.points import trial_points
from study.trial.trainable import member_configs, split_config
from tests.cli import LOCAL_RAY


def test_atlas_holds_every_registered_mixer() -> None:
    from trainables.mixers import MIXERS

    assert ATLAS_MIXERS == tuple(sorted(MIXERS.names()))  # read from the files, without importing torch
    assert ATLAS.axis_values("mixer") == list(ATLAS_MIXERS)


@pytest.mark.parametrize("scale", ["paper", "cpu", "smoke"])
def test_atlas_with_your_mixer_keeps_the_atlas_trials_and_adds_yours(scale: str) -> None:
    atlas, mine = ATLAS.at_scale(scale), atlas_with("mine_a", "mine_b").at_scale(scale)
    assert mine.directory == atlas.directory and mine.findings == atlas.findings
    assert mine.axis_values("mixer") == [*ATLAS_MIXERS, "mine_a", "mine_b"]
    assert mine.trial_count() == atlas.trial_count() * (len(ATLAS_MIXERS) + 2) // len(ATLAS_MIXERS)
    ours = {key for key, point in trial_points(mine).items() if point["mixer"] in ATLAS_MIXERS}
    assert ours == set(trial_points(atlas))  # the atlas' trials on disk count as done


@pytest.mark.parametrize("mixers", [(), ("softmax",), ("mine", "mine")])
def test_atlas_with_refuses_no_mixer_one_of_its_own_or_a_repeat(mixers: tuple[str, ...]) -> None:
    with pytest.raises(StudyError, match=r"invalid mixers=.* of atlas_with; allowed: one or more distinct names"):
        atlas_with(*mixers)


def test_atlas_covers_every_task_of_the_richter_family_plus_ctl_and_nt() -> None:
    from trainables.richter2020.tasks import TASKS

    assert set(RICHTER_TASKS) == set(TASKS.names())
    assert set(ATLAS.scientific["task"].options) == {*RICHTER_TASKS, "ctl", "nt"}  # type: ignore[union-attr]


@pytest.mark.slow  # 6-21 s (measured 2026-11-28): in `make test`, out of the 3-minute `make test-fast`
def test_every_mixer_trains_on_ctl_and_nt_in_the_atlas(tmp_path, one_torch_thread) -> None:
    from study.results.storage import StudyStorage
    from study.trial.trainable import run_trial

    study = get_study("atlas", "smoke")
    storage = StudyStorage(str(tmp_path), study.directory)
    for task in ("ctl", "nt"):
        for mixer in ATLAS_MIXERS:
            score = run_trial(study, storage, {"task": task, "d_model": 8, "mixer": mixer, "learning_rate": 0.027})
            assert 0.0 <= score <= 1.0, (task, mixer, score)
    assert len(storage.finished_keys()) == 2 * len(ATLAS_MIXERS)


@pytest.mark.parametrize("scale", ["paper", "cpu", "smoke"])
def test_atlas_validates_every_mixer_at_training_length(scale: str) -> None:
    study = get_study("atlas", scale)
    seen = set()
    for config in study.grid():
        if config["task"] not in RICHTER_TASKS:
            continue  # ctl / nt: their own families' configs (trained in the test above)
        point = {n: config[n] for n in study.axes}
        hyper, labels = split_config(study, point)
        (cfg,) = member_configs(hyper)
        assert cfg.resolved()["val_seq_len"] == cfg.seq_len  # "validated at training length"
        assert cfg.layer_mixers() == (config["mixer"],) * cfg.n_layers
        seen.add((config["mixer"], config["task"]))
        assert labels == {}
    assert len(seen) == len(ATLAS_MIXERS) * len(RICHTER_TASKS)


def test_atlas_scales() -> None:
    assert ATLAS.trial_count() == 10 * 5 * 5 * 10 and len(ATLAS.seeds) == 5
    cpu = ATLAS.at_scale("cpu")
    assert cpu.trial_count() * len(cpu.seeds) == 10 * 5 * 2 * 4 * 3  # 1200 models
    budgets = {c["task"]: c.get("n_steps", c.get("n_epochs")) for c in cpu.grid()}
    assert budgets == {t: 800 for t in (*RICHTER_TASKS, "ctl", "nt")} and cpu.sections == ("leaderboard",)
    assert any("validated at training length" in d.lower() for d in cpu.deviations)


def test_hybrid_stacks_put_k_convolutions_at_the_bottom() -> None:
    assert [CONV_LAYERS.options[k]["mixer_stack"] for k in range(5)] == [
        "softmax,softmax,softmax,softmax",
        "sepconv,softmax,softmax,softmax",
        "sepconv,sepconv,softmax,softmax",
        "sepconv,sepconv,sepconv,softmax",
        "sepconv,sepconv,sepconv,sepconv",
    ]
    with pytest.raises(ValueError, match=r"invalid k=5; allowed: 0..4 convolution layers"):
        hybrid_stack(5)
    config = HYBRID.configuration({"task": "mode", "conv_layers": 2, "learning_rate": 0.01})
    assert config["task"] == "mode" and config["mixer_stack"] == "sepconv,sepconv,softmax,softmax"
    assert config["architecture"] == "BERT" and config["n_layers"] == 4
    hyper, labels = split_config(HYBRID, {"task": "mode", "conv_layers": 2, "learning_rate": 0.01})
    assert labels == {"conv_layers": 2} and hyper["mixer_stack"] == "sepconv,sepconv,softmax,softmax"


def test_hybrid_scales() -> None:
    assert HYBRID.trial_count() == 2 * 5 * 10 and HYBRID.sections == ("hybrid",)
    cpu = HYBRID.at_scale("cpu")
    assert cpu.trial_count() == 2 * 5 * 4 and cpu.seeds == (0, 1, 2)
    assert cpu.fixed["d_model"] == 32 and cpu.fixed["seq_len"] == cpu.fixed["val_seq_len"] == 32
    # The cpu budget is one that yun2020.budget measured (at the same d, N and rates), evaluated on whole steps.
    assert cpu.fixed["n_steps"] in BUDGET.scientific["budget"].options
    assert {k: cpu.fixed[k] for k in ("d_model", "seq_len", "batch_size", "n_heads")} == {
        k: BUDGET.fixed[k] for k in ("d_model", "seq_len", "batch_size", "n_heads")}
    assert cpu.axis_values("learning_rate") == BUDGET.axis_values("learning_rate")
    assert cpu.fixed["n_steps"] % cpu.fixed["eval_every"] == 0
    # The longer run differs from the cpu scale only in its budget (also one yun2020.budget measured), k and rates.
    long = HYBRID_LONG.at_scale("cpu")
    assert {k: v for k, v in long.fixed.items() if k not in ("n_steps", "eval_every")} == {
        k: v for k, v in cpu.fixed.items() if k not in ("n_steps", "eval_every")}
    assert long.fixed["n_steps"] in BUDGET.scientific["budget"].options and long.fixed["n_steps"] > cpu.fixed["n_steps"]
    assert set(long.axis_values("learning_rate")) < set(cpu.axis_values("learning_rate"))
    assert list(long.scientific["conv_layers"].options) == [0, 1, 2] and long.trial_count() == 2 * 3 * 3
    assert get_study("yun2020.hybrid", "smoke").trial_count() == 2 * 3 * 2


@pytest.mark.slow
def test_hybrid_smoke_runs_through_the_cli(tmp_path: Path) -> None:
    """The real entry point: `study run yun2020.hybrid --scale smoke` writes each trial's rows with the stack."""
    import polars as pl

    from analysis.data.meta import read_study_meta
    from analysis.data.rows import scan_study

    study = Path(sys.executable).parent / "study"
    result = subprocess.run([str(study), "run", "yun2020.hybrid", "--scale", "smoke", "--storage", str(tmp_path),
                             "--max-concurrent", "2", "--no-report"], capture_output=True, text=True, timeout=300,
                            env={**os.environ, **LOCAL_RAY})
    assert result.returncode == 0, result.stderr[-2000:]
    study_dir = tmp_path / "yun2020.hybrid.smoke"
    table = scan_study(study_dir).collect()  # the study's table (the run folded its trial files)
    assert table["trial_key"].n_unique() == 12
    rows = table.select("task", "conv_layers", "mixer_stack", "mixer", "n_params", "seed")
    assert rows.get_column("seed").unique().sort().to_list() == [0, 1]
    stacks = dict(rows.select("conv_layers", "mixer_stack").unique().iter_rows())
    assert stacks == {0: "softmax,softmax,softmax,softmax", 2: "sepconv,sepconv,softmax,softmax",
                      4: "sepconv,sepconv,sepconv,sepconv"}
    params = dict(rows.filter(pl.col("task") == "cases").select("conv_layers", "n_params").unique().iter_rows())
    assert params[0] > params[2] > params[4]
    assert read_study_meta(study_dir).sections == ("hybrid",)
