"""Mean pooling: every token receives the mean of all tokens (the reference aggregator of Richter &
Wattenhofer 2020, Fig. 1).

No projections and no parameters; ``n_heads``, ``hidden_norm``, ``attention_gelu`` and ``dropout`` are
accepted for the common interface and ignored (the block still applies dropout to the mixer output).
With a key-padding mask: the mean over the real tokens; with ``causal``: over j <= i (a running mean); 0 for a
token that sees none.
"""

from __future__ import annotations

import torch

from trainables.mixers.base import MIXERS, Mixer, token_mean


@MIXERS.register("mean")
class MeanPooling(Mixer):
    """o_i = (1/N) sum_j x_j for every token i."""

    supports_mask = True
    supports_causal = True
    #: Its weights are 1/N over the keys it sees (what the probes read: trainables.probes.mixer_weights).
    uniform_weights = True

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, *, causal: bool = False) -> torch.Tensor:
        return token_mean(x, mask, causal).expand_as(x)  # (..., B, 1 or N, d) -> (..., B, N, d)
