"""Is a change slower? A benchmark of two checkouts, run alternately in one session.

``--bench throughput`` (default): ``bench/throughput.py``, the training step (per (d, variant) trial-steps/s).
``--bench orchestration``: ``bench/orchestration.py``, the run path (``study.run`` planning, Ray Tune, a trial's
entry and adapter, its Parquet file, the fold): milliseconds per trivial trial, and the wall time of the run.
``--bench ctl``: ``bench/ctl_throughput.py``, the CTL models' training steps at the cpu scale. Its script is this
checkout's own, run on each checkout's code (it needs only ``train_seed``, which checkouts older than the script
have too). ``--bench ctl_data``: ``bench/ctl_data.py``, seconds to build the CTL splits and their tokens (this
checkout's script too; lower is better). ``--bench replay``: ``bench/replay_speed.py``, CPU seconds of the
calibration's replays (this checkout's script; lower is better).

Each round runs the old checkout's benchmark, then the new one's (each with its checkout's ``.venv``, as a
separate process), so drifting load on a shared machine hits both alike; the table gives the median of each
checkout over the rounds and the median of the per-round ratios new / old.

Each side runs with ``PYTHONPATH=<checkout>``, so it imports its own code even when both ``.venv`` are one
virtualenv (a link to one whose editable install points at a third checkout); before the first round the
script checks where each side's ``trainables`` comes from and stops if it is not its checkout.

    .venv/bin/python bench/compare_checkouts.py --old /path/to/old/checkout --new . --rounds 5 \\
        -- --d-model 16 128 --packs 5 --auto --runs 1 --threads 1
    .venv/bin/python bench/compare_checkouts.py --bench orchestration --old OLD --new . --rounds 5 -- --trials 300
    .venv/bin/python bench/compare_checkouts.py --bench ctl --old OLD --new . --rounds 5 -- --steps 10
    .venv/bin/python bench/compare_checkouts.py --bench ctl_data --old OLD --new . --rounds 5 -- --runs 1
    .venv/bin/python bench/compare_checkouts.py --bench replay --old OLD --new . --rounds 5 -- --runs 1
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
from pathlib import Path

ROW = re.compile(r"^\| (\d+) \| ([^|]+?) \| ([\d.]+) \|")


def _python(checkout: Path, *args: str) -> str:
    """stdout of ``checkout``'s Python with ``args``, importing the checkout's own code first."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    return subprocess.run([str(checkout / ".venv/bin/python"), *args], capture_output=True, text=True, check=True,
                          cwd=checkout, env=env).stdout


def check_imports(checkout: Path) -> Path:
    """Where ``checkout``'s benchmark imports ``trainables`` from; SystemExit unless from the checkout itself."""
    where = Path(_python(checkout, "-c", "import trainables; print(trainables.__file__)").strip()).resolve()
    if not where.is_relative_to(checkout):
        raise SystemExit(f"{checkout}: its Python imports trainables from {where}, not from the checkout")
    return where


def run_once(checkout: Path, bench_args: list[str], script: Path | None = None) -> dict[tuple[int, str], float]:
    """{(d, variant): median trial-steps/s} of one run of ``checkout``'s bench/throughput.py (or of ``script`` on the
    checkout's code)."""
    out = _python(checkout, str(script or checkout / "bench/throughput.py"), *bench_args)
    rates = {}
    for line in out.splitlines():
        m = ROW.match(line)  # the main table's rows; the "% of peak" rows end in "%" and do not match
        if m:
            rates[(int(m.group(1)), m.group(2).strip())] = float(m.group(3))
    if not rates:
        raise SystemExit(f"no result rows in the output of {checkout}:\n{out}")
    return rates


def run_orchestration(checkout: Path, bench_args: list[str]) -> dict[tuple[int, str], float]:
    """{(trials, measure): value} of one run of ``checkout``'s bench/orchestration.py (its last line is JSON)."""
    out = _python(checkout, str(checkout / "bench/orchestration.py"), *bench_args)
    result = json.loads(out.strip().splitlines()[-1])
    return {(result["trials"], "ms per trial"): result["ms_per_trial"], (result["trials"], "wall s"): result["wall_s"]}


def run_ctl(checkout: Path, bench_args: list[str]) -> dict[tuple[int, str], float]:
    """{(d, variant): median steps/s} of one run of this checkout's bench/ctl_throughput.py on ``checkout``'s code."""
    return run_once(checkout, bench_args, Path(__file__).resolve().with_name("ctl_throughput.py"))


def run_ctl_data(checkout: Path, bench_args: list[str]) -> dict[tuple[int, str], float]:
    """{(hold-out seed, what): median seconds} of one run of this checkout's bench/ctl_data.py on ``checkout``'s
    code."""
    return run_once(checkout, bench_args, Path(__file__).resolve().with_name("ctl_data.py"))


def run_replay(checkout: Path, bench_args: list[str]) -> dict[tuple[int, str], float]:
    """{(replays, what): median CPU seconds} of one run of this checkout's bench/replay_speed.py on ``checkout``'s
    code."""
    return run_once(checkout, bench_args, Path(__file__).resolve().with_name("replay_speed.py"))


BENCHES = {"throughput": (run_once, "d", "steps/s"), "orchestration": (run_orchestration, "trials", ""),
           "ctl": (run_ctl, "d", "steps/s"), "ctl_data": (run_ctl_data, "hold-out seed", "s"),
           "replay": (run_replay, "replays", "CPU s")}


def main() -> None:
    """Alternate the two checkouts for ``--rounds`` rounds and print the comparison as Markdown."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", type=Path, required=True, help="checkout with .venv/ (the baseline)")
    parser.add_argument("--new", type=Path, required=True, help="checkout with .venv/ (the change)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bench", choices=sorted(BENCHES), default="throughput")
    parser.add_argument("bench_args", nargs="*", help="arguments for the benchmark script (after --)")
    args = parser.parse_args()
    for name in ("old", "new"):
        print(f"{name}: trainables from {check_imports(getattr(args, name).resolve())}", flush=True)
    run, first, unit = BENCHES[args.bench]
    runs: dict[str, list[dict[tuple[int, str], float]]] = {"old": [], "new": []}
    for i in range(args.rounds):
        for name in ("old", "new"):
            runs[name].append(run(getattr(args, name).resolve(), args.bench_args))
        print(f"round {i + 1}/{args.rounds} done", flush=True)
    print(f"\n| {first} | variant | old {unit} (median) | new {unit} (median) | new / old (median of rounds) "
          "| rounds |")
    print("|---|---|---|---|---|---|")
    for key in runs["old"][0]:
        old = [r[key] for r in runs["old"]]
        new = [r[key] for r in runs["new"]]
        ratio = statistics.median(n / o for n, o in zip(new, old, strict=True))
        pairs = ", ".join(f"{o:.1f}/{n:.1f}" for o, n in zip(old, new, strict=True))
        print(f"| {key[0]} | {key[1]} | {statistics.median(old):.1f} | {statistics.median(new):.1f} | "
              f"{ratio:.3f} | {pairs} |")


if __name__ == "__main__":
    main()
