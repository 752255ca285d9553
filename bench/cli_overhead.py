"""What one `study` command costs around its work: two checkouts' wall times of the same commands, run alternately.

Each round runs, on the old checkout and then the new one (each ``python -m study.cli`` with ``PYTHONPATH=<checkout>``,
so each imports its own code): ``study run`` of a four-trial study (tests/studies_for_tests.py:TPE, one CPU each, a
fresh local Ray, a new storage folder every time), then ``study status`` of that study (no Ray, no training). The
table gives each checkout's median over the rounds and the median of the per-round ratios new / old.

    .venv/bin/python bench/cli_overhead.py --old /path/to/old/checkout --new . --rounds 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STUDY = "tests/studies_for_tests.py:TPE"


def timed(checkout: Path, *args: str) -> float:
    """Wall seconds of ``study ARGS`` on ``checkout``'s code; SystemExit if it fails."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "RAY_ADDRESS": "local"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "study.cli", *args], cwd=checkout, env=env, capture_output=True,
                          text=True)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: study {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return took


def one_round(checkout: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as storage:
        run = timed(checkout, "run", STUDY, "--storage", storage)
        status = timed(checkout, "status", STUDY, "--storage", storage)
    return {"study run (4 trials)": run, "study status": status}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True)
    parser.add_argument("--new", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    old, new = args.old.resolve(), args.new.resolve()
    rounds = []
    for r in range(args.rounds):
        rounds.append((one_round(old), one_round(new)))
        print(f"round {r + 1}: " + ", ".join(f"{k} {a:.1f} s -> {rounds[-1][1][k]:.1f} s"
                                              for k, a in rounds[-1][0].items()), flush=True)
    print("\n| command | old (s) | new (s) | new / old |\n|---|---|---|---|")
    for key in rounds[0][0]:
        a = statistics.median(o[key] for o, _ in rounds)
        b = statistics.median(n[key] for _, n in rounds)
        ratio = statistics.median(n[key] / o[key] for o, n in rounds)
        print(f"| {key} | {a:.2f} | {b:.2f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
