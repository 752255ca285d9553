"""study.json parsed once into StudyMeta: every registered study round-trips, unknown keys are named errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.data.meta import MetaError, StudyMeta, parse_meta, read_study_meta
from search_spaces import SCALES, all_studies


@pytest.mark.parametrize("name", sorted(all_studies()))
def test_every_registered_study_parses_at_every_scale(name: str) -> None:
    for scale in SCALES:
        study = all_studies()[name].at_scale(scale)
        data = json.loads(json.dumps({**study.to_json(), "versions": {"x": "1"}}, default=str))
        meta = parse_meta(data)
        assert (meta.name, meta.scale, meta.metric, meta.n_trials) == (study.name, scale, study.metric,
                                                                       study.trial_count())
        assert [f.description for f in meta.findings] == [f.description for f in study.findings]
        assert [f.scales for f in meta.findings] == [tuple(f.scales) for f in study.findings]
        assert meta.plot.x == study.plot.x and meta.table_by == study.table_by


def test_fig16_declares_the_shape_of_table5() -> None:
    meta = parse_meta(all_studies()["richter2020.table5"].to_json())
    assert meta.table_by == ("vocab_size",) and meta.metric == "train_accuracy"


def test_unknown_keys_name_the_file_the_key_and_the_allowed_keys(tmp_path: Path) -> None:
    (tmp_path / "study.json").write_text(json.dumps({"name": "x", "findngs": []}))
    with pytest.raises(MetaError, match=r"study.json: unknown key 'findngs' in study.json; allowed: name, "):
        read_study_meta(tmp_path)
    with pytest.raises(MetaError, match=r"unknown key 'belw' in findings\[0\]; allowed: description, metric"):
        parse_meta({"findings": [{"description": "d", "belw": {"max": 0.2}}]})
    with pytest.raises(MetaError, match=r"unknown key 'z' in plot; allowed: panel, x, y"):
        parse_meta({"plot": {"z": "d_model"}})
    with pytest.raises(MetaError, match=r"invalid mode 'maximum'; allowed: max, min"):
        parse_meta({"mode": "maximum"})
    (tmp_path / "study.json").write_text("{not json")
    with pytest.raises(MetaError, match="not valid JSON"):
        read_study_meta(tmp_path)


def test_axis_values_of_lists_linked_axes_and_distributions() -> None:
    meta = StudyMeta(scientific={"d_model": [8, 16], "vocab_size": {"2": {"n_steps": 800}}},
                     nuisance={"learning_rate": {"distribution": "LogUniform", "low": 1e-4, "high": 0.1}})
    assert meta.axis_values("d_model") == [8, 16]
    assert meta.axis_values("vocab_size") == ["2"]
    assert meta.axis_values("learning_rate") is None and meta.axis_values("absent") is None


def test_a_file_written_before_the_measurement_became_a_family_still_reads() -> None:
    """Older study.json files carry ``kind``; it is accepted and means nothing now (the rows say what to draw)."""
    meta = parse_meta({"name": "richter2020.fig1", "task": "none", "kind": "measurement", "metric": "output_std"})
    assert (meta.name, meta.tasks, meta.metric) == ("richter2020.fig1", ("none",), "output_std")
    assert not hasattr(meta, "kind") and not hasattr(meta, "task")
    assert "kind" not in all_studies()["richter2020.fig1"].to_json()


def test_a_file_written_before_tasks_reads_its_tasks_from_the_task_axis() -> None:
    """Before ``tasks``, ``task`` held one task or a word beside a task axis ("every task", "cases+mode")."""
    old = {"name": "yun2020.hybrid", "task": "cases+mode", "scientific": {"task": ["cases", "mode"]}}
    assert parse_meta(old).tasks == ("cases", "mode")
    linked = {"name": "atlas", "task": "every task", "scientific": {"task": {"cases": {}, "nt": {"basis": 16}}}}
    assert parse_meta(linked).tasks == ("cases", "nt")
    assert parse_meta({"name": "x", "task": "mode"}).tasks == ("mode",)
    now = all_studies()["yun2020.hybrid"].to_json()
    assert now["tasks"] == ["cases", "mode"] and "task" not in now and parse_meta(now).tasks == ("cases", "mode")
