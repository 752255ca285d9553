"""Training throughput (optimiser steps per second) of one model at a time: ``python -m trainables.benchmark``.

Times the bare training step (sampling, forward, backward, Adam) without evaluations.
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F

from trainables.config import TrainConfig
from trainables.loop import make_task
from trainables.model import build_model


def steps_per_second(cfg: TrainConfig, *, n_steps: int = 60, warmup_steps: int = 5, device: str = "cpu") -> float:
    """Mean optimiser steps per second of ``cfg`` over ``n_steps`` after ``warmup_steps`` untimed steps."""
    torch.manual_seed(0)
    model = build_model(cfg).to(device)
    task = make_task(cfg)
    gen = torch.Generator(device=device).manual_seed(0)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)

    def step() -> None:
        tokens, labels = task.sample(cfg.batch_size, cfg.seq_len, gen)
        loss = F.cross_entropy(model(tokens), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        float(loss.detach())

    for _ in range(warmup_steps):
        step()
    start = time.perf_counter()
    for _ in range(n_steps):
        step()
    return n_steps / (time.perf_counter() - start)


def main() -> None:
    """Print steps/s for MTE on cases at d = 16, 64, 128 (N = 128, batch 32, L = 2)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--architecture", default="MTE")
    parser.add_argument("--task", default="cases")
    parser.add_argument("--d-model", type=int, nargs="+", default=[16, 64, 128])
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    for d in args.d_model:
        cfg = TrainConfig(architecture=args.architecture, task=args.task, d_model=d)
        print(f"{args.architecture} {args.task} d={d}: {steps_per_second(cfg, n_steps=args.steps):.1f} steps/s")


if __name__ == "__main__":
    main()
