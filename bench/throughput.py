"""Trial-steps per second: one model at a time (the loop at K = 1) vs packed K = 5 and K = 50 (and the
largest K that fits, with --max-k).

For each d the three variants are timed in the same run, round-robin, so the shared machine's noise hits
them alike; each run times ``--steps`` optimiser steps of the training loop itself
(:meth:`trainables.richter2020.loop.Pack.step`: sampling, forward, loss, backward, clipping where the
architecture clips, Adam, the per-step host sync, the accuracy sums), after untimed warm-up steps. Medians
over ``--runs`` runs. The matmul peak (best of 5 fp32 2048^3 matmuls, same thread count) is measured in the
same process before each d, and the largest value of the run is used; achieved GFLOP/s uses the analytic
matmul FLOPs of forward + backward (3x forward), elementwise work not counted.

    .venv/bin/python bench/throughput.py                      # MTE on cases, d = 16 64 128 256
    .venv/bin/python bench/throughput.py --d-model 16 64 --packs 5 50 --runs 5
    python bench/throughput.py --device cuda --bf16          # on a GPU machine (device tool), bf16 autocast

On CUDA every timed step ends with the same host sync as training (the loss read back), so the clock
measures finished work; the peak is then the bf16/fp32 matmul peak of that GPU measured the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import statistics
import time
from collections.abc import Callable

import torch

from trainables.compiling import compile_mode, compiled
from trainables.counter_draws import Draws
from trainables.richter2020.architectures import ARCHITECTURES
from trainables.richter2020.config import TrainConfig
from trainables.richter2020.loop import Pack, members_per_pack
from trainables.richter2020.recipe import STREAM_TRAIN, make_task, stream_keys

DEVICE = "cpu"  # set by --device before any stepper is built
AUTOCAST = False  # set by --bf16: forward passes under torch.autocast(bfloat16)


def _sync() -> None:
    if DEVICE.startswith("cuda"):
        torch.cuda.synchronize()


def _autocast() -> contextlib.AbstractContextManager[None]:
    if not AUTOCAST:
        return contextlib.nullcontext()
    return torch.autocast(device_type=DEVICE.split(":")[0], dtype=torch.bfloat16)


def matmul_peak_gflops(n: int = 2048, repeats: int = 5) -> float:
    """Best GFLOP/s of an n x n x n matmul (2 n^3 FLOP; bf16 under --bf16, else fp32) over ``repeats``: on a
    shared machine the best repeat is the least disturbed one, i.e. the closest to the machine's peak."""
    dtype = torch.bfloat16 if AUTOCAST else torch.float32
    a, b = torch.randn(n, n, device=DEVICE, dtype=dtype), torch.randn(n, n, device=DEVICE, dtype=dtype)
    a @ b
    _sync()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        a @ b
        _sync()
        times.append(time.perf_counter() - t)
    return 2 * n**3 / min(times) / 1e9


def timed_config(architecture: str, task: str, d_model: int) -> TrainConfig:
    """The configuration this script times at ``d_model`` (the task's defaults: batch 32, N = 128, L = 2; steps
    unbounded), also what bench/paper_flops.py fits its measured rates to and bench/op_count.py counts."""
    return TrainConfig(architecture=architecture, task=task, d_model=d_model, n_steps=10**6)


def step_flops(cfg: TrainConfig) -> float:
    """Analytic matmul FLOPs of one training step (forward + backward = 3 x forward) of one model."""
    d, n, b, layers = cfg.d_model, cfg.seq_len, cfg.batch_size, cfg.n_layers
    arch = ARCHITECTURES.get(cfg.architecture)
    ffn = 2 * 2 * d * arch.ffn_hidden(d)  # up + down, per token
    if arch.mixer in ("sum", "max", "mean"):
        mixer = 0
    else:
        dh = d // cfg.n_heads
        proj = 2 * d * 3 * d + 2 * d * d  # qkv + mixing linear
        if arch.mixer == "softmax":
            pool = 2 * 2 * n * d  # Q K^T and A V
        else:  # NAP / NON O(N d_h^2) forms: K^T V (+ K~^T K~, q cov for NAP) and q (K^T V)
            pool = (3 if arch.mixer == "normalized" else 2) * 2 * dh * d
        mixer = proj + pool
    return 3.0 * b * n * layers * (mixer + ffn)


def solo_stepper(cfg: TrainConfig) -> Callable[[], None]:
    """One model: the loop's step at K = 1, eager (the reference every ratio is against, as in older checkouts)."""
    return packed_stepper(cfg, 1, compile=False)


