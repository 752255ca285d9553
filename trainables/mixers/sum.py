"""Sum pooling, Richter & Wattenhofer 2020, Sec. 4: every token receives the sum of all tokens.

No projections and no parameters; ``n_heads``, ``hidden_norm``, ``attention_gelu`` and ``dropout`` are
accepted for the common interface and ignored (the block still applies dropout to the mixer output).
With a key-padding mask: the sum over the real tokens; with ``causal``: over j <= i (a cumulative sum).
"""

from __future__ import annotations

import torch

from trainables.mixers.base import MIXERS, Mixer, token_sum


@MIXERS.register("sum")
class SumPooling(Mixer):
    """o_i = sum_j x_j for every token i."""

    supports_mask = True
    supports_causal = True

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, *, causal: bool = False) -> torch.Tensor:
        return token_sum(x, mask, causal).expand_as(x)  # (..., B, 1 or N, d) -> (..., B, N, d)
