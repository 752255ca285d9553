"""A paper-scale slice of training through the trial's own loop: member-steps/s with evaluation, and its share.

What a trial of ``study run`` spends on a device, without Ray and the Parquet files around it: ``train_members`` of
paper-scale configurations (3,200 steps, an evaluation of 32 validation batches every 100 steps, as the paper's
studies) for ``--steps`` steps, K members packed (5: one learning rate's seeds; 50: ten learning rates' seeds). The
first evaluation period is not timed (compilation, allocator); then every step and evaluation is. Prints one line per
(d, K): member-steps/s end to end, the share of the time spent evaluating, the first period's time.

    python bench/trainer_slice.py --device cuda --bf16 --d-model 16 64 128 --k 5 50 --steps 400
"""

from __future__ import annotations

import argparse
import contextlib
import time

import torch

from trainables.compiling import compile_mode
from trainables.richter2020.config import TrainConfig
from trainables.richter2020.loop import Pack

LEARNING_RATES = (0.3, 0.09, 0.027, 0.0081, 0.00243, 0.000729, 0.0002187, 6.561e-05, 1.9683e-05, 5.9049e-06)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def measure(args: argparse.Namespace, d: int, k: int) -> dict[str, float]:
    """Time one pack of K members at width d: (member-steps/s, evaluation share, first period s)."""
    rates = [LEARNING_RATES[i % len(LEARNING_RATES)] for i in range(k // len(args.seeds) or 1)]
    configs = [TrainConfig(architecture=args.architecture, task=args.task, d_model=d, n_steps=3200,
                           learning_rate=lr) for lr in rates]
    seeds = list(range(len(args.seeds)))
    members = [(c, s) for c in configs for s in seeds][:k]
    autocast = (torch.autocast(device_type=args.device.split(":")[0], dtype=torch.bfloat16) if args.bf16
                else contextlib.nullcontext())
    with autocast:
        pack = Pack([c for c, _ in members], [s for _, s in members], device=args.device,
                    compile=compile_mode(args.device) or False)
        every = configs[0].eval_every
        t0 = time.perf_counter()
        for _ in range(every):  # the first period: compilation, warm-up
            pack.step()
        pack._emit(every)
        _sync(args.device)
        first = time.perf_counter() - t0
        eval_s = 0.0
        for step in range(every + 1, every + args.steps + 1):
            pack.step()
            if step % every == 0:
                _sync(args.device)  # the steps before it finish first, so the evaluation's clock is its own
                t = time.perf_counter()
                pack._emit(step)  # ends with its read-back: finished work
                eval_s += time.perf_counter() - t
        _sync(args.device)
    total = time.perf_counter() - t0 - first
    return {"rate": k * args.steps / total, "eval_share": eval_s / total, "first_s": first}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--architecture", default="BERT")
    parser.add_argument("--task", default="mode")
    parser.add_argument("--d-model", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--k", type=int, nargs="+", default=[5, 50])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--steps", type=int, default=200, help="timed steps (a multiple of 100: whole periods)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if args.steps % 100:
        parser.error(f"invalid --steps {args.steps}; allowed: a multiple of 100 (whole evaluation periods)")
    torch.set_num_threads(args.threads)
    where = torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else f"{args.threads} threads"
    print(f"torch {torch.__version__}, {args.device} ({where}), {'bf16' if args.bf16 else 'fp32'}, "
          f"compile {compile_mode(args.device)}; {args.architecture} on {args.task}, paper cadence")
    print("| d | K | member-steps/s (eval included) | evaluation share | first period s |")
    print("|---|---|---|---|---|")
    for d in args.d_model:
        for k in args.k:
            r = measure(args, d, k)
            print(f"| {d} | {k} | {r['rate']:.0f} | {100 * r['eval_share']:.1f}% | {r['first_s']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
