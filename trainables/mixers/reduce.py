"""Reduce-broadcast mixers (sum, max, mean): pool over the sequence and give every token the result.

No projections and no parameters (Richter & Wattenhofer 2020, Sec. 4 "sum" and "max"; mean is the Fig. 1
reference aggregator). ``n_heads``, ``hidden_norm``, ``attention_gelu`` and ``dropout`` are accepted for the
common interface and ignored (the block still applies dropout to the mixer output).
"""

from __future__ import annotations

import torch

from trainables.mixers.base import MIXERS, Mixer


@MIXERS.register("sum")
class SumPooling(Mixer):
    """o_i = sum_j x_j for every token i."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=1, keepdim=True).expand_as(x)  # (B, 1, d) -> (B, N, d)


@MIXERS.register("max")
class MaxPooling(Mixer):
    """o_i = elementwise max_j x_j for every token i."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.amax(dim=1, keepdim=True).expand_as(x)  # (B, 1, d) -> (B, N, d)


@MIXERS.register("mean")
class MeanPooling(Mixer):
    """o_i = (1/N) sum_j x_j for every token i."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=1, keepdim=True).expand_as(x)  # (B, 1, d) -> (B, N, d)
