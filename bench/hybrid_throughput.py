"""Training steps per second and parameters of Yun et al.'s hybrid stacks, per k convolution layers at the bottom.

The cost half of the paper's claim (Sec. 5.3): replacing the bottom self-attention layers by depth-wise
separable convolutions saves parameters and computation. For k = 0..L (``search_spaces/yun2020.py``'s stacks:
k ``sepconv`` layers, then ``softmax``) one model at a time, the training loop's own step at K = 1, is timed
for ``--steps`` optimiser steps (sampling, forward, loss, backward, the architecture's clipping, Adam, the
per-step host sync) after untimed warm-up steps. The k values are timed round-robin inside each run so that
the shared machine's noise hits them alike; the table shows the median over ``--runs`` runs and the min-max range.

    .venv/bin/python bench/hybrid_throughput.py                    # the cpu scale of yun2020.hybrid
    .venv/bin/python bench/hybrid_throughput.py --d-model 128 --seq-len 128 --runs 5   # the paper scale
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from search_spaces.yun2020 import hybrid_stack
from trainables.richter2020.config import TrainConfig
from trainables.richter2020.loop import Pack


class Stepper:
    """One model in the training loop (K = 1); ``steps(n)`` runs n of its training steps."""

    def __init__(self, cfg: TrainConfig) -> None:
        self.cfg = cfg
        self.pack = Pack([cfg], [0])
        self.n_params = self.pack.model.n_params

    def steps(self, n: int) -> None:
        """n optimiser steps, as train_seed takes them (without its evaluations; past n_steps the rate is 0)."""
        for _ in range(n):
            self.pack.step()


def main() -> None:
    """Time every k and print a Markdown table (steps/s median and range, parameters, ratio to k = 0)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="cases")
    parser.add_argument("--architecture", default="BERT")
    parser.add_argument("--n-layers", type=int, default=4)
    parser.add_argument("--d-model", type=int, default=32)
    parser.add_argument("--n-heads", type=int, default=4)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--conv-width", type=int, default=31)
    parser.add_argument("--steps", type=int, default=40, help="timed steps per run")
    parser.add_argument("--warmup-steps", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    ks = list(range(args.n_layers + 1))
    steppers = {}
    for k in ks:
        cfg = TrainConfig(architecture=args.architecture, task=args.task, n_layers=args.n_layers,
                          d_model=args.d_model, n_heads=args.n_heads, seq_len=args.seq_len,
                          val_seq_len=args.seq_len, batch_size=args.batch_size, conv_width=args.conv_width,
                          mixer_stack=hybrid_stack(k, args.n_layers), learning_rate=1e-3, n_steps=3200)
        steppers[k] = Stepper(cfg)
        steppers[k].steps(args.warmup_steps)
    rates: dict[int, list[float]] = {k: [] for k in ks}
    for _ in range(args.runs):
        for k in ks:  # round-robin: noise hits every k alike
            start = time.perf_counter()
            steppers[k].steps(args.steps)
            rates[k].append(args.steps / (time.perf_counter() - start))
    print(f"{args.architecture}, {args.task}, L = {args.n_layers}, d = {args.d_model}, H = {args.n_heads}, "
          f"N = {args.seq_len}, batch {args.batch_size}, conv_width {args.conv_width}, {args.threads} thread(s), "
          f"{args.steps} steps x {args.runs} runs")
    print("| k conv layers | stack | parameters | vs k=0 | steps/s (median) | min-max | vs k=0 |")
    print("|---|---|---|---|---|---|---|")
    base_rate = statistics.median(rates[0])
    base_params = steppers[0].n_params
    for k in ks:
        med = statistics.median(rates[k])
        print(f"| {k} | {hybrid_stack(k, args.n_layers)} | {steppers[k].n_params:,} | "
              f"{steppers[k].n_params / base_params:.3f} | {med:.1f} | {min(rates[k]):.1f}-{max(rates[k]):.1f} | "
              f"{med / base_rate:.2f}x |")


if __name__ == "__main__":
    main()
