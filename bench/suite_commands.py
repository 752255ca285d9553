"""What one `study` command of the test suite costs in CPU seconds (its whole process tree, the Ray head's included):
a fresh interpreter against a fork of tests/forkserver.py, and `study run` on a shared head of two CPUs (two trial
workers at once) against one of one CPU (one worker, trials in turn); a `study run` that starts a local Ray of its
own, of the machine's two CPUs in a fresh interpreter (the tests' runs with an environment of their own before)
against one of one CPU forked (tests/cli.py LOCAL_RAY, now). Rounds alternate the variants; medians.

Each variant runs in a cgroup (v1 ``cpuacct``) of its own, as bench/suite_cpu.py does (root, cgroup v1).

    .venv/bin/python bench/suite_commands.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.chdir(ROOT)

import tests.cli as cli  # noqa: E402 - needs the checkout on sys.path

CGROUPS = Path("/sys/fs/cgroup/cpuacct")
GROUP = CGROUPS / f"suite_commands_{os.getpid()}"
DEMO = ("run", "demo", "--scale", "smoke")


def _usage() -> float:
    return int((GROUP / "cpuacct.usage").read_text()) / 1e9


def _cost(command: Callable[[], subprocess.CompletedProcess]) -> float:
    before = _usage()
    done = command()
    assert done.returncode in (0, 2), done.stderr[-2000:]
    return _usage() - before


def _head(cpus: int) -> None:
    """A fresh shared head of ``cpus`` CPUs (its start is not counted)."""
    cli.stop_shared_head()
    arguments = cli.HEAD_ARGUMENTS
    cli.HEAD_ARGUMENTS = tuple(a if not a.startswith("--num-cpus=") else f"--num-cpus={cpus}" for a in arguments)
    cli.shared_head()
    time.sleep(3)


def _local_ray_of_two(storage: str) -> subprocess.CompletedProcess:
    """A smoke demo run that starts a local Ray of the machine's two CPUs, in a fresh interpreter."""
    env = {**cli.command_env(), "RAY_OVERRIDE_RESOURCES": '{"CPU": 2}'}
    return subprocess.run([*cli.STUDY, *DEMO, "--storage", storage], capture_output=True, text=True, timeout=600,
                          env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    GROUP.mkdir()
    (GROUP / "cgroup.procs").write_text(str(os.getpid()))
    error = ("run", "demo", "--scale", "smoke", "--cpus-per-trial", "0")
    costs: dict[str, list[float]] = {}
    cli.run_cli("list")  # the fork server and the shared head up before anything is counted
    cli.shared_head()
    for _ in range(rounds):
        costs.setdefault("error, fresh interpreter", []).append(_cost(lambda: cli.fresh_cli(*error)))
        costs.setdefault("error, forked", []).append(_cost(lambda: cli.run_cli(*error)))
        for cpus in (2, 1):
            _head(cpus)
            with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
                costs.setdefault(f"demo smoke, {cpus}-CPU head, fresh interpreter", []).append(
                    _cost(lambda: cli.fresh_cli(*DEMO, "--storage", a)))  # noqa: B023 - called at once
                costs.setdefault(f"demo smoke, {cpus}-CPU head, forked", []).append(
                    _cost(lambda: cli.run_cli(*DEMO, "--storage", b)))  # noqa: B023 - called at once
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            costs.setdefault("demo smoke, own local Ray of 2 CPUs, fresh interpreter", []).append(
                _cost(lambda: _local_ray_of_two(a)))  # noqa: B023 - called at once
            costs.setdefault("demo smoke, own local Ray of 1 CPU, forked", []).append(
                _cost(lambda: cli.run_cli(*DEMO, "--storage", b, ray="local")))  # noqa: B023 - called at once
    cli.stop_shared_head()
    (CGROUPS / "cgroup.procs").write_text(str(os.getpid()))
    for name, values in costs.items():
        print(f"{statistics.median(values):6.1f} CPU s  {name}  ({', '.join(f'{v:.1f}' for v in values)})")


if __name__ == "__main__":
    main()
