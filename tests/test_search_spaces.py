"""Study definitions: validation, scales, grids, trial keys, the paper's exact values."""

import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from search_spaces import Linked, LogUniform, Study, StudyError, all_studies, get_study
from search_spaces.richter2020 import FIG3, FIG9, FIG13, LEARNING_RATES
from study.run.points import trial_points
from study.run.preflight import validate
from study.trial.identity import trial_key

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", sorted(all_studies()))
@pytest.mark.parametrize("scale", ["paper", "cpu", "smoke"])
def test_every_study_is_valid_at_every_scale(name: str, scale: str) -> None:
    study = get_study(name, scale)
    validate(study)  # every configuration builds a TrainConfig
    assert study.trial_count() >= 1
    json.dumps(study.to_json())  # study.json is serialisable


def test_paper_scale_matches_the_paper() -> None:
    assert FIG3.trial_count() == 6 * 8 * 10
    assert FIG3.seeds == (0, 1, 2, 3, 4)
    assert FIG3.fixed["n_steps"] == 3200 and FIG3.fixed["batch_size"] == 32
    assert LEARNING_RATES[0] == pytest.approx(0.3) and LEARNING_RATES[-1] == pytest.approx(5.9049e-6)
    trained = sum(s.trial_count() * len(s.seeds) for n, s in all_studies().items()
                  if n == s.name and s.tasks != ("pooling_scale",) and s.name.startswith("richter2020"))  # Fig. 1: none
    assert 25_000 <= trained <= 30_000  # "about 25,000 models"


def test_learning_rates_equal_the_published_values() -> None:
    import polars as pl

    from analysis.data.reference import load_reference

    published = load_reference("richter2020/mode__var_dim").select("learning_rate").unique().collect()
    assert sorted(published["learning_rate"].to_list()) == pytest.approx(sorted(LEARNING_RATES), rel=1e-9)
    assert isinstance(published, pl.DataFrame)


def test_linked_axis_sets_several_hyperparameters() -> None:
    config = FIG13.configuration({"architecture": "MTE", "batch_size": 4, "learning_rate": 0.09})
    assert config["batch_size"] == 4 and config["n_steps"] == 3200 * 32 // 4
    config = FIG9.configuration({"ablation": "+ normalize", "d_model": 8, "learning_rate": 0.09})
    assert config == {"task": "cases", "n_steps": 3200, "batch_size": 32, "architecture": "BERT",
                      "warmup": False, "grad_clip": False, "ln_placement": "pre_residual",
                      "ablation": "+ normalize", "d_model": 8, "learning_rate": 0.09}


def test_scales_override_and_axes_win_over_fixed() -> None:
    from search_spaces.richter2020 import FIG4

    smoke = FIG4.at_scale("smoke")
    assert smoke.scale == "smoke" and smoke.directory == "richter2020.fig4.smoke"
    assert "seq_len" not in smoke.fixed and smoke.axis_values("seq_len") == [4, 8]
    assert smoke.fixed["n_steps"] == 20
    assert FIG4.at_scale("cpu").fixed["d_model"] == 32


