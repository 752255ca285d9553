"""The `study` command as a user runs it: a process of its own, with the checkout importable.

A command is a fork of this test process's fork server (tests/forkserver.py: torch, Ray Tune, SciPy... imported once,
not by each of the suite's ~150 commands) unless its environment sets what a preloaded library read at import
otherwise (then a plain subprocess: tests/forkserver.py can_fork). `study run`
joins this test process's own Ray head (:func:`shared_head`, started at the first run, stopped when the process
exits) through ``--address``, as a user joins a running cluster: a `study run` that starts its own local Ray spends
some 9 CPU s of a 2-core machine on the head's processes, one that joins a running head about 2 s. The head offers one
CPU: a run's trials take turns on one Ray worker, whose start (it imports torch and Ray Tune) a second concurrent
trial would pay again (~6.5 CPU s a run; bench/README.md 19). A run that sets its own environment (its trial workers
must see it: a head's workers see the head's), names an address, or asks ``ray="local"`` (a test of the embedded Ray
itself) starts a fresh local Ray of one CPU (:data:`LOCAL_RAY`)."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import secrets
import select
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

from tests.forkserver import can_fork

ROOT = Path(__file__).resolve().parent.parent
STUDY = [sys.executable, "-m", "study.cli"]
RAY = str(Path(sys.executable).with_name("ray"))
#: What `ray start` clusters require since Ray 2.60: token authentication. The tests' clusters and drivers share one
#: token of this test process, put in its environment so that every subprocess inherits it (Ray reads RAY_AUTH_TOKEN
#: before ~/.ray/auth_token): a fresh machine has no ~/.ray/auth_token until some local ray.init writes one (a `ray
#: start` never does), and the tests must neither depend on one nor write one.
os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))
TOKEN_AUTH = {"RAY_AUTH_MODE": "token"}
#: What a run that starts a local Ray of its own runs with: a fresh one (never a stale `ray start` cluster recorded in
#: /tmp/ray, which ray.init() would try to join and hang on if it died) offering one CPU, as the shared head does
#: (RAY_OVERRIDE_RESOURCES, read where Ray sizes a node it starts): the trials take turns on one Ray worker, whose
#: start (it imports torch and Ray Tune) a second concurrent trial pays again (a smoke `study run demo` that starts
#: its own: 26.9 CPU s fresh with two CPUs, 15.6 forked with one; bench/README.md 20). A command that joins a
#: cluster or starts no Ray ignores it.
LOCAL_RAY = {"RAY_ADDRESS": "local", "RAY_OVERRIDE_RESOURCES": '{"CPU": 1}'}


def command_env() -> dict[str, str]:
    """What run_cli gives a command (and ``env`` on top): the fork server's environment too, and the one to give a
    test's own `study` process that joins :func:`shared_head`. Token authentication for every command: the suite's
    clusters require it, and a local Ray that a run starts takes the suite's token (RAY_AUTH_TOKEN) as well; Ray's
    default mode is what the killed-driver tests' own `study run` processes run in."""
    return {**os.environ, "PYTHONPATH": str(ROOT), **TOKEN_AUTH, **LOCAL_RAY}


def run_cli(*args: str, timeout: float = 240, cwd: Path | None = None, env: dict[str, str] | None = None,
            ray: Literal["shared", "local"] = "shared") -> subprocess.CompletedProcess:
    """``study ARGS...``; output captured as text (``env``: extra environment variables). A `study run` joins
    :func:`shared_head` unless it sets ``env``, names ``--address`` or asks ``ray="local"``; its study's code
    reaches the head's workers as a user's reaches a cluster's (trainables.plugins.runtime_env), from any working
    directory. A fork of the fork server unless ``env`` sets what a preloaded library read at import
    (tests/forkserver.py can_fork)."""
    shared = ray == "shared" and args[:1] == ("run",) and "--address" not in args and env is None
    command = [*STUDY, *args, *(("--address", shared_head()) if shared else ())]
    server_env = command_env()
    full_env = {**server_env, **(env or {})}
    if can_fork(full_env, server_env):
        return _forked(command, cwd or Path.cwd(), full_env, timeout)
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=full_env)


def fresh_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``study ARGS...`` as a fresh interpreter in the fork server's environment: what :func:`run_cli` forks, run the
    way every command ran before the fork server (a `study run` joins :func:`shared_head`)."""
    head = ("--address", shared_head()) if args[:1] == ("run",) else ()
    return subprocess.run([*STUDY, *args, *head], capture_output=True, text=True, timeout=600, cwd=cwd,
                          env=command_env())


_server: subprocess.Popen | None = None
_replies = b""


def _reply(deadline: float | None) -> dict[str, int] | None:
    """The server's next reply line; None when ``deadline`` (time.time()) passes first."""
    global _replies
    assert _server is not None and _server.stdout is not None
    while b"\n" not in _replies:
        wait = None if deadline is None else max(0.0, deadline - time.time())
        if not select.select([_server.stdout], [], [], wait)[0]:
            return None
        chunk = os.read(_server.stdout.fileno(), 4096)
        if not chunk:
            raise RuntimeError(f"the tests' fork server (tests/forkserver.py) ended with status {_server.wait()}")
        _replies += chunk
    line, _, _replies = _replies.partition(b"\n")
    return json.loads(line)


