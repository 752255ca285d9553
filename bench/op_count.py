"""Operator calls per packed training step, by K: what a GPU pays in kernel launches when small models are packed.

On a GPU these models are launch-bound (bench/README.md section 10: a packed K = 50 step of MTE at d = 16 took
14.7 ms on an H200, busy 15% of the time), so the number of operators a step dispatches, and how it grows with K, is
the cost a CPU can measure for it. Counted: every ATen operator one step of the training loop dispatches
(:meth:`trainables.richter2020.loop.Pack.step` through bench/throughput.py's stepper: sampling, forward, loss,
backward, clipping, Adam), views and other aliasing operators left out (they launch nothing), after two steps.

    .venv/bin/python bench/op_count.py [--d-model 16] [--packs 1 5 50] [--architecture MTE BERT]
"""

from __future__ import annotations

import argparse
from typing import Any

import torch

# a sibling script: Python puts bench/ on sys.path when it runs this file
from throughput import packed_stepper, timed_config
from torch.utils._python_dispatch import TorchDispatchMode

from trainables.richter2020.config import TrainConfig


class _Count(TorchDispatchMode):
    """Counts the non-aliasing operators dispatched while it is active (backward's too: it runs in this thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        if not func.is_view and func.overloadpacket.__name__ not in ("detach", "alias", "lift_fresh"):
            self.calls += 1
        return func(*args, **(kwargs or {}))


def operator_calls(cfg: TrainConfig, k: int) -> int:
    """Non-aliasing operators one packed step of K members dispatches."""
    step = packed_stepper(cfg, k)
    step()
    step()
    with _Count() as count:
        step()
    return count.calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--architecture", nargs="+", default=["MTE", "BERT"])
    parser.add_argument("--task", default="cases")
    parser.add_argument("--d-model", type=int, default=16)
    parser.add_argument("--packs", type=int, nargs="+", default=[1, 5, 50])
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("| architecture | " + " | ".join(f"K = {k}" for k in args.packs) + " | per added member |")
    print("|---|" + "---|" * (len(args.packs) + 1))
    for architecture in args.architecture:
        cfg = timed_config(architecture, args.task, args.d_model)
        counts = [operator_calls(cfg, k) for k in args.packs]
        slope = (counts[-1] - counts[0]) / (args.packs[-1] - args.packs[0])
        print(f"| {architecture} | " + " | ".join(str(c) for c in counts) + f" | {slope:.1f} |")


if __name__ == "__main__":
    main()
