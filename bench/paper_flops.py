"""Training work of every richter2020 study at paper scale: models, optimiser steps, matmul FLOPs, and the
hours they take at a given sustained rate.

The FLOPs are the analytic matmul FLOPs of bench/throughput.py (forward + backward = 3 x forward, elementwise
work not counted, evaluation not counted), summed over every configuration x seed of each study. The hours
column for this CPU uses the rate measured for one model at a time in bench/README.md (run Q); the GPU
columns divide by an assumed sustained rate and are estimates until a GPU run measures the real one
(`python bench/throughput.py --device cuda`).

    .venv/bin/python bench/paper_flops.py [--rate-gflops 40] [--gpu-tflops 5 20]   # bench/ goes on sys.path
"""

from __future__ import annotations

import argparse

from throughput import step_flops  # a sibling script: Python puts bench/ on sys.path when it runs this file

from search_spaces import get_study
from search_spaces.richter2020 import STUDIES
from study.trial.trainable import member_configs, split_config
from trainables.catalog import family_for_task


def study_work(name: str) -> tuple[int, int, float]:
    """(models, optimiser steps, matmul FLOPs) of one study at paper scale."""
    study = get_study(name, "paper")
    models = steps = 0
    flops = 0.0
    for config in study.grid():
        point = {k: config[k] for k in study.axes}
        hyper, _ = split_config(study, point)
        for cfg in member_configs(hyper):
            n = len(study.seeds)
            models += n
            steps += n * cfg.n_steps
            flops += n * cfg.n_steps * step_flops(cfg)
    return models, steps, flops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate-gflops", type=float, default=40.0,
                        help="sustained GFLOP/s of this CPU for one model at a time (bench/README.md run Q)")
    parser.add_argument("--gpu-tflops", type=float, nargs="+", default=[5.0, 20.0],
                        help="assumed sustained TFLOP/s on one GPU (packed models)")
    args = parser.parse_args()
    print("| study | models | steps | matmul PFLOP | CPU hours here | " +
          " | ".join(f"GPU h at {t:g} TFLOP/s" for t in args.gpu_tflops) + " |")
    print("|---|---|---|---|---|" + "---|" * len(args.gpu_tflops))
    total = [0, 0, 0.0]
    for study in STUDIES:
        if family_for_task(study.tasks[0]).name != "richter2020":  # Fig. 1 measures poolings: nothing trains
            continue
        models, steps, flops = study_work(study.name)
        total = [total[0] + models, total[1] + steps, total[2] + flops]
        gpu = " | ".join(f"{flops / (t * 1e12) / 3600:.2f}" for t in args.gpu_tflops)
        print(f"| {study.name} | {models} | {steps:,} | {flops / 1e15:.1f} | "
              f"{flops / (args.rate_gflops * 1e9) / 3600:.0f} | {gpu} |")
    gpu = " | ".join(f"{total[2] / (t * 1e12) / 3600:.1f}" for t in args.gpu_tflops)
    print(f"| **all** | {total[0]} | {total[1]:,} | {total[2] / 1e15:.1f} | "
          f"{total[2] / (args.rate_gflops * 1e9) / 3600:.0f} | {gpu} |")


if __name__ == "__main__":
    main()
