"""Model families: a trial's task picks its config type and training function; artifacts round-trip."""

from __future__ import annotations

import pyarrow as pa
import pytest

from analysis.dataset import scan_artifacts
from study.storage import StudyStorage
from trainables.config import TrainConfig
from trainables.families import all_tasks, family_for_task


def test_richter_tasks_belong_to_the_richter_family() -> None:
    for task in ("cases", "cases_first_token", "mode"):
        family = family_for_task(task)
        assert family.name == "richter2020"
        assert family.config is TrainConfig
    assert {"cases", "cases_first_token", "mode"} <= set(all_tasks())


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
