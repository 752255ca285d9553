"""No online logit normalisation (NON), Richter & Wattenhofer 2020, Sec. 4.

The scaled logits l / sqrt(d_h) are used directly as weights, and the LayerNorm on the head outputs is
replaced by a division by sqrt(N): o = (1/sqrt(N)) sum_j (l_ij / sqrt(d_h)) v_j. As in the authors'
release the 1/sqrt(N) scaling is always applied (``hidden_norm`` is ignored: NON never has that LN). With a
key-padding mask or ``causal``, N is the number of keys each query may attend to (the real tokens, or those up
to the query), so a padded sequence gives its real tokens what the unpadded one gives them.
"""

from __future__ import annotations

import math

import torch

from trainables.mixers.base import MIXERS, MultiHeadMixer


@MIXERS.register("no_norm")
class NoNormAttention(MultiHeadMixer):
    """Multi-head attention with raw scaled logits as weights, head outputs divided by sqrt(N)."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        *,
        hidden_norm: bool = False,
        attention_gelu: bool = False,
        dropout: float = 0.0,
    ) -> None:
        # hidden_norm is deliberately dropped: NON replaces the head-output LN by the 1/sqrt(N) scaling.
        super().__init__(d_model, n_heads, hidden_norm=False, attention_gelu=attention_gelu, dropout=dropout)

    def weights(self, q: torch.Tensor, k: torch.Tensor, allowed: torch.Tensor | None = None) -> torch.Tensor:
        logits = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (..., H, N, N)
        return logits if allowed is None else logits.masked_fill(~allowed, 0.0)

    def pool(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
             allowed: torch.Tensor | None = None) -> torch.Tensor:
        n = q.shape[-2]
        if allowed is not None:  # N is each query's number of allowed keys (>= 1 against a division by 0)
            count = allowed.to(q.dtype).sum(dim=-1, keepdim=True).clamp_min(1)  # (..., N, 1)
            return super().pool(q, k, v, allowed) * count.rsqrt()  # (..., H, N, d_h)
        if (self.training and self.dropout > 0) or self.d_head > n:
            return super().pool(q, k, v) * (1.0 / math.sqrt(n))  # explicit weights, (..., H, N, d_h)
        # Without dropout the weighting is linear, so (Q K^T) V = Q (K^T V): O(N d_h^2) instead of O(N^2 d_h).
        kv = k.transpose(-2, -1) @ v  # (..., H, d_h, d_h)
        return (q @ kv) * (1.0 / math.sqrt(self.d_head * n))  # (..., H, N, d_h)
