"""Training work of every richter2020 study at paper scale: models, optimiser steps, matmul FLOPs, and the
hours they take on this CPU and on one NVIDIA H200 by the rates measured there.

The FLOPs are the analytic matmul FLOPs of bench/throughput.py (forward + backward = 3 x forward, elementwise
work not counted, evaluation not counted), summed over every configuration x seed of each study. The CPU
column uses the rate measured for one model at a time in bench/README.md (run Q). The H200 columns use a cost
per member-step fitted to the packed K = 50 rates measured on one H200 (bench/README.md section 10): a fixed
part (launches, the per-member small kernels) plus FLOPs at a marginal rate, least squares over the measured d
(16, 64, 128, 256 before issue 49; 16 and 128 for its compiled step; MTE on cases, N = 128, batch 32); a fit with no
cost per FLOP (equal rates at both d) is a flat cost per member-step. Above the largest measured d that is an
extrapolation (the matmuls get larger, so the marginal rate is more likely to be low than high).

    .venv/bin/python bench/paper_flops.py [--rate-gflops 40]   # bench/ goes on sys.path
"""

from __future__ import annotations

import argparse

# a sibling script: Python puts bench/ on sys.path when it runs this file
from throughput import step_flops, timed_config

from search_spaces import get_study
from search_spaces.richter2020 import STUDIES
from study.trial.trainable import member_configs, split_config
from trainables.catalog import family_for_task

# Trial-steps per second, packed K = 50, median of 3 runs: `bench/throughput.py --device cuda [--bf16] --runs 3
# --d-model 16 64 128 256 --packs 5 50` on one NVIDIA H200 (torch 2.11.0+cu130), 2026-11-26.
H200_PACKED_RATES = {
    "fp32": {16: 2458.6, 64: 2019.6, 128: 1298.9, 256: 604.6},
    "bf16": {16: 3410.1, 64: 2545.6, 128: 1871.8, 256: 1123.4},
    # Issue 49's step (one-call counter-based data, no host sync, compiled), bf16, K = 512: the same script with
    # --d-model 128 16 --packs 50 --max-k 512 on one H200, 2026-11-26 (bench/README.md section 11). Its K = 50 rates
    # (4831.5 at d = 16, 4905.8 at d = 128) are equal: a fixed cost per step with no measurable cost per FLOP, which
    # says nothing about d = 1024; so the estimate uses K = 512, where both parts show.
    "bf16 compiled, K = 512": {16: 23261.4, 128: 6489.3},
}


def member_step_cost(rates: dict[int, float]) -> tuple[float, float]:
    """(seconds per member-step, FLOP/s): the least-squares line seconds = fixed + FLOPs / rate through the
    measured points, each at the FLOPs of the configuration bench/throughput.py timed."""
    points = [(step_flops(timed_config("MTE", "cases", d)), 1.0 / r) for d, r in rates.items()]
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points)
    if slope <= 0:  # no measurable cost per FLOP (the step is bound by its fixed part): a flat cost per member-step
        return mean_y, float("inf")
    return mean_y - slope * mean_x, 1.0 / slope


def study_work(name: str) -> list[tuple[int, float]]:
    """(optimiser steps, matmul FLOPs per step) of every model of one study at paper scale."""
    study = get_study(name, "paper")
    models = []
    for config in study.grid():
        point = {k: config[k] for k in study.axes}
        hyper, _ = split_config(study, point)
        for cfg in member_configs(hyper):
            models += [(cfg.n_steps, step_flops(cfg))] * len(study.seeds)
    return models


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate-gflops", type=float, default=40.0,
                        help="sustained GFLOP/s of this CPU for one model at a time (bench/README.md run Q)")
    args = parser.parse_args()
    costs = {precision: member_step_cost(rates) for precision, rates in H200_PACKED_RATES.items()}
    for precision, (fixed, rate) in costs.items():
        print(f"H200 {precision}{'' if 'K =' in precision else ', packed K = 50'}: {fixed * 1e6:.0f} us per "
              f"member-step + FLOPs at "
              f"{rate / 1e12:.1f} TFLOP/s")
    print("\n| study | models | steps | matmul PFLOP | CPU hours here | " +
          " | ".join(f"H200 h {p}" for p in costs) + " |")
    print("|---|---|---|---|---|" + "---|" * len(costs))
    total = [0, 0, 0.0] + [0.0] * len(costs)
    for study in STUDIES:
        if family_for_task(study.tasks[0]).name != "richter2020":  # Fig. 1 measures poolings: nothing trains
            continue
        models = study_work(study.name)
        row = [len(models), sum(s for s, _ in models), sum(s * f for s, f in models)]
        row += [sum(s * (fixed + f / rate) for s, f in models) / 3600 for fixed, rate in costs.values()]
        total = [t + r for t, r in zip(total, row, strict=True)]
        print(_row(study.name, row, args.rate_gflops))
    print(_row("**all**", total, args.rate_gflops))


def _row(name: str, row: list, rate_gflops: float) -> str:
    models, steps, flops, *gpu_hours = row
    return (f"| {name} | {models} | {steps:,} | {flops / 1e15:.1f} | {flops / (rate_gflops * 1e9) / 3600:.0f} | "
            + " | ".join(f"{h:.1f}" for h in gpu_hours) + " |")


if __name__ == "__main__":
    main()
