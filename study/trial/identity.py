"""Deterministic trial identity and the code version recorded with every row."""

from __future__ import annotations

import functools
import hashlib
import json
import platform
import subprocess
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any


def trial_key(study_name: str, config: dict[str, Any], seeds: tuple[int, ...] | list[int],
              plugins: Sequence[str] = ()) -> str:
    """16 hex characters naming (study, configuration, seeds, and the plugin modules the study names): a re-run
    finds and skips the trial. A study without plugins hashes as before they existed (its keys never change).

    A plugin counts by what it is, not by how this process reached it: its names are taken once each, in sorted
    order, and a study file's module by its file's name (:func:`plugin_identity`); no path, working directory or
    hash enters the key."""
    content: dict[str, Any] = {"study": study_name, "config": config, "seeds": list(seeds)}
    if plugins:
        content["plugins"] = sorted({plugin_identity(p) for p in plugins})
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()[:16]


def plugin_identity(module: str) -> str:
    """The name a plugin module has in a trial key: its import name; a study file run as
    ``_study_file_<stem>`` (trainables.plugins) is the module ``<stem>`` that its folder's other files import."""
    from trainables.plugins import STUDY_FILE_PREFIX

    return module.removeprefix(STUDY_FILE_PREFIX)


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


@functools.cache
def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux; the platform's word elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def machine() -> dict[str, str]:
    """What decides a trial's numbers besides its configuration: the CPU and the SIMD level torch takes on it
    (``ATEN_CPU_CAPABILITY`` can lower it), torch's and numpy's versions and torch's thread count now.

    Two runs with equal machines and equal code give bit-identical rows; docs/reproducibility.md says what
    holds across machines.
    """
    import numpy
    import torch

    return {"cpu": cpu_model(), "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "torch": torch.__version__, "numpy": numpy.__version__, "threads": str(torch.get_num_threads())}


def machine_text(spec: dict[str, str] | None = None) -> str:
    """One line for the ``machine`` column of every row: ``AMD EPYC | AVX512 | torch 2.13.0+cpu | numpy 2.4.6 |
    1 thread`` (a column of few distinct values: Parquet stores it once per file). A ``spec`` without threads
    (a driver's) leaves them out."""
    m = spec or machine()
    text = f"{m['cpu']} | {m['cpu_capability']} | torch {m['torch']} | numpy {m['numpy']}"
    if "threads" in m:
        text += f" | {m['threads']} thread" + ("" if m["threads"] == "1" else "s")
    return text
