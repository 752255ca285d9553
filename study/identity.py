"""Deterministic trial identity and the code version recorded with every row."""

from __future__ import annotations

import functools
import hashlib
import json
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any


def trial_key(study_name: str, config: dict[str, Any], seeds: tuple[int, ...] | list[int]) -> str:
    """16 hex characters naming (study, configuration, seeds): a re-run finds and skips the trial."""
    payload = json.dumps({"study": study_name, "config": config, "seeds": list(seeds)},
                         sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


@functools.cache
def code_version() -> str:
    """The package version, plus the git commit of the source tree when it is a checkout."""
    try:
        version = metadata.version("attention-studies")
    except metadata.PackageNotFoundError:
        version = "unknown"
    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, timeout=5, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return version
    return f"{version}+{commit}" if commit else version


def software_versions() -> dict[str, str]:
    """Versions of the packages that shape results, for study.json."""
    versions = {"attention_studies": code_version()}
    for package in ("torch", "ray", "optuna", "polars", "pyarrow", "numpy"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "absent"
    return versions
