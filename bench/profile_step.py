"""Where a packed training step's GPU time goes: torch.profiler over a few steps, kernels grouped by kind.

Groups (by kernel name): matmul (cuBLAS / CUTLASS gemm kernels), fused (Triton kernels that torch.compile generated),
copies (memcpy / memset, autocast casts run eagerly), other (the rest: eager elementwise, reductions, layer norm).
Prints each group's share of GPU kernel time, the GPU-busy share of the wall time, the step time and the top kernels.

    python bench/profile_step.py --device cuda --bf16 --d-model 128 --k 50
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections import defaultdict

import throughput  # a sibling script (bench/ on sys.path); its DEVICE and AUTOCAST are set below
import torch
from torch.profiler import ProfilerActivity, profile


def kind(name: str) -> str:
    low = name.lower()
    if any(s in low for s in ("gemm", "xmma", "cutlass", "wgmma", "sm90_", "cublas")):
        return "matmul"
    if low.startswith("triton") or "triton_" in low:
        return "fused"
    if "memcpy" in low or "memset" in low or "copy" in low:
        return "copies"
    return "other"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--compile", choices=["auto", "off"], default="auto")
    args = parser.parse_args()
    throughput.DEVICE, throughput.AUTOCAST = args.device, args.bf16
    cfg = throughput.timed_config("MTE", "cases", args.d_model)
    step = throughput.packed_stepper(cfg, args.k, compile="auto" if args.compile == "auto" else False)
    for _ in range(3):
        step()
    throughput._sync()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if args.device.startswith("cuda") else [])
    with profile(activities=activities) as prof:
        t = time.perf_counter()
        for _ in range(args.steps):
            step()
        throughput._sync()
        wall = time.perf_counter() - t
    per_kind: dict[str, float] = defaultdict(float)
    per_kernel: dict[str, float] = defaultdict(float)
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            per_kind[kind(event.name)] += event.device_time_total if hasattr(event, "device_time_total") else \
                event.cuda_time_total
            per_kernel[event.name] += event.device_time_total if hasattr(event, "device_time_total") else \
                event.cuda_time_total
    gpu_us = sum(per_kind.values())
    flops = throughput.step_flops(cfg) * args.k * args.steps
    print(f"MTE on cases, d = {args.d_model}, K = {args.k}, {'bf16' if args.bf16 else 'fp32'}, "
          f"compile {args.compile}, {args.steps} steps: {1e3 * wall / args.steps:.2f} ms per step, "
          f"{args.k * args.steps / wall:.0f} member-steps/s, {flops / wall / 1e12:.1f} TFLOP/s (matmul FLOPs)")
    print(f"GPU kernel time {gpu_us / 1e3:.1f} ms = {100 * gpu_us / 1e6 / wall:.0f}% of the wall time")
    for name, us in sorted(per_kind.items(), key=lambda x: -x[1]):
        print(f"| {name} | {100 * us / max(gpu_us, 1):.1f}% |")
    print("top kernels:")
    for name, us in sorted(per_kernel.items(), key=lambda x: -x[1])[:12]:
        print(f"| {name[:90]} | {100 * us / max(gpu_us, 1):.1f}% |")


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