def test_grid_points_and_trial_keys_are_unique_and_stable() -> None:
    study = get_study("richter2020.fig9", "smoke")
    points = trial_points(study)
    assert len(points) == study.trial_count() == 10
    assert points == trial_points(get_study("richter2020.fig9", "smoke"))
    a = trial_key("s", {"x": 1, "y": 2}, (0, 1))
    assert a == trial_key("s", {"y": 2, "x": 1}, [0, 1]) and len(a) == 16
    assert a != trial_key("s", {"x": 1, "y": 2}, (0,))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"sampler": "bayes"}, "invalid sampler of study t 'bayes'; allowed: grid, random, qmc, tpe"),
    ({"mode": "best"}, "invalid mode of study t 'best'; allowed: max, min"),
    ({"seeds": ()}, "invalid seeds of study t ()"),
    ({"fixed": {"d_model": 8}}, "each name in exactly one of scientific / nuisance / fixed"),
    ({"nuisance": {"learning_rate": LogUniform(low=1e-3, high=1e-1)}}, "random, qmc or tpe when axes are continuous"),
    ({"sampler": "tpe"}, "invalid n_trials of study t None; allowed: a positive int for sampler tpe"),
    ({"tasks": ()}, "invalid tasks of study t (); allowed: a non-empty tuple of distinct task names"),
    ({"tasks": "mode"}, "invalid tasks of study t 'mode'; allowed: a valid tuple"),
    ({"tasks": ("cases", "mode")}, "invalid tasks of study t ('cases', 'mode'); allowed: one task, or a task axis"),
    ({"tasks": ("cases",), "nuisance": {"task": ("cases", "mode")}},
     "invalid tasks of study t ('cases',); allowed: the values of its task axis: ('cases', 'mode')"),
    ({"fixed": {"task": "mode"}}, "invalid fixed of study t {'task': 'mode'}; allowed: no task: declare it in tasks"),
])
def test_invalid_study_definitions_name_the_field(kwargs: dict, message: str) -> None:
    base = {"name": "t", "goal": "g", "tasks": ("mode",), "scientific": {"d_model": (8,)}}
    with pytest.raises(StudyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Study(**{**base, **kwargs})


def test_unknown_study_and_scale_fail_with_the_valid_ones() -> None:
    with pytest.raises(StudyError, match=r"unknown study 'fig3'; valid: .*demo, .*richter2020.fig1, .*fig7"):
        get_study("fig3")
    with pytest.raises(StudyError, match="invalid scale 'huge'; allowed: paper, cpu, smoke"):
        get_study("demo", "huge")
    with pytest.raises(StudyError, match="invalid Linked options"):
        Linked(options={})


def test_unknown_architecture_is_caught_before_ray_starts() -> None:
    study = get_study("tests/studies_for_tests.py:UNKNOWN_ARCHITECTURE")
    with pytest.raises(StudyError, match="invalid architecture='transfomer'; allowed: BERT, MTE, NAP, NON, sum, max"):
        validate(study)


def test_study_from_file_lists_the_variables_when_wrong() -> None:
    with pytest.raises(StudyError, match="valid: INTERRUPTIBLE, TPE, UNKNOWN_ARCHITECTURE"):
        get_study("tests/studies_for_tests.py:NOPE")


def test_packed_learning_rates_group_neighbours() -> None:
    study = get_study("tests/studies_for_tests.py:RATES_PACKED")
    assert study.grid_size() == 4 and study.trial_count() == 2
    assert [c["learning_rate"] for c in study.grid()] == [[0.01, 0.003], [0.001, 0.0003]]
    three = Study(name="t", goal="g", tasks=("mode",), scientific={"d_model": (8, 16)},
                  nuisance={"learning_rate": (0.1, 0.01, 0.001)}, learning_rates_per_trial=2)
    assert three.trial_count() == 4  # per d: [0.1, 0.01] and [0.001]
    validate(study)
    with pytest.raises(StudyError, match="learning_rates_per_trial of study t 2; allowed: 1, or more with the grid"):
        Study(name="t", goal="g", tasks=("mode",), scientific={"d_model": (8,)}, sampler="random", n_trials=2,
              nuisance={"learning_rate": LogUniform(low=1e-3, high=1e-1)}, learning_rates_per_trial=2)


@pytest.mark.slow  # a Python subprocess
def test_importing_the_studies_does_not_import_torch() -> None:
    # The CLI lists and validates studies before any trial runs; torch costs seconds to import.
    loaded = "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'trainables')))"
    code = f"import sys, search_spaces; {loaded}; search_spaces.all_studies(); {loaded}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    # Importing the package imports no study (the schema alone: analysis/ reads study.json with it); the studies
    # come on first use, and the atlas lists the mixer files through trainables.mixers, whose import is torch-free.
    assert out.stdout.split("\n")[:2] == ["[]", "['trainables', 'trainables.mixers', 'trainables.mixers._files']"]


def test_written_out_directions_equal_the_ndr_ones() -> None:  # the atlas' mixer list: test_yun_studies
    from search_spaces.csordas2021 import DIRECTIONS
    from trainables.csordas2021.config import DIRECTIONS as NDR_DIRECTIONS

    assert DIRECTIONS == NDR_DIRECTIONS


def test_unknown_names_are_refused_and_declared_labels_are_columns() -> None:
    from study.trial.trainable import split_config

    tiny = {"n_steps": 100, "eval_every": 100, "d_model": 8, "seq_len": 8}
    typo = Study(name="t.typo", goal="g", tasks=("mode",), scientific={"architecture": ("sum",)},
                 fixed={**tiny, "learnig_rate": 0.1})
    with pytest.raises(StudyError, match=r"^invalid hyperparameter 'learnig_rate' in study t.typo "
                                         r"\(task 'mode'\): not a field of the richter2020 family's config nor a "
                                         r"label of the study; allowed: architecture, task, d_model"):
        validate(typo)
    labelled = Study(name="t.labels", goal="g", tasks=("mode",), scientific={"architecture": ("sum",)},
                     fixed={**tiny, "note": "baseline"}, labels=("note",))
    validate(labelled)
    hyper, labels = split_config(labelled, {"architecture": "sum"})
    assert labels == {"note": "baseline"} and "note" not in hyper
    assert labelled.to_json()["labels"] == ["note"]


def test_a_typo_in_any_linked_option_is_refused_with_an_optuna_sampler() -> None:
    study = Study(name="t.linked", goal="g", tasks=("mode",),
                  scientific={"variant": Linked(options={"a": {"architecture": "sum"},
                                                         "b": {"architecture": "NAP", "n_stepz": 200}})},
                  nuisance={"learning_rate": LogUniform(low=1e-4, high=1e-2)},
                  fixed={"n_steps": 100, "eval_every": 100}, sampler="tpe", n_trials=2)
    assert study.label_names == ("variant",)
    with pytest.raises(StudyError, match="invalid hyperparameter 'n_stepz' in study t.linked"):
        validate(study)


def test_tasks_are_declared_or_read_from_the_task_axis_and_checked_against_the_catalogue() -> None:
    from study.run.preflight import validate

    swept = Study(name="t", goal="g", scientific={"task": ("cases", "mode"), "d_model": (8,)})
    assert swept.tasks == ("cases", "mode")
    assert [c["task"] for c in swept.grid()] == ["cases", "mode"]
    one = Study(name="t", goal="g", tasks=("mode",), scientific={"d_model": (8,)})
    assert [c["task"] for c in one.grid()] == ["mode"]
    smoke = Study(name="t", goal="g", scientific={"task": ("cases", "mode")},
                  scales={"smoke": {"scientific": {"task": ("mode",)}}}).at_scale("smoke")
    assert smoke.tasks == ("mode",)  # the scale's task axis says what trains there
    assert get_study("atlas").tasks == ("cases", "cases_first_token", "mode", "ctl", "nt")
    with pytest.raises(StudyError, match=r"invalid tasks of study t: 'moed'; allowed: .*ctl, .*nt, .*mode"):
        validate(Study(name="t", goal="g", tasks=("moed",), scientific={"d_model": (8,)}))


def test_one_cell_key_for_the_driver_and_the_analysis() -> None:
    """64 and 64.0, 0.3**5 and 0.00243 are one cell's values (what Parquet and JSON give back); 0.0081 and 0.00243 are
    not; the key agrees with same_value."""
    from search_spaces.cells import cell_key, same_value

    assert cell_key({"d_model": 64, "learning_rate": 0.3**5}) == cell_key({"learning_rate": 0.00243, "d_model": 64.0})
    assert cell_key({"learning_rate": 0.0081}) != cell_key({"learning_rate": 0.00243})
    assert cell_key({"architecture": "NAP", "d": None}) == (("architecture", "NAP"), ("d", "None"))
    assert same_value(0.3**5, 0.00243) and same_value(64, 64.0) and not same_value(0.0081, 0.00243)
    assert not same_value(0.00243, 0.00243 * (1 + 1e-5))


def _boundary_values(rng: np.random.Generator) -> list[float]:
    """Numbers on or next to a rounding boundary of a cell key's significant digits: decimals whose next digit is a 5
    (random ones from 1e-12 to 1e6), powers of 0.5 (0.5**10 = 0.0009765625 is one exactly), 0.3**k and 10**k."""
    from search_spaces.cells import KEY_DIGITS

    digits = KEY_DIGITS
    mantissas = rng.integers(10 ** (digits - 1), 10**digits, size=400) + 0.5
    exponents = rng.integers(-12, 7, size=400)
    ties = [float(f"{m:.1f}e{e - digits + 1}") for m, e in zip(mantissas, exponents, strict=True)]
    return ties + [0.5**k for k in range(1, 41)] + [0.3**k for k in range(1, 20)] + [10.0**k for k in range(-9, 7)]


@pytest.mark.slow  # 6-21 s (measured 2026-11-28): in `make test`, out of the 3-minute `make test-fast`
def test_same_value_and_cell_key_are_one_rule_near_rounding_boundaries() -> None:
    """Two values are the same exactly when their cell keys are (a seeded sweep over values near the boundaries of
    the key's rounding, each with neighbours from a few ulps to several tolerances away, positive and negative); the
    key is its own key (a canonical value), and a few ulps never move a value's key, not even on a boundary."""
    from search_spaces.cells import cell_key, key_value, same_value

    rng = np.random.default_rng(20240611)
    steps = [0.0, 1e-15, 1e-12, 1e-9, 1e-7, 4e-7, 5e-7, 6e-7, 1e-6, 2e-6, 5e-6, 1e-5]
    disagreements, moved, pairs = [], [], 0
    for base in _boundary_values(rng):
        for sign in (1.0, -1.0):
            values = [sign * base * (1 + s) for s in steps] + [sign * base * (1 - s) for s in steps[1:]]
            up = down = sign * base
            ulps = [up]
            for _ in range(4):
                up, down = float(np.nextafter(up, np.inf)), float(np.nextafter(down, -np.inf))
                ulps += [up, down]
            for a, b in itertools.combinations(values + ulps, 2):
                pairs += 1
                if same_value(a, b) != (cell_key({"v": a}) == cell_key({"v": b})):
                    disagreements.append((a, b))
            if {key_value(v) for v in ulps} != {key_value(sign * base)}:
                moved.append(sign * base)  # a few ulps moved its key
            assert all(key_value(key_value(v)) == key_value(v) for v in values + ulps)
    assert pairs > 200_000
    assert disagreements == [], f"{len(disagreements)} of {pairs} pairs disagree, e.g. {disagreements[:3]}"
    assert moved == [], f"{len(moved)} values' keys move by a few ulps, e.g. {moved[:3]}"
    assert same_value(64, 64.0) and cell_key({"v": 64}) == cell_key({"v": 64.0})
    assert not same_value(64, "64") and cell_key({"v": 64}) != cell_key({"v": "64"})
    assert not same_value(True, 1) and cell_key({"v": True}) != cell_key({"v": 1})


def test_a_metrics_direction_is_declared_once_and_a_study_cannot_contradict_it() -> None:
    """A loss is minimised, everything else maximised (search_spaces.finding.direction); a study's mode left out is
    its metric's, and one that contradicts it is refused naming the field, the value and what is allowed."""
    from search_spaces.finding import direction

    assert direction("val_loss") == "min" and direction("val_accuracy") == "max"
    assert direction("min(val_argmin_accuracy, val_argmax_accuracy)") == "max"
    base = {"name": "t", "goal": "g", "tasks": ("mode",), "scientific": {"d_model": (8, 16)}}
    assert Study(**base, metric="val_loss").mode == "min" and Study(**base).mode == "max"
    with pytest.raises(StudyError, match=r"mode of study t .*'max'.*allowed: 'min'"):
        Study(**base, metric="val_loss", mode="max")
