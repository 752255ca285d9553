"""Max pooling, Richter & Wattenhofer 2020, Sec. 4: every token receives the elementwise max of all tokens.

No projections and no parameters; ``n_heads``, ``hidden_norm``, ``attention_gelu`` and ``dropout`` are
accepted for the common interface and ignored (the block still applies dropout to the mixer output).
"""

from __future__ import annotations

import torch

from trainables.mixers.base import MIXERS, Mixer


@MIXERS.register("max")
class MaxPooling(Mixer):
    """o_i = elementwise max_j x_j for every token i."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.amax(dim=-2, keepdim=True).expand_as(x)  # (..., B, 1, d) -> (..., B, N, d)
