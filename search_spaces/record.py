"""The study's record (``study.json``): the :class:`~search_spaces.study.Study` that ran, and what its latest run
was. One type is written by the driver and read by every reader (the report, the CLI, notebooks): a field the
record lacks, a misspelt key or a bad value is refused in one line naming the file.

Records written by earlier versions are read: their retired keys (``kind``; ``task``, now ``tasks``), a Linked
axis written as a JSON object (labels then became strings), a finding's ``scales`` of null (every scale) and a
record without a ``plot`` (the report chooses the layout) are understood; anything else unknown is an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field, ValidationError

from search_spaces.schema import SCALES, Schema, StudyError, validation_line
from search_spaces.study import Study

#: Keys older records carry that no longer mean anything: accepted, ignored (``kind``: a task's family now says
#: how its trials run; ``directory``: derived from the name and scale), or read into their successor (``task``).
RETIRED_KEYS = ("kind", "task", "directory")


class RunRecord(Schema):
    """The latest run: the driver's machine and the settings that decide the numbers (every row also records the
    machine that trained it)."""

    label: ClassVar[str] = "run record"

    machine: dict[str, Any] = {}
    machine_text: str = ""
    threads_per_trial: int = 1
    precision: str = "fp32"
    gpus_per_trial: float = 0.0
    packing: str = "auto"
    #: The plugins of yours the run loaded: module, origin, path, version, sha256, what each registered.
    plugins: tuple[dict[str, Any], ...] = ()


class SeedRequest(Schema):
    """One more seed for one cell (its configuration: axis -> value), and the findings (indices) that asked."""

    label: ClassVar[str] = "seed request"

    cell: dict[str, Any]
    seed: int
    findings: tuple[int, ...]


class BudgetLook(Schema):
    """One look of an adaptive budget: every finding's status then, and the seeds it asked for (decided before they
    train: a resumed study replays them instead of deciding again)."""

    label: ClassVar[str] = "budget look"

    look: int
    statuses: tuple[str, ...]
    models: int  # the models the budget had given when it looked
    requests: tuple[SeedRequest, ...] = ()


class StudyRecord(Study):
    """``study.json``: the study at the scale it ran, the software versions, the latest run and, for an adaptive
    budget, its looks."""

    versions: dict[str, str] = {}
    run: RunRecord | None = None
    looks_taken: tuple[BudgetLook, ...] = ()
    #: Where this record was read from (named in error messages); not written.
    source: str = Field("study.json", exclude=True)

    @staticmethod
    def _upgrade(data: Mapping[str, Any]) -> dict[str, Any]:
        """A record of an earlier version, in today's shape (module docstring)."""
        data = dict(data)
        task = data.pop("task", None)
        for key in RETIRED_KEYS:
            data.pop(key, None)
        if not data.get("tasks") and task and not _has_task_axis(data):
            data["tasks"] = (str(task),)
        data.setdefault("plot", {"panel": None, "x": None, "y": None})
        data["findings"] = [_upgrade_finding(f) if isinstance(f, Mapping) else f for f in data.get("findings") or ()]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str = "study.json") -> StudyRecord:
        """The record of a ``study.json`` mapping; StudyError naming ``source`` for anything it cannot read."""
        if not isinstance(data, Mapping):
            raise StudyError(f"{source}: expected a JSON object, got {type(data).__name__}")
        try:
            return cls.model_validate({**cls._upgrade(data), "source": source})
        except ValidationError as error:
            raise StudyError(f"{source}: {validation_line(error, 'study.json', cls)}") from None
        except StudyError as error:
            raise StudyError(f"{source}: {error}") from None

    @classmethod
    def of(cls, study: Study, *, versions: Mapping[str, str] | None = None, run: RunRecord | None = None,
           source: str = "") -> StudyRecord:
        """The record of ``study`` (at its scale), as the driver writes it."""
        fields = {name: getattr(study, name) for name in type(study).model_fields} | {"scales": {}}  # one scale
        return cls(**fields, versions=dict(versions or {}), run=run, source=source or f"study {study.name}")


def _upgrade_finding(finding: Mapping[str, Any]) -> dict[str, Any]:
    """A finding of an earlier record: its scales, and an equivalence (``level_with``, ``not_ahead``) written before
    findings stated a margin reads with margin 0: it can still be refuted, never shown (what "no difference" without
    a size can honestly mean)."""
    upgraded = {**finding, "scales": finding.get("scales") or SCALES}
    if (finding.get("level_with") or finding.get("not_ahead")) and "equivalence_margin" not in finding:
        upgraded["equivalence_margin"] = 0.0
    return upgraded


def _has_task_axis(data: Mapping[str, Any]) -> bool:
    return "task" in {**(data.get("scientific") or {}), **(data.get("nuisance") or {})}
