"""Gros 2024 studies: the paper's settings at paper scale, and a smoke study end to end through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from search_spaces import get_study
from search_spaces.gros2024 import FIG3, FIG4, FIG5, FIG6, FIG7, LADDER
from study.run.preflight import validate
from tests.cli import rows, run_cli


@pytest.mark.parametrize(("study", "task", "basis", "delay", "n_context"), [
    (FIG3, "nt", 16, 2, (32, 52, 56)),
    (FIG4, "nt", 2, 5, (16,)),
    (FIG5, "nt", 16, 5, (128, 256)),
    (FIG6, "nt_mix", 16, 2, (32,)),
    (FIG7, "nt_r", 16, 2, (64, 128)),
])
def test_figures_use_the_papers_settings(study, task: str, basis: int, delay: int, n_context: tuple) -> None:
    assert study.tasks == (task,) and study.seeds == tuple(range(16))
    assert {k: a.grid_values() for k, a in study.scientific.items()} == {"n_context": n_context,
                                                                        "attention": ("dpa", "ea")}
    f = study.fixed
    assert (f["basis"], f["delay"]) == (basis, delay)
    assert (f["learning_rate"], f["momentum"], f["beta"]) == (0.02, 0.8, 1.0)
    assert (f["batch_predictions"], f["eval_series"], f["eval_predictions"], f["final_eval_series"]) == (
        40, 100, 50, 10_000)
    assert study.sections == ("expressive_curves", "expressive_attention")
    cpu = study.at_scale("cpu")
    assert cpu.seeds == tuple(range(16)) and cpu.fixed["final_eval_series"] == 1000
    assert any("cpu scale" in d for d in cpu.deviations)


def test_figure_specific_values() -> None:
    assert FIG5.fixed["n_epochs"] == 2000  # "When training for 2000 epochs"
    assert (FIG6.fixed["lr_drop_epoch"], FIG6.fixed["lr_drop_factor"]) == (2500, 4.0)
    assert FIG5.at_scale("cpu").axis_values("n_context") == [128]


def test_ladder_covers_the_grid() -> None:
    assert LADDER.axis_values("basis") == [2, 4, 8, 16] and LADDER.axis_values("delay") == [1, 2, 3, 4, 5]
    assert LADDER.trial_count() == 2 * 4 * 5 * 5
    assert get_study("gros2024.ladder", "cpu").trial_count() == 2 * 3 * 5 * 4
    for scale in ("paper", "cpu", "smoke"):
        validate(get_study("gros2024.ladder", scale))


@pytest.mark.slow
def test_smoke_study_end_to_end_with_report(tmp_path: Path) -> None:
    result = run_cli("run", "gros2024.fig6", "--scale", "smoke", "--storage", "out", "--report", cwd=tmp_path)
    assert result.returncode == 0, result.stderr + result.stdout
    assert "2/2 trials finished, 0 failed" in result.stdout
    study_dir = tmp_path / "out" / "gros2024.fig6.smoke"
    df = rows(study_dir)  # the study's table (the run folded its trial files)
    assert df.height == 2 * 2 * 2  # dpa/ea x 2 seeds x 2 evaluations
    assert set(df["attention"]) == {"dpa", "ea"} and set(df["task"]) == {"nt_mix"}
    assert df["val_accuracy_nt_s"].is_between(0, 1).all() and df["final_accuracy"].drop_nulls().len() == 4
    assert (study_dir / "artifacts" / "attention").is_dir()
    report = study_dir / "report"
    assert (report / "expressive_curves_0.png").is_file() and (report / "expressive_attention.png").is_file()
    summary = (report / "summary.txt").read_text()
    assert "gros2024.fig6: greedy accuracy per configuration" in summary
    assert "last_mean_accuracy_nt_s" in summary and "final_mean_accuracy_nt" in summary


def test_a_cpu_trial_through_the_study_layer_stacks_its_seeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's default packing on a CPU (trainables.families.packs) is the family's, and the Gros family
    stacks every seed into one model (one seed after another measured ~1.5x slower on N16T2)."""
    import trainables.gros2024.family as family
    from study.results.storage import StudyStorage
    from study.trial.trainable import run_trial

    calls: list[list[int]] = []
    original = family.train_members

    def spy(cfg, seeds, **kw):  # type: ignore[no-untyped-def]
        calls.append(list(seeds))
        return original(cfg, seeds, **kw)

    monkeypatch.setattr(family, "train_members", spy)
    study = get_study("gros2024.fig4", "smoke")
    run_trial(study, StudyStorage(str(tmp_path), study.directory), {"n_context": 8, "attention": "ea"})  # CPU, auto
    assert calls == [list(study.seeds)]