def packed_stepper(
    cfg: TrainConfig, k: int, *, sample_only: bool = False, compile: bool | str | None = "auto"
) -> Callable[[], None]:
    """K packed members, the loop's step (no frozen members), compiled as training compiles on this device by
    default (``compile="auto"``: :mod:`trainables.compiling`); ``sample_only``: its sampling alone."""
    mode = compile_mode(DEVICE) if compile == "auto" else compile
    if sample_only:  # as Pack._sample, with no model built (the sampling steppers hold no parameters)
        task, keys = make_task(cfg), stream_keys(list(range(k)), STREAM_TRAIN, DEVICE)
        counter = torch.zeros((), dtype=torch.int64, device=DEVICE)
        draw = compiled(lambda keys, c: task.sample(cfg.batch_size, cfg.seq_len, Draws(keys, c)), mode)

        def sample() -> None:
            draw(keys, counter)
            counter.add_(1)

        return sample
    pack = Pack([cfg] * k, list(range(k)), device=DEVICE, compile=mode or False)

    def step() -> None:
        with _autocast():
            pack.step()

    return step


def auto_stepper(cfg: TrainConfig, k: int, *, sample_only: bool = False) -> Callable[[], None]:
    """K members in packs of ``members_per_pack`` (train_members' default), the packs one after another."""
    size = members_per_pack(cfg, DEVICE) or k
    steps = [packed_stepper(cfg, min(size, k - i), sample_only=sample_only) for i in range(0, k, size)]

    def step() -> None:
        for s in steps:
            s()

    return step


def _fits(cfg: TrainConfig, k: int) -> bool:
    """Whether a packed step of K members runs beside what is allocated; its memory is given back."""
    try:
        packed_stepper(cfg, k, compile=False)()  # eager: a compiled step's memory is no larger, and no compile per K
        _sync()
        return True
    except torch.OutOfMemoryError:
        return False
    except RuntimeError as error:  # cuBLAS / cuDNN workspace allocations fail as plain RuntimeErrors
        if "out of memory" not in str(error).lower():
            raise
        return False
    finally:
        if DEVICE.startswith("cuda"):
            torch.cuda.empty_cache()


def _predicted(cfg: TrainConfig, lowest: int) -> float | None:
    """On CUDA, the K that 90% of the free memory holds, from the peak memory of one K = `lowest` step (None
    elsewhere, or when even that does not fit)."""
    if not DEVICE.startswith("cuda"):
        return None
    device = torch.device(DEVICE)
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    if not _fits(cfg, lowest):
        return None
    per_member = max(1, torch.cuda.max_memory_allocated(device) - base) / lowest
    free, _ = torch.cuda.mem_get_info(device)
    return 0.9 * free / per_member


def largest_pack(cfg: TrainConfig, limit: int, start: int = 64) -> int:
    """The largest K of `lowest` x 2^i (lowest = min(start, limit); at most `limit`) whose packed step runs
    beside what is already allocated. On CUDA the search starts where one step's memory predicts, so it
    builds one or two large packs rather than every size (a build is a host loop over members)."""
    lowest = min(start, limit)
    k, failed = lowest, None
    predicted = _predicted(cfg, lowest)
    if predicted is not None and predicted > lowest:
        k = lowest * 2 ** int(math.log2(predicted / lowest))
        while k > limit:
            k //= 2
        while k > lowest and not _fits(cfg, k):
            failed, k = k, k // 2
    elif not _fits(cfg, lowest):
        raise SystemExit(f"d={cfg.d_model}: not even K={lowest} fits on {DEVICE}")
    while 2 * k <= limit and 2 * k != failed and _fits(cfg, 2 * k):
        k *= 2
    return k


def rate(step: Callable[[], None], n_steps: int) -> float:
    """Steps per second over n_steps calls."""
    t = time.perf_counter()
    for _ in range(n_steps):
        step()
    _sync()
    return n_steps / (time.perf_counter() - t)


Variant = tuple[int, Callable[[], None], Callable[[], None]]  # (members, step, sampling-only step)


def _variants(cfg: TrainConfig, args: argparse.Namespace) -> dict[str, Variant]:
    """The steppers timed for one d: one model at a time, packed K, K in train_members' packs, compiled K."""
    variants: dict[str, Variant] = {"one at a time": (1, solo_stepper(cfg),
                                                      packed_stepper(cfg, 1, sample_only=True, compile=False))}
    for k in args.packs:
        variants[f"packed K={k}"] = (k, packed_stepper(cfg, k), packed_stepper(cfg, k, sample_only=True))
    for k in args.auto:
        size = members_per_pack(cfg, DEVICE) or k
        variants[f"K={k} in packs of {size}"] = (k, auto_stepper(cfg, k), auto_stepper(cfg, k, sample_only=True))
    for k in args.eager:
        variants[f"packed K={k} eager"] = (k, packed_stepper(cfg, k, compile=False),
                                           packed_stepper(cfg, k, sample_only=True, compile=False))
    for k in args.compile:
        t = time.perf_counter()
        step = packed_stepper(cfg, k, compile=args.compile_mode)
        step()
        print(f"d={cfg.d_model}: torch.compile ({args.compile_mode}) of packed K={k}: "
              f"{time.perf_counter() - t:.1f} s (compile + 1 step)")
        variants[f"packed K={k} compiled ({args.compile_mode})"] = (k, step, packed_stepper(cfg, k, sample_only=True))
    if args.max_k:  # last: it must fit beside the others, which are timed with it
        k = largest_pack(cfg, args.max_k)
        variants[f"packed K={k} (largest that fits)"] = (k, packed_stepper(cfg, k),
                                                          packed_stepper(cfg, k, sample_only=True))
    return variants


