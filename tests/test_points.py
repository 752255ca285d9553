"""A grid study's points and the `--where` subset of them (study/run/points.py): what is selected, what is refused."""

from __future__ import annotations

import pytest

from search_spaces import StudyError, get_study
from study.run.points import parse_where, trial_points
from tests.studies_for_tests import RATES_PACKED, TPE


def test_a_subset_is_the_points_whose_axes_take_the_values() -> None:
    study = get_study("richter2020.fig4", "cpu")  # 6 architectures x 3 N x 4 rates
    every = trial_points(study)
    where = parse_where(study, ("architecture=NAP,max", "seq_len=16"))
    assert where == {"architecture": ("NAP", "max"), "seq_len": (16,)}
    subset = trial_points(study, where)
    assert len(subset) == 2 * 1 * len(study.axis_values("learning_rate")) and len(every) == study.trial_count()
    assert subset == {k: p for k, p in every.items() if p["architecture"] in ("NAP", "max") and p["seq_len"] == 16}
    # the same axis twice: either value; a value named twice: once
    assert parse_where(study, ("architecture=NAP", "architecture=max,NAP")) == {"architecture": ("NAP", "max")}


def test_numbers_match_as_study_show_prints_them() -> None:
    """A rate typed to 3 significant digits (0.3^7 = 0.0002187 as 0.000219) names the rate; a neighbour 10%
    away does not, and an integer axis takes its exact values only."""
    study = get_study("richter2020.fig4", "paper")
    rates = study.axis_values("learning_rate")
    assert parse_where(study, ("learning_rate=0.000219",)) == {"learning_rate": (rates[6],)}
    assert parse_where(study, ("learning_rate=2.19e-4,0.3",)) == {"learning_rate": (rates[6], rates[0])}
    with pytest.raises(StudyError, match=r"'0.00024' matches none of axis learning_rate; allowed: 0.3, 0.09"):
        parse_where(study, ("learning_rate=0.00024",))
    with pytest.raises(StudyError, match=r"'16.05' matches none of axis seq_len; allowed: 4, 8, 16"):
        parse_where(study, ("seq_len=16.05",))


def test_linked_axes_are_selected_by_their_label() -> None:
    study = get_study("richter2020.fig9", "smoke")
    subset = trial_points(study, parse_where(study, ("ablation=- warm up,+ GELU",)))
    assert sorted({p["ablation"] for p in subset.values()}) == ["+ GELU", "- warm up"] and len(subset) == 4


def test_packed_learning_rates_run_when_any_of_their_rates_is_selected() -> None:
    rates = RATES_PACKED.axis_values("learning_rate")
    assert RATES_PACKED.learning_rates_per_trial > 1
    subset = trial_points(RATES_PACKED, parse_where(RATES_PACKED, (f"learning_rate={rates[-1]}",)))
    assert subset and all(rates[-1] in p["learning_rate"] for p in subset.values())
    assert len(subset) < len(trial_points(RATES_PACKED))


@pytest.mark.parametrize(("texts", "message"), [
    (("d_model",), r"invalid --where 'd_model'; allowed: AXIS=VALUE\[,VALUE...\]"),
    (("=3",), r"invalid --where '=3'; allowed: AXIS="),
    (("seq_len=",), r"invalid --where 'seq_len='; allowed: AXIS="),
    (("task=mode",), r"task is not an axis of study richter2020.fig4; allowed: architecture, seq_len, learning_rate"),
    (("architecture=NAP,transformer",), r"'transformer' matches none of axis architecture; allowed: BERT, MTE"),
])
def test_bad_where_names_the_text_and_what_is_allowed(texts: tuple[str, ...], message: str) -> None:
    with pytest.raises(StudyError, match=message):
        parse_where(get_study("richter2020.fig4", "paper"), texts)


def test_where_needs_a_grid_study() -> None:
    with pytest.raises(StudyError, match=r"study test.tpe samples with tpe; allowed: --where on grid studies only"):
        parse_where(TPE, ("architecture=NAP",))
    assert parse_where(TPE, ()) == {}
