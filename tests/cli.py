"""The `study` command as a user runs it: a subprocess of this Python, with the checkout importable and a
fresh local Ray (RAY_ADDRESS=local: never a stale `ray start` cluster recorded in /tmp/ray, which
ray.init() would try to join and hang on if it died)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
STUDY = [sys.executable, "-m", "study.cli"]


def run_cli(*args: str, timeout: float = 240, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``study ARGS...``; output captured as text (``env``: extra environment variables)."""
    return subprocess.run([*STUDY, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "RAY_ADDRESS": "local", **(env or {})})


def rows(study_dir: Path) -> pl.DataFrame:
    """Every stored trial row of a study directory: its table and the trial files not folded into it yet."""
    from analysis.data.rows import scan_study

    return scan_study(study_dir).collect()


def finished_trials(study_dir: Path) -> int:
    """Trials with rows in a study directory (table or pending files); 0 before the first one."""
    try:
        return rows(study_dir)["trial_key"].n_unique()
    except FileNotFoundError:
        return 0