def main() -> None:
    """Print a Markdown table of trial-steps/s, speed-ups and GFLOP/s."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--architecture", default="MTE")
    parser.add_argument("--task", default="cases")
    parser.add_argument("--d-model", type=int, nargs="+", default=[16, 64, 128, 256])
    parser.add_argument("--packs", type=int, nargs="+", default=[5, 50])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=0, help="steps per timed run; 0: by d (about 1-3 s)")
    parser.add_argument("--auto", type=int, nargs="*", default=[50], help="K trained in train_members' packs")
    parser.add_argument("--compile", type=int, nargs="*", default=[], help="K packed with torch.compile")
    parser.add_argument("--eager", type=int, nargs="*", default=[], help="K packed, not compiled (where auto compiles)")
    parser.add_argument("--compile-mode", default="default", choices=["default", "reduce-overhead", "max-autotune"],
                        help="torch.compile mode of --compile (reduce-overhead: CUDA graphs)")
    parser.add_argument("--max-k", type=int, default=0,
                        help="also time the largest K (doubling from 64, at most this) whose packed step fits")
    parser.add_argument("--device", default="cpu", help="cpu or cuda[:i]")
    parser.add_argument("--bf16", action="store_true", help="forward passes under bf16 autocast")
    args = parser.parse_args()
    global DEVICE, AUTOCAST
    DEVICE, AUTOCAST = args.device, args.bf16
    if args.max_k < 0:
        parser.error(f"invalid --max-k {args.max_k}; allowed: 0 (off) or a positive K")
    if DEVICE.startswith("cuda") and not torch.cuda.is_available():
        parser.error(f"invalid --device {DEVICE!r}: torch sees no CUDA device here; allowed: cpu")
    torch.set_num_threads(args.threads)
    peak = matmul_peak_gflops()
    where = torch.cuda.get_device_name(DEVICE) if DEVICE.startswith("cuda") else f"{args.threads} threads"
    kind = "bf16" if AUTOCAST else "fp32"
    print(f"torch {torch.__version__}, {DEVICE} ({where}); {kind} matmul peak {peak:.1f} GFLOP/s (2048^3)")
    print(f"{args.architecture} on {args.task}, batch 32, N = 128, L = 2; median of {args.runs} runs\n")
    header = "| d | variant | trial-steps/s (median) | runs | x vs one-at-a-time | GFLOP/s | % of peak | sampling % |"
    print(header)
    print("|---|---|---|---|---|---|---|---|")
    results: list[tuple[int, str, float, list[float], float, float, float]] = []
    for d in args.d_model:
        peak = max(peak, matmul_peak_gflops())
        cfg = timed_config(args.architecture, args.task, d)
        flops = step_flops(cfg)
        variants = _variants(cfg, args)
        rates: dict[str, list[float]] = {name: [] for name in variants}
        sample_rates: dict[str, list[float]] = {name: [] for name in variants}
        for name, (_k, step, sample) in variants.items():  # warm-up (allocator, kernels, compilation)
            t = time.perf_counter()
            step()
            sample()
            _sync()
            print(f"d={d}: {name}: first step {time.perf_counter() - t:.1f} s (compilation included)", flush=True)
        for _ in range(args.runs):
            for name, (k, step, sample) in variants.items():
                n = args.steps or max(1, round({16: 40, 64: 20, 128: 8}.get(d, 3) / k))  # ~1 s of one model
                rates[name].append(k * rate(step, n))
                sample_rates[name].append(k * rate(sample, n))
        base = rates["one at a time"]
        for name in variants:
            med = statistics.median(rates[name])
            ratio = statistics.median([a / b for a, b in zip(rates[name], base, strict=True)])
            gflops = med * flops / 1e9
            share = 100 * statistics.median(
                [r / s for r, s in zip(rates[name], sample_rates[name], strict=True)]
            )
            results.append((d, name, med, rates[name], ratio, gflops, share))
            runs = ", ".join(f"{x:.1f}" for x in rates[name])
            print(f"| {d} | {name} | {med:.1f} | {runs} | {ratio:.2f} | {gflops:.1f} | - | {share:.1f}% |", flush=True)
    print(f"\nmatmul peak over the run: {peak:.1f} GFLOP/s; % of peak:")
    for d, name, _, _, _, gflops, _ in results:
        print(f"| {d} | {name} | {100 * gflops / peak:.0f}% |")


if __name__ == "__main__":
    main()
