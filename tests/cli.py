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
    """Every stored trial row of a study directory."""
    return pl.read_parquet(study_dir / "trials" / "*.parquet")
