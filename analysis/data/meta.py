"""A study's record (``study.json``, see ``docs/results.md``) read from its directory, local or remote.

The type is the one the driver writes (:class:`search_spaces.record.StudyRecord`: the Study that ran, the
software versions and the latest run); this module only finds the file and parses it. Everything the report, the
CLI (``status``, ``compare``, ``importance``, ``findings``, ``verify``) and the notebooks need from it is a field of
that record; nothing indexes the raw dict. An unknown key or a bad value is an error naming the file, the key and
what is allowed (a typo such as ``"findngs"`` would otherwise silently drop every check).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from analysis.data.location import Location
from search_spaces.record import RunRecord, StudyRecord
from search_spaces.schema import StudyError


class MetaError(StudyError):
    """A study.json that cannot be read; the message names the file, the field, the value and what is allowed."""

    exit_code = 1  # the results' record, not the command's input (docs/cli.md)


def parse_meta(data: Mapping[str, Any] | StudyRecord, source: str = "study.json") -> StudyRecord:
    """The :class:`StudyRecord` of a study.json mapping (a record is returned unchanged).

    Raises:
        MetaError: naming ``source``, the key and what is allowed, for an unknown key or a bad value.
    """
    if isinstance(data, StudyRecord):
        return data
    try:
        return StudyRecord.from_json(data, source)
    except StudyError as error:
        raise MetaError(str(error)) from None


def read_study_meta(study_dir: str | Path | Location) -> StudyRecord:
    """The parsed ``<study_dir>/study.json`` (a local directory or a URI, read in place).

    Raises:
        FileNotFoundError: when the study has no ``study.json``.
        MetaError: when it is not valid JSON or has an unknown key or a bad value (naming the file).
    """
    location = Location.of(study_dir)
    path = location.join("study.json")
    text = location.read_bytes("study.json")
    if text is None:
        raise FileNotFoundError(f"no study definition {path}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise MetaError(f"{path}: not valid JSON ({err})") from None
    return parse_meta(data, str(path))


def recorded_run(study_dir: str | Path | Location) -> RunRecord | None:
    """study.json's ``run`` (the latest run's driver and settings); None when the study has no study.json yet.

    Raises:
        MetaError: when study.json exists but is not a valid study record.
    """
    try:
        return read_study_meta(study_dir).run
    except FileNotFoundError:
        return None
