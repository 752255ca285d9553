"""Sum pooling, Richter & Wattenhofer 2020, Sec. 4: every token receives the sum of all tokens.

No projections and no parameters; ``n_heads``, ``hidden_norm``, ``attention_gelu`` and ``dropout`` are
accepted for the common interface and ignored (the block still applies dropout to the mixer output).
"""

from __future__ import annotations

import torch

from trainables.mixers.base import MIXERS, Mixer


@MIXERS.register("sum")
class SumPooling(Mixer):
    """o_i = sum_j x_j for every token i."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=-2, keepdim=True).expand_as(x)  # (..., B, 1, d) -> (..., B, N, d)
