"""study.json parsed once into StudyRecord: every registered study round-trips, unknown keys are named errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.data.meta import MetaError, parse_meta, read_study_meta
from analysis.data.synthetic import synthetic_record
from search_spaces import SCALES, all_studies
from search_spaces.record import StudyRecord


@pytest.mark.parametrize("name", sorted(all_studies()))
def test_every_registered_study_parses_at_every_scale(name: str) -> None:
    for scale in SCALES:
        study = all_studies()[name].at_scale(scale)
        data = json.loads(json.dumps({**study.to_json(), "versions": {"x": "1"}}, default=str))
        meta = parse_meta(data)
        assert (meta.name, meta.scale, meta.metric, meta.trial_count()) == (study.name, scale, study.metric,
                                                                       study.trial_count())
        assert [f.description for f in meta.findings] == [f.description for f in study.findings]
        assert [f.scales for f in meta.findings] == [tuple(f.scales) for f in study.findings]
        assert meta.plot.x == study.plot.x and meta.table_by == study.table_by


def test_fig16_declares_the_shape_of_table5() -> None:
    meta = parse_meta(all_studies()["richter2020.table5"].to_json())
    assert meta.table_by == ("vocab_size",) and meta.metric == "train_accuracy"


def test_every_registered_study_round_trips_through_its_record() -> None:
    """study.json is the Study written out: read back, it is the same study (and writes the same JSON)."""
    for name, study in sorted(all_studies().items()):
        for scale in SCALES:
            scaled = study.at_scale(scale)
            written = StudyRecord.of(scaled, versions={"torch": "2"}).to_json()
            again = parse_meta(json.loads(json.dumps(written)))
            assert again.to_json() == written, name
            assert again.replace(versions={}, source="") == StudyRecord.of(scaled).replace(source=""), name


OLD = json.loads((Path(__file__).parent / "golden" / "records_3fcc522.json").read_text())


@pytest.mark.parametrize("name", sorted(OLD))
def test_a_record_written_by_the_previous_version_reads(name: str) -> None:
    """Records the previous version wrote (commit 3fcc522): a Linked axis as a JSON object (its labels strings)."""
    study, scale = name.split("@")
    record = parse_meta(OLD[name])
    current = all_studies()[study].at_scale(scale)
    assert (record.name, record.scale, record.fixed) == (current.name, scale, current.fixed)
    # its findings read as written then (the studies' findings have changed since: issue 44)
    written = OLD[name].get("findings", [])
    assert [(f.description, f.metric) for f in record.findings] == [(f["description"], f.get("metric"))
                                                                      for f in written]
    assert record.run is not None and record.run.machine_text.startswith("AMD EPYC")
    for axis in current.axes:  # a Linked axis's labels come back as strings
        values = current.axis_values(axis)
        assert record.axis_values(axis) in (values, None if values is None else [str(v) for v in values]), axis


def test_unknown_keys_name_the_file_the_key_and_the_allowed_keys(tmp_path: Path) -> None:
    record = synthetic_record()
    (tmp_path / "study.json").write_text(json.dumps({**record, "findngs": []}))
    with pytest.raises(MetaError, match=r"study.json: unknown key 'findngs' in study synthetic.study; allowed: name, "):
        read_study_meta(tmp_path)
    with pytest.raises(MetaError, match=r"unknown key 'belw' in finding d; allowed: description, metric"):
        parse_meta({**record, "findings": [{"description": "d", "belw": {"max": 0.2}}]})
    with pytest.raises(MetaError, match=r"unknown key 'z' in plot; allowed: panel, x, y"):
        parse_meta({**record, "plot": {"z": "d_model"}})
    with pytest.raises(MetaError, match=r"invalid mode of study synthetic.study 'maximum'; allowed: max, min"):
        parse_meta({**record, "mode": "maximum"})
    with pytest.raises(MetaError, match=r"invalid goal of study synthetic.study .*; allowed: Field required"):
        parse_meta({k: v for k, v in record.items() if k != "goal"})
    (tmp_path / "study.json").write_text("{not json")
    with pytest.raises(MetaError, match="not valid JSON"):
        read_study_meta(tmp_path)


def test_axis_values_of_lists_linked_axes_and_distributions() -> None:
    meta = parse_meta(synthetic_record(scientific={"d_model": [8, 16], "vocab_size": {"2": {"n_steps": 800}}},
                                       plot={"panel": None, "x": None, "y": None}, sampler="random", n_trials=4,
                                       nuisance={"learning_rate": {"distribution": "LogUniform", "low": 1e-4,
                                                                   "high": 0.1}}))
    assert meta.axis_values("d_model") == [8, 16]
    assert meta.axis_values("vocab_size") == ["2"]
    assert meta.axis_values("learning_rate") is None and meta.axis_values("absent") is None


def test_a_file_written_before_the_measurement_became_a_family_still_reads() -> None:
    """Older study.json files carry ``kind``; it is accepted and means nothing now (the rows say what to draw)."""
    old = {**synthetic_record("richter2020.fig1"), "task": "none", "kind": "measurement", "metric": "output_std"}
    del old["tasks"]
    meta = parse_meta(old)
    assert (meta.name, meta.tasks, meta.metric) == ("richter2020.fig1", ("none",), "output_std")
    assert not hasattr(meta, "kind") and not hasattr(meta, "task")
    assert "kind" not in all_studies()["richter2020.fig1"].to_json()


def test_a_file_written_before_tasks_reads_its_tasks_from_the_task_axis() -> None:
    """Before ``tasks``, ``task`` held one task or a word beside a task axis ("every task", "cases+mode")."""
    def old(word: str, **axes: object) -> dict:
        record = {**synthetic_record("x", {"architecture": ("BERT",), **axes}), "task": word}
        del record["tasks"]
        return record

    assert parse_meta(old("cases+mode", task=["cases", "mode"])).tasks == ("cases", "mode")
    assert parse_meta(old("every task", task={"cases": {}, "nt": {"basis": 16}})).tasks == ("cases", "nt")
    assert parse_meta(old("mode")).tasks == ("mode",)
    now = all_studies()["yun2020.hybrid"].to_json()
    assert now["tasks"] == ["cases", "mode"] and "task" not in now and parse_meta(now).tasks == ("cases", "mode")
