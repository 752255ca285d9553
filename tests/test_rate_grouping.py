"""How many learning rates a trial packs (issue 49 item 4, `study run --learning-rates-per-trial`): on GPUs a new
fixed-budget grid packs all of a configuration's where its families can, the grouping is kept for the study's life
(trial keys are points, and a point holds its rates), and a run that asks for another is refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from search_spaces import Study, StudyError, get_study
from study.results.storage import StudyStorage
from study.run.rate_grouping import group_rates, parse_rates_per_trial
from study.trial.resources import Resources
from tests.cli import run_cli

HERE = Path(__file__).resolve().parent
RATES_ALONE = f"{HERE / 'studies_for_tests.py'}:RATES_ALONE"
GPU = Resources(gpus_per_trial=0.25)


def _storage(study, tmp_path: Path) -> StudyStorage:  # type: ignore[no-untyped-def]
    return StudyStorage(storage=str(tmp_path), directory=study.directory)


def test_the_option_takes_auto_all_or_a_positive_integer() -> None:
    assert [parse_rates_per_trial(t) for t in ("auto", "all", "3")] == ["auto", "all", 3]
    for bad in ("0", "-2", "x", "2.5", ""):
        with pytest.raises(StudyError, match=rf"invalid --learning-rates-per-trial '{bad}'; allowed: auto, all or an "
                                             r"integer >= 1"):
            parse_rates_per_trial(bad)


def test_auto_packs_every_rate_on_gpus_only_where_the_study_can(tmp_path: Path) -> None:
    study = get_study(RATES_ALONE)
    said: list[str] = []
    grouped = group_rates(study, "auto", GPU, _storage(study, tmp_path), said.append)
    assert grouped.learning_rates_per_trial == 4 and grouped.trial_count() == 1
    assert said == ["on GPUs each trial packs 4 learning rates x 2 seeds (1 trials instead of 4; "
                    "--learning-rates-per-trial 1 keeps one rate per trial)"]
    keep = [(study, Resources()),  # the CPU: the study's own
            (study, Resources(gpus_per_trial=0.25, packing="off")),  # seeds not packed: rates neither
            (study.replace(budget="adaptive", findings=get_study(f"{HERE / 'studies_for_tests.py'}:ADAPTIVE")
                           .findings, scientific={"architecture": ("sum", "max")}), GPU),  # seeds per cell: no
            (Study(name="test.ctl_rates", goal="a family that trains one rate per model", tasks=("ctl",),
                   scientific={"model": ("Transformer",)}, nuisance={"learning_rate": (1e-3, 3e-4)},
                   fixed={"n_steps": 10}, seeds=(0, 1)), GPU),  # the CTL family packs no rates
            (get_study("csordas2021.table1"), GPU)]  # no learning-rate axis
    for each, resources in keep:
        assert group_rates(each, "auto", resources, _storage(each, tmp_path), said.append) == each
    assert len(said) == 1


def test_asked_for_explicitly_and_refused_where_it_cannot_be(tmp_path: Path) -> None:
    study = get_study(RATES_ALONE)
    storage = _storage(study, tmp_path)
    assert group_rates(study, "all", Resources(), storage).learning_rates_per_trial == 4  # the CPU too, when asked
    assert group_rates(study, 3, Resources(), storage).trial_count() == 2  # 3 + 1 rates
    ctl = get_study("csordas2021.table1")
    with pytest.raises(StudyError, match="invalid --learning-rates-per-trial all for study csordas2021.table1; "
                                         "allowed: auto or 1"):
        group_rates(ctl, "all", Resources(), _storage(ctl, tmp_path))


@pytest.mark.slow
def test_the_grouping_on_disk_is_kept_and_another_refused(tmp_path: Path) -> None:
    """All four rates in one trial (asked for on the CPU; on GPUs auto does it): resuming with auto keeps it, the
    status counts its one trial, and one rate per trial is refused before anything starts."""
    first = run_cli("run", RATES_ALONE, "--storage", str(tmp_path), "--learning-rates-per-trial", "all")
    assert first.returncode == 0, first.stderr + first.stdout
    assert "1 trials x 2 seeds; 0 finished before, 1 to run" in first.stdout
    again = run_cli("run", RATES_ALONE, "--storage", str(tmp_path))
    assert again.returncode == 0 and "1 finished before, 0 to run" in again.stdout
    status = run_cli("status", RATES_ALONE, "--storage", str(tmp_path)).stdout
    assert "done 1 | running 0 | failed 0 | unreadable 0 | pending 0 | total 1" in status
    other = run_cli("run", RATES_ALONE, "--storage", str(tmp_path), "--learning-rates-per-trial", "1")
    assert other.returncode == 2 and other.stderr.strip() == (
        "Error: invalid --learning-rates-per-trial 1 for study test.rates_alone: its trials on disk pack 4 learning "
        "rate(s) each; allowed: auto or 4 (another grouping names other trials and would train the same models "
        "again: a fresh --storage takes it)")
