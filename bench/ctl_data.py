"""Seconds the CTL data take to build in a fresh process (Csordás et al. 2021, trainables/csordas2021/ctl.py): every
split of the generator (``generate``) and their tokens in each direction (``encoded_splits``), what each CTL trial's
worker pays once before its first step.

Each of ``--runs`` runs clears the caches and times ``generate(seed)`` for each ``--seeds`` hold-out seed, then
``encoded_splits`` of both directions on hold-out seed 0. The table rows read ``| hold-out seed | what | seconds |``
(median of the runs), the format ``bench/compare_checkouts.py --bench ctl_data`` parses; every checkout has
``generate`` and ``encoded_splits``, so an older checkout's code runs under this script too::

    .venv/bin/python bench/ctl_data.py --runs 3
    .venv/bin/python bench/compare_checkouts.py --bench ctl_data --old OLD --new . --rounds 5 -- --runs 1
"""

from __future__ import annotations

import argparse
import statistics
import time

from trainables.csordas2021 import ctl


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    args = parser.parse_args()
    times: dict[tuple[int, str], list[float]] = {}
    for _ in range(args.runs):
        ctl.generate.cache_clear()
        ctl.encoded_splits.cache_clear()
        for seed in args.seeds:
            started = time.perf_counter()
            ctl.generate(seed)
            times.setdefault((seed, "generate"), []).append(time.perf_counter() - started)
        started = time.perf_counter()
        for direction in ("forward", "backward"):
            ctl.encoded_splits(direction)
        times.setdefault((0, "encode both directions"), []).append(time.perf_counter() - started)
    print("| hold-out seed | what | seconds (median) |")
    print("|---|---|---|")
    for (seed, what), values in times.items():
        print(f"| {seed} | {what} | {statistics.median(values):.3f} |")


if __name__ == "__main__":
    main()
