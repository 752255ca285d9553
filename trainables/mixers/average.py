"""Average attention (Yun et al. 2020, App. D, arXiv:1912.10077): the baseline that rules out "too easy".

Softmax attention with the attention matrix replaced by a constant 1/N: every token receives the mean of
the projected value vectors of all tokens, ``o_i = W_O LN?(GELU?(1/N sum_j W_V x_j))``. There are no
queries or keys (nothing would use them), so the mixer has the value and output projections only (2 d^2 + 2d
parameters); heads make no difference to a constant weighting and ``n_heads`` is ignored. The architecture's
hidden LayerNorm and GELU (MTE) sit before W_O as in every multi-head mixer. ``dropout`` is ignored: a
dropout mask on a constant matrix would need the N x N matrix (the block still drops the mixer output).
With a key-padding mask the mean runs over the real tokens; with ``causal`` token i gets the mean over j <= i
(weights 1/(i+1), a running mean).
"""

from __future__ import annotations

import torch
from torch import nn

from trainables.mixers.base import MIXERS, Mixer, token_mean
from trainables.stacked import dense


@MIXERS.register("average")
class AverageAttention(Mixer):
    """o_i = W_O (mean_j W_V x_j) for every token i (attention weights all 1/N)."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        *,
        hidden_norm: bool = False,
        attention_gelu: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__(d_model, n_heads)
        self.value = nn.Linear(d_model, d_model)  # W_V
        self.init_output(hidden_norm=hidden_norm, attention_gelu=attention_gelu)

    supports_mask = True
    supports_causal = True
    #: Its weights are 1/N over the keys it sees (what the probes read: trainables.probes.mixer_weights).
    uniform_weights = True

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, *, causal: bool = False) -> torch.Tensor:
        # mean_j (W_V x_j + b) = W_V mean_j x_j + b: average first, then project one vector per sequence.
        o = dense(token_mean(x, mask, causal), self.value)  # (..., B, 1, d), or (..., B, N, d) causal
        return self.output(o).expand_as(x)  # (..., B, 1 or N, d) -> (..., B, N, d)
