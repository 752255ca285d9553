"""The `study` command as a user runs it: a subprocess of this Python, with the checkout importable.

`study run` joins this test process's own Ray head (:func:`shared_head`, started at the first run, stopped when the
process exits) through ``--address``, as a user joins a running cluster: a `study run` that starts its own local Ray
spends some 15 s of a 2-core machine on the head's processes, one that joins a running head about 2 s (measured
2026-11-28: ~17-21 s against ~2.5 s from `ray.init` to a first task's result, on a loaded machine). A run that sets
its own environment (its trial workers must see it: a head's workers see the head's), runs from another directory,
names an address, or asks ``ray="local"`` (a test of the embedded Ray itself) starts a fresh local Ray
(RAY_ADDRESS=local: never a stale `ray start` cluster recorded in /tmp/ray, which ray.init() would try to join and
hang on if it died)."""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Literal

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
STUDY = [sys.executable, "-m", "study.cli"]
RAY = str(Path(sys.executable).with_name("ray"))
#: What `ray start` clusters require since Ray 2.60: token authentication. The tests' clusters and drivers share one
#: token of this test process, put in its environment so that every subprocess inherits it (Ray reads RAY_AUTH_TOKEN
#: before ~/.ray/auth_token): a fresh machine has no ~/.ray/auth_token until some local ray.init writes one (a `ray
#: start` never does), and the tests must neither depend on one nor write one.
os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))
TOKEN_AUTH = {"RAY_AUTH_MODE": "token"}


def run_cli(*args: str, timeout: float = 240, cwd: Path | None = None, env: dict[str, str] | None = None,
            ray: Literal["shared", "local"] = "shared") -> subprocess.CompletedProcess:
    """``study ARGS...``; output captured as text (``env``: extra environment variables). A `study run` joins
    :func:`shared_head` unless it sets ``env``, runs elsewhere than the checkout, names ``--address`` or asks
    ``ray="local"``."""
    shared = (ray == "shared" and args[:1] == ("run",) and "--address" not in args and env is None
              and cwd in (None, ROOT))
    extra = {**TOKEN_AUTH, "RAY_ADDRESS": "local"} if shared else {"RAY_ADDRESS": "local", **(env or {})}
    command = [*STUDY, *args, *(("--address", shared_head()) if shared else ())]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **extra})


def free_port() -> int:
    """A TCP port nothing on this machine listens on now (for a Ray head or node the test starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_head: subprocess.Popen | None = None
_head_address = ""
_head_directory: Path | None = None


def shared_head(start_timeout: float = 120.0) -> str:
    """The address of this test process's Ray head (one per pytest-xdist worker: at most two at once under `make
    test`), started on first use with the CPUs a local Ray would have, no GPU, and stopped when the process exits."""
    global _head, _head_address, _head_directory
    if _head is not None and _head.poll() is None:
        return _head_address
    port = free_port()
    _head_directory = Path(tempfile.mkdtemp(prefix="rh-", dir="/tmp"))  # short: Unix socket paths < 108 bytes
    log_path = _head_directory / "head.log"
    env = {**os.environ, **TOKEN_AUTH, "PYTHONPATH": str(ROOT), "RAY_prestart_worker_first_driver": "0"}
    env.pop("RAY_ADDRESS", None)
    with open(log_path, "w") as log:
        _head = subprocess.Popen(
            [RAY, "start", "--head", "--block", f"--port={port}", "--node-ip-address=127.0.0.1",
             f"--num-cpus={os.cpu_count()}", "--num-gpus=0", "--include-dashboard=false", "--disable-usage-stats",
             "--include-log-monitor=false",  # no driver reads trial output (log_to_driver=False): its polling is waste
             f"--temp-dir={_head_directory}"],
            stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=env, start_new_session=True)
    deadline = time.time() + start_timeout
    while "Ray runtime started" not in log_path.read_text():
        if _head.poll() is not None or time.time() > deadline:
            text = log_path.read_text()
            stop_shared_head()
            raise RuntimeError(f"the tests' Ray head did not start:\n{text}")
        time.sleep(0.2)
    _head_address = f"127.0.0.1:{port}"
    return _head_address


def stop_shared_head() -> None:
    """Stop the head's whole process group (its GCS, raylet and workers), SIGTERM then SIGKILL; remove its files."""
    global _head
    if _head is None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(_head.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        _head.wait(timeout=5)
    with contextlib.suppress(ProcessLookupError):  # whatever of the group outlived the head's own shutdown
        os.killpg(_head.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        _head.wait(timeout=5)
    _head = None
    if _head_directory is not None:
        shutil.rmtree(_head_directory, ignore_errors=True)


atexit.register(stop_shared_head)  # a no-op in a process that never started one


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
