"""Linear attention (Katharopoulos et al. 2020, "Transformers are RNNs"), one of the attention alternatives the
zoology line of work compares on associative recall.

Weights a_ij = phi(q_i) . phi(k_j) / sum_j' phi(q_i) . phi(k_j') with the feature map phi(x) = elu(x) + 1 > 0, over
the keys a token may see. Written here in its quadratic form (the weights as a matrix), which honours a padding mask
and causality exactly as the registry's other attentions do; the linear-time recurrence is the same numbers.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from trainables.mixers.base import MIXERS, MultiHeadMixer, no_key_to_zero


def feature_map(x: torch.Tensor) -> torch.Tensor:
    """phi(x) = elu(x) + 1: positive, so every weight is >= 0 and every row sums to 1."""
    return F.elu(x) + 1.0


@MIXERS.register("linear_attention")
class LinearAttention(MultiHeadMixer):
    """Multi-head linear attention with the elu + 1 feature map; masks and causality through ``allowed``."""

    def weights(self, q: torch.Tensor, k: torch.Tensor, allowed: torch.Tensor | None = None) -> torch.Tensor:
        s = feature_map(q) @ feature_map(k).transpose(-2, -1)  # (..., H, N, N), every entry > 0
        if allowed is not None:
            s = s.masked_fill(~allowed, 0.0)  # a key a token may not see gets weight 0
        a = s / s.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(s.dtype).tiny)
        return no_key_to_zero(a, allowed)
