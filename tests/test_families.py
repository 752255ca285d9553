"""Model families: a trial's task picks its config type and training function; artifacts round-trip."""

from __future__ import annotations

import pyarrow as pa
import pytest

from analysis.data.rows import scan_artifacts
from study.results.storage import StudyStorage
from trainables.catalog import all_tasks, families, family_for_task
from trainables.richter2020.config import TrainConfig


def test_richter_tasks_belong_to_the_richter_family() -> None:
    for task in ("cases", "cases_first_token", "mode"):
        family = family_for_task(task)
        assert family.name == "richter2020"
        assert family.config is TrainConfig
    assert {"cases", "cases_first_token", "mode"} <= set(all_tasks())


def test_one_name_one_meaning_across_families() -> None:
    """A hyperparameter name shared by two families has one type (up to None = a default still to resolve):
    ``grad_clip`` was a switch in one family and a norm in another; the norm is ``grad_clip_norm`` now."""
    import dataclasses

    types: dict[str, dict[str, str]] = {}
    for name in families():
        family = families().get(name)
        for f in dataclasses.fields(family.config):
            types.setdefault(f.name, {})[family.name] = str(f.type).replace(" | None", "")
    clashes = {k: v for k, v in types.items() if len(set(v.values())) > 1}
    assert clashes == {}
    assert {"grad_clip", "grad_clip_norm"} <= set(types)
    assert len(types["learning_rate"]) == 3 and len(types["mixer"]) == 3


def test_unknown_task_names_the_field_and_the_allowed_values() -> None:
    with pytest.raises(ValueError, match=r"invalid task='nope'; allowed: .*cases.*mode"):
        family_for_task("nope")


def test_artifacts_are_written_and_scanned_back(tmp_path) -> None:
    storage = StudyStorage(str(tmp_path), "s")
    for key, value in (("a" * 16, 1.0), ("b" * 16, 2.0)):
        storage.write_artifact("probe", key, pa.Table.from_pylist([{"trial_key": key, "x": value}]))
    frame = scan_artifacts(tmp_path / "s", "probe").collect().sort("trial_key")
    assert frame["x"].to_list() == [1.0, 2.0]
    assert scan_artifacts(tmp_path / "s", "missing") is None


def test_trials_with_other_columns_and_all_null_columns_scan_together(tmp_path) -> None:
    from analysis.data.rows import scan_study

    storage = StudyStorage(str(tmp_path), "s")
    # A mode trial first (its case accuracy is an all-null column), then a trial of another family with a
    # metric of its own: one scan must keep both the typed values and the extra column.
    storage.write_trial("a" * 16, pa.Table.from_pylist([{"seed": 0, "case_acc": None, "val_accuracy": 0.5}]))
    storage.write_trial("b" * 16, pa.Table.from_pylist([{"seed": 0, "case_acc": 0.75, "val_accuracy": 0.25,
                                                         "depth_val_accuracy": 0.125}]))
    frame = scan_study(tmp_path / "s").collect().sort("val_accuracy")
    assert frame["case_acc"].to_list() == [0.75, None]
    assert frame["depth_val_accuracy"].to_list() == [0.125, None]


def test_a_column_two_families_type_differently_is_relaxed_to_a_supertype(tmp_path) -> None:
    from analysis.data.rows import scan_study

    storage = StudyStorage(str(tmp_path), "s")
    # A column typed differently by two files (e.g. results written by an older version of a family).
    storage.write_trial("a" * 16, pa.Table.from_pylist([{"seed": 0, "grad_clip": True, "val_accuracy": 0.5}]))
    storage.write_trial("b" * 16, pa.Table.from_pylist([{"seed": 0, "grad_clip": 5.0, "val_accuracy": 0.25}]))
    frame = scan_study(tmp_path / "s").collect().sort("val_accuracy")
    assert frame["grad_clip"].to_list() == [5.0, 1.0]


def test_packing_is_one_request_decided_in_one_place_and_said_when_it_cannot_be_honoured() -> None:
    """Issue 42: the request is ``packing`` (auto, on, off; the old None/True/False still read); what a family can
    do is ``packs_when``; ``packs`` decides, and warns where it cannot do what was asked."""
    from trainables.families import PackingWarning, packing_request, packs

    ctl, gros, richter, measure = (family_for_task(t) for t in ("ctl", "nt", "mode", "pooling_scale"))
    assert [f.packs_when for f in (ctl, gros, richter, measure)] == ["gpu", "always", "gpu", "never"]
    assert [packing_request(v) for v in (None, True, False, "auto", "on", "off")] == ["auto", "on", "off"] * 2
    with pytest.raises(ValueError, match="invalid packing='yes'; allowed: auto, on, off"):
        packing_request("yes")
    assert packs(richter, "auto", "cuda") and not packs(richter, "auto", "cpu") and packs(richter, "on", "cpu")
    assert packs(gros, "auto", "cpu") and not packs(gros, "off", "cpu")
    assert packs(ctl, "auto", "cuda") and not packs(ctl, "auto", "cpu") and packs(ctl, "on", "cpu")
    with pytest.warns(PackingWarning, match="--packing on cannot be honoured for model family 'pooling_scale': its "
                                            "seeds never train as one stacked model"):
        assert not packs(measure, "on", "cuda")
    with pytest.warns(PackingWarning, match="--packing off cannot be honoured for 3 packed learning rates"):
        assert packs(richter, "off", "cpu", n_configs=3)


def test_a_family_written_before_the_rename_still_registers(recwarn: pytest.WarningsRecorder) -> None:
    """Yesterday's ``Family(..., packing="always")`` keeps working (a DeprecationWarning says the new name); a value
    that is none of packs_when's is refused naming the field."""
    from trainables.families import Family

    old = Family(name="yesterday", tasks=("t",), config=TrainConfig, train=print, tiny=print, packing="always")
    assert old.packs_when == "always"
    assert any("Family(packs_when='always')" in str(w.message) for w in recwarn.list)
    with pytest.raises(ValueError, match="invalid packs_when='sometimes' of model family 'x'; allowed: always, gpu"):
        Family(name="x", tasks=("t",), config=TrainConfig, train=print, tiny=print, packs_when="sometimes")
