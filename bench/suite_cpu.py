"""What each test costs in CPU seconds, its whole process tree counted (Ray's daemons, trial workers, `study`
subprocesses): a pytest plugin, and a summary of what it wrote.

Wall times of a test under pytest-xdist depend on what else runs on the machine; CPU seconds of every process a test
starts do not (much), so they say where a suite's time goes even on a busy machine, and whether the suite is bound by
its CPUs: if the CPU seconds of all tests come to about (cores x wall), more workers cannot make it faster.

Each xdist worker (and the controller) moves itself into a cgroup (v1 ``cpuacct``) of its own at start-up; every
process it starts inherits it, so a test's cost is the group's usage when it ends less its usage when it began (a Ray
head that a worker keeps for its tests counts in the tests that run while it idles). Needs a writable
``/sys/fs/cgroup/cpuacct`` (root, cgroup v1); elsewhere the plugin stops the run with one line saying so.

    PYTHONPATH=. SUITE_CPU_OUT=/tmp/suite_cpu .venv/bin/python -m pytest -n 2 --dist loadgroup -p bench.suite_cpu
    .venv/bin/python bench/suite_cpu.py /tmp/suite_cpu     # per module and the costliest tests
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path

import pytest

CGROUPS = Path("/sys/fs/cgroup/cpuacct")
_group: Path | None = None


def _out() -> Path:
    return Path(os.environ.get("SUITE_CPU_OUT", "suite_cpu"))


def _usage() -> float:
    assert _group is not None
    return int((_group / "cpuacct.usage").read_text()) / 1e9


def pytest_configure(config: pytest.Config) -> None:
    global _group
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    try:
        _group = CGROUPS / f"suite_cpu_{worker}_{os.getpid()}"
        _group.mkdir(exist_ok=True)
        (_group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError as error:
        raise pytest.UsageError(f"bench/suite_cpu.py needs a writable cgroup v1 cpuacct hierarchy at {CGROUPS} "
                                f"(root): {error}") from None
    _out().mkdir(parents=True, exist_ok=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    cpu, wall = _usage(), time.time()
    yield
    row = {"test": item.nodeid.split("@")[0], "cpu_s": round(_usage() - cpu, 2), "wall_s": round(time.time() - wall, 2),
           "slow": item.get_closest_marker("slow") is not None}
    with open(_out() / f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl", "a") as f:
        f.write(json.dumps(row) + "\n")


def pytest_unconfigure(config: pytest.Config) -> None:
    """The group's total (collection and fixtures between tests included), then the group removed."""
    if _group is None:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (_out() / f"{worker}.total").write_text(f"{_usage():.1f}\n")
    (CGROUPS / "cgroup.procs").write_text(str(os.getpid()))  # back to the root group, so that this one can go
    try:
        _group.rmdir()
    except OSError:  # a process it started still lives (a Ray head exiting): the empty group stays
        pass


def summary(out: Path, top: int = 25) -> str:
    """Per module and slow / fast: CPU seconds and tests; then the ``top`` costliest tests; then the workers' totals."""
    rows = [json.loads(line) for f in sorted(out.glob("*.jsonl")) for line in f.read_text().splitlines()]
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for r in rows:
        entry = modules[r["test"].split("::")[0]]
        entry[0] += r["cpu_s"]
        entry[1] += 1
    lines = [f"{len(rows)} tests, {sum(r['cpu_s'] for r in rows):.0f} CPU s "
             f"(slow {sum(r['cpu_s'] for r in rows if r['slow']):.0f}, "
             f"fast {sum(r['cpu_s'] for r in rows if not r['slow']):.0f})", "", "CPU s  tests  module"]
    lines += [f"{cpu:6.0f} {n:6.0f}  {m}" for m, (cpu, n) in sorted(modules.items(), key=lambda kv: -kv[1][0])]
    lines += ["", "CPU s   wall s  test"]
    lines += [f"{r['cpu_s']:6.1f} {r['wall_s']:7.1f}  {r['test']}"
              for r in sorted(rows, key=lambda r: -r["cpu_s"])[:top]]
    totals = {f.stem: float(f.read_text()) for f in sorted(out.glob("*.total"))}
    lines += ["", "process groups (collection and fixtures included): "
              + ", ".join(f"{k} {v:.0f} s" for k, v in totals.items()) + f"; {sum(totals.values()):.0f} CPU s in all"]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(Path(sys.argv[1]) if len(sys.argv) > 1 else _out()))
