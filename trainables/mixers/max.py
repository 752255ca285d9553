"""Max pooling, Richter & Wattenhofer 2020, Sec. 4: every token receives the elementwise max of all tokens.

No projections and no parameters; ``n_heads``, ``hidden_norm``, ``attention_gelu`` and ``dropout`` are
accepted for the common interface and ignored (the block still applies dropout to the mixer output).
With a key-padding mask: the max over the real tokens; with ``causal``: over j <= i (a running max); 0 for a
token that sees none.
"""

from __future__ import annotations

import torch

from trainables.mixers.base import MIXERS, Mixer, token_max


@MIXERS.register("max")
class MaxPooling(Mixer):
    """o_i = elementwise max_j x_j for every token i."""

    supports_mask = True
    supports_causal = True

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, *, causal: bool = False) -> torch.Tensor:
        return token_max(x, mask, causal).expand_as(x)  # (..., B, 1 or N, d) -> (..., B, N, d)
