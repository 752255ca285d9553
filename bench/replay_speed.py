"""CPU seconds of the calibration's replays (analysis/calibration/), the work of the suite's calibration tests: a
fixed budget on two seeds in the release world, the adaptive budget in the hidden-split world, and the time-axis
findings of tests/test_time_calibration.py on two seeds. Each replay is a whole pass through the project's rows,
statistics, verdicts and budget. One process; the worlds' truths are computed before the clock starts.

    .venv/bin/python bench/replay_speed.py --runs 3
    .venv/bin/python bench/compare_checkouts.py --bench replay --old OLD --new . --rounds 5 -- --runs 1

Prints ``| replays | what | median CPU s |`` rows (lower is better)."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from analysis.calibration.findings import calibration_findings
from analysis.calibration.simulate import simulate
from analysis.calibration.time_findings import overlap_fact, time_calibration_findings
from analysis.calibration.world import World, study, world


def cases() -> list[tuple[int, str, Callable[[], object]]]:
    """(replays, what, the replays)."""
    release, hidden, timed = world("release"), world("hidden"), World.of_release()
    fixed = study(calibration_findings(release), release, "fixed", 2)
    adaptive = study(calibration_findings(hidden), hidden, "adaptive", 5)
    axis = study(time_calibration_findings(timed), timed, "fixed", seeds=2)
    return [(10, "fixed budget, two seeds (release)", lambda: simulate(fixed, release, 10, seed=1)),
            (3, "adaptive budget (hidden splits)", lambda: simulate(adaptive, hidden, 3, seed=1)),
            (3, "time axis, two seeds", lambda: simulate(axis, timed, 3, seed=1, fact=overlap_fact))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="runs of each case (the median is printed)")
    args = parser.parse_args()
    print("| replays | what | median CPU s |\n|---|---|---|")
    for replays, what, replay in cases():
        replay()  # the truths and the worlds' draws cached: not timed
        seconds = []
        for _ in range(args.runs):
            start = time.process_time()
            replay()
            seconds.append(time.process_time() - start)
        print(f"| {replays} | {what} | {statistics.median(seconds):.2f} |", flush=True)


if __name__ == "__main__":
    main()
