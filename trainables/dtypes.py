"""Floating-point widths shared by every family: where a computation must not run narrower than float32."""

from __future__ import annotations

import torch


def at_least_fp32(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` in float32 when it is narrower (bf16 / fp16 under autocast), unchanged otherwise.

    Numerically delicate steps (log-sigmoid scans, losses) upcast bf16 to float32 but must keep a float64 run
    (``precision="fp64"``) in float64: a cast down to float32 would round away the digits that make fp64 runs
    agree across CPUs.
    """
    return tensor.float() if tensor.is_floating_point() and tensor.element_size() < 4 else tensor
