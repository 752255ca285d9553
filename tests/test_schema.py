"""One typed study schema (issue 42): the axes know their own values, sampling and display; a Finding is checked
when it is built and against its study; a typo in a study file is refused before anything trains, in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from search_spaces import Finding, IntRange, Linked, LogUniform, Study, StudyError
from search_spaces.axes import Values, as_axis
from search_spaces.record import StudyRecord

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("raw", "kind", "values"), [
    ((16, 32), Values, (16, 32)),
    ([0.1, 0.01], Values, (0.1, 0.01)),
    (Linked(options={4: {"n_steps": 800}, 8: {"n_steps": 1600}}), Linked, (4, 8)),
    ({"linked": [[4, {"n_steps": 800}]]}, Linked, (4,)),  # study.json's form: labels keep their type
    ({"4": {"n_steps": 800}}, Linked, ("4",)),  # the previous version's form: labels were strings
])
def test_every_form_of_an_axis_is_an_axis_that_knows_its_values(raw: object, kind: type, values: tuple) -> None:
    axis = as_axis(raw)
    assert isinstance(axis, kind) and axis.on_grid and axis.grid_values() == values
    assert as_axis(json.loads(json.dumps(axis.to_json()))) == axis  # study.json round-trips


def test_a_continuous_axis_samples_and_has_no_grid() -> None:
    axis = as_axis({"distribution": "LogUniform", "low": 1e-4, "high": 0.1})
    assert isinstance(axis, LogUniform) and not axis.on_grid and axis.checked_values() == (1e-4,)
    assert axis.optuna().log and IntRange(low=1, high=8, log=True).optuna().high == 8
    with pytest.raises(StudyError, match="is continuous and has no grid"):
        axis.grid_values()
    with pytest.raises(StudyError, match=r"invalid LogUniform bounds \(0.0, 1.0\); allowed: 0 < low < high"):
        LogUniform(low=0.0, high=1.0)


@pytest.mark.parametrize(("fields", "message"), [
    ({"statistic": "bset"}, "invalid statistic of finding 'd' 'bset'; allowed: best, worst, mean, share, spread"),
    ({"metric": "min(a,)"}, "invalid metric of finding 'd' 'min(a,)'; allowed: a results column"),
    ({"scales": ("paper", "gpu")}, "invalid scales of finding 'd' ('paper', 'gpu'); allowed: a non-empty tuple of "),
    ({"below": {"max": "low"}}, "invalid below {'max': 'low'}; allowed: a mapping panel value -> a finite number"),
    ({"below": {}}, "invalid bounds of finding 'd' {}; allowed: at least one of below, above, ahead"),
    ({"where": {"learning_rate": {"low": 0.1}}}, "invalid where.learning_rate {'low': 0.1}; allowed: {'min'"),
    ({"statistic": "spread", "metric": "a - b"}, "invalid metric of finding 'd' 'a - b'; allowed: one results column"),
])
def test_a_finding_is_checked_when_it_is_built(fields: dict, message: str) -> None:
    with pytest.raises(StudyError) as error:
        Finding(**{"description": "d", "below": {"max": 0.2}, **fields})
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_a_study_checks_its_findings_against_its_columns_and_panel_values_at_every_scale() -> None:
    base = {"name": "t", "goal": "g", "tasks": ("mode",), "scientific": {"architecture": ("sum", "max")},
            "nuisance": {"learning_rate": (0.1, 0.01)}}
    Study(**base, findings=(Finding(description="ok", where={"learning_rate": {"min": 0.05}}, below={"max": 0.2}),))
    with pytest.raises(StudyError, match="invalid where column of finding 'w' of study t 'learnig_rate'; allowed: "
                                         "task, architecture, learning_rate"):
        Study(**base, findings=(Finding(description="w", where={"learnig_rate": (0.1,)}, below={"max": 0.2}),))
    with pytest.raises(StudyError, match="invalid architecture value of finding 'p' of study t 'MAX'; allowed: sum, "
                                         "max, NAP"):
        Study(**base, scales={"cpu": {"scientific": {"architecture": ("sum", "max", "NAP")}}},
              findings=(Finding(description="p", below={"MAX": 0.2}),))
    with pytest.raises(StudyError, match="invalid override in scale cpu of study t 'seed'; allowed: a Study field"):
        Study(**base, scales={"cpu": {"seed": (0,)}})


def test_an_adaptive_budget_needs_a_grid_and_findings() -> None:
    base = {"name": "t", "goal": "g", "tasks": ("mode",), "scientific": {"architecture": ("sum",)}}
    with pytest.raises(StudyError, match=r"invalid budget of study t 'adaptive'; allowed: fixed \(it states no "
                                         "findings"):
        Study(**base, budget="adaptive")
    with pytest.raises(StudyError, match=r"allowed: fixed \(it samples with tpe"):
        Study(**{**base, "nuisance": {"learning_rate": LogUniform(low=1e-3, high=1e-1)}}, sampler="tpe", n_trials=4,
              budget="adaptive", findings=(Finding(description="d", below={"sum": 0.5}),))
    study = Study(**base, seeds=(0, 1, 2, 3, 4), budget="adaptive", findings=(Finding(description="d",
                                                                                         below={"sum": 0.5}),))
    assert (study.starting_seeds, study.looks) == ((0, 1), 4)
    assert study.replace(initial_seeds=1).looks == 5 and study.replace(budget="fixed").looks == 1


def test_replace_is_validated_and_the_record_round_trips() -> None:
    from search_spaces.demo import DEMO

    with pytest.raises(StudyError, match="invalid mode of study demo 'best'"):
        DEMO.replace(mode="best")
    record = StudyRecord.of(DEMO.at_scale("cpu"), versions={"torch": "2.13.0"})
    again = StudyRecord.from_json(json.loads(json.dumps(record.to_json())))
    assert again.to_json() == record.to_json() and again.findings == record.findings


STUDY_FILE = '''from search_spaces import Finding
from search_spaces.demo import DEMO

STAT = DEMO.replace(findings=(Finding(description="max cannot", statistic="bset", below={"max": 0.2}),))
'''
METRIC_FILE = '''from search_spaces import Finding
from search_spaces.demo import DEMO

METRIC = DEMO.replace(findings=(Finding(description="max cannot", metric="val_acuracy", below={"max": 0.2}),))
'''


@pytest.mark.slow  # a Python subprocess
def test_a_typo_in_a_finding_is_refused_before_anything_trains(tmp_path: Path) -> None:
    """A misspelt statistic fails when the study file is imported (its line named); a misspelt metric column in
    preflight, against the rows the model family really writes: exit 2, one line, nothing written."""
    (tmp_path / "stat.py").write_text(STUDY_FILE)
    (tmp_path / "metric.py").write_text(METRIC_FILE)
    storage = tmp_path / "results"
    for spec, message in (
            ("stat.py:STAT", "Error: invalid study file 'stat.py': at stat.py:4: invalid statistic of finding "
                             "'max cannot' 'bset'; allowed: best, worst, mean, share, spread"),
            ("metric.py:METRIC", "Error: invalid metric of finding 'max cannot' of study demo 'val_acuracy'; allowed: "
                                 "the columns its rows have: ")):
        done = subprocess.run([sys.executable, "-m", "study.cli", "run", spec, "--scale", "smoke", "--storage",
                               str(storage)], capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().splitlines()[-1].startswith(message), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert not storage.exists()
