"""Mean pooling: every token receives the mean of all tokens (the reference aggregator of Richter &
Wattenhofer 2020, Fig. 1).

No projections and no parameters; ``n_heads``, ``hidden_norm``, ``attention_gelu`` and ``dropout`` are
accepted for the common interface and ignored (the block still applies dropout to the mixer output).
"""

from __future__ import annotations

import torch

from trainables.mixers.base import MIXERS, Mixer


@MIXERS.register("mean")
class MeanPooling(Mixer):
    """o_i = (1/N) sum_j x_j for every token i."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=-2, keepdim=True).expand_as(x)  # (..., B, 1, d) -> (..., B, N, d)