def _forked(command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    """``command`` (``python -m study.cli ARGS``) run as a fork of this test process's fork server
    (tests/forkserver.py: the heavy libraries imported once); the same output, exit status and timeout as
    subprocess.run gives."""
    global _server
    if _server is None or _server.poll() is not None:
        _server = subprocess.Popen([sys.executable, "-m", "tests.forkserver"], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, cwd=ROOT, env=command_env())
        assert "ready" in (_reply(time.time() + 120) or {}), "the tests' fork server did not start within 120 s"
    assert _server.stdin is not None
    with tempfile.TemporaryDirectory(prefix="fork-") as folder:
        out, err = Path(folder) / "out", Path(folder) / "err"
        out.touch()
        err.touch()
        request = {"args": command[len(STUDY):], "cwd": str(Path(cwd).resolve()), "env": env, "out": str(out),
                   "err": str(err)}
        _server.stdin.write((json.dumps(request) + "\n").encode())
        _server.stdin.flush()
        pid = (_reply(None) or {})["pid"]
        done = _reply(time.time() + timeout)
        if done is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            _reply(None)
            raise subprocess.TimeoutExpired(command, timeout, output=out.read_text(), stderr=err.read_text())
        return subprocess.CompletedProcess(command, done["code"], out.read_text(), err.read_text())


def _stop_server() -> None:
    if _server is not None and _server.poll() is None:
        assert _server.stdin is not None
        _server.stdin.close()  # its request loop ends
        try:
            _server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            _server.kill()


atexit.register(_stop_server)


def free_port() -> int:
    """A TCP port nothing on this machine listens on now (for a Ray head or node the test starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ray_node(*args: str, env: dict[str, str], cwd: str | None = None) -> subprocess.Popen:
    """``ray start --block ARGS`` with one CPU: a node of a test's own cluster, in its own process group (so that the
    test can stop exactly this node)."""
    return subprocess.Popen([RAY, "start", "--block", "--num-cpus", "1", "--disable-usage-stats", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env,
                            cwd=cwd)


_COUNT_NODES = """import sys, time, ray
address, count, deadline = sys.argv[1], int(sys.argv[2]), time.time() + float(sys.argv[3])
ray.init(address=address, logging_level="ERROR")
alive = sum(n["Alive"] for n in ray.nodes())
while alive < count and time.time() < deadline:
    time.sleep(0.5)
    alive = sum(n["Alive"] for n in ray.nodes())
print(alive)
"""


def alive_nodes(address: str, count: int, env: dict[str, str], timeout: float = 60) -> int:
    """The alive nodes of the cluster at ``address`` once ``count`` of them are (or ``timeout`` passed): its head's
    port is waited for first, then one driver counts (a driver a poll cost ~2.5 CPU s: Ray's import and connection)."""
    host, _, port = address.rpartition(":")
    deadline = time.time() + timeout
    while time.time() < deadline:
        with contextlib.suppress(OSError), socket.create_connection((host, int(port)), timeout=1):
            break
        time.sleep(0.3)
    out = subprocess.run([sys.executable, "-c", _COUNT_NODES, address, str(count), str(deadline - time.time())],
                         capture_output=True, text=True, timeout=timeout + 60, env=env, cwd="/").stdout
    return int(out.strip().splitlines()[-1]) if out.strip() else 0


#: The shared head's settings: one CPU (one trial worker a run), no GPU, none of the processes no test reads (the log
#: monitor polled every worker's log file for no reader: the drivers set log_to_driver=False).
HEAD_ARGUMENTS = ("--node-ip-address=127.0.0.1", "--num-cpus=1", "--num-gpus=0", "--include-dashboard=false",
                  "--disable-usage-stats", "--include-log-monitor=false")
_head: subprocess.Popen | None = None
_head_address = ""
_head_directory: Path | None = None


def shared_head(start_timeout: float = 120.0) -> str:
    """The address of this test process's Ray head (one per pytest-xdist worker: at most two at once under `make
    test`, one CPU each), started on first use with one CPU and no GPU, and stopped when the process exits."""
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
            [RAY, "start", "--head", "--block", f"--port={port}", *HEAD_ARGUMENTS, f"--temp-dir={_head_directory}"],
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
