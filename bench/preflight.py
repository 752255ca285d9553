"""What preflight's one-step check of every distinct configuration adds before a study launches (issue 34).

For the largest paper scales (the atlas: every mixer x every task x 5 widths; richter2020.fig3: 6 architectures x 8
widths), times ``study.run.preflight.check_components`` (every distinct (family, task, mixer, shape) trained one step
on a tiny batch on the CPU, in this process) and ``validate`` (every configuration built), median of ``--runs``
runs each, on one torch thread. Prints one line per study: distinct configurations, seconds, seconds per one.

    .venv/bin/python bench/preflight.py [--runs 3] [--studies atlas richter2020.fig3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from search_spaces import get_study
from study.run.preflight import check_components, validate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--studies", nargs="+", default=["atlas", "richter2020.fig3"])
    args = parser.parse_args()
    torch.set_num_threads(1)
    for name in args.studies:
        study = get_study(name, "paper")
        validate(study)  # warm: imports, CTL's data
        check_components(study, echo=lambda _: None)
        checks, validations, distinct = [], [], 0
        for _ in range(args.runs):
            started = time.perf_counter()
            validate(study)
            validations.append(time.perf_counter() - started)
            started = time.perf_counter()
            distinct = check_components(study, echo=lambda _: None)
            checks.append(time.perf_counter() - started)
        check = statistics.median(checks)
        print(f"{name} (paper scale, {study.trial_count()} trials): validate {statistics.median(validations):.2f} s; "
              f"one-step check of {distinct} distinct configurations {check:.1f} s "
              f"({check / distinct * 1000:.0f} ms each; runs: {', '.join(f'{c:.1f}' for c in checks)})")


if __name__ == "__main__":
    main()
