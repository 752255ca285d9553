"""Normalized attention pooling (NAP), Richter & Wattenhofer 2020, Eq. 1.

The logits l = <q, k> (NOT divided by sqrt(d_h): the normalisation makes the scale irrelevant) are
normalised over the key axis, a = g * (l - mean) / (std + 1e-3) + b, with ONE scalar gain g and bias b per
head (init 1 and 0) so the mixer does not depend on the sequence length. std is the population std.

Without attention dropout the weighting is computed without the N x N matrix, exactly (up to rounding):
with centred keys k~_j = k_j - mean_j k_j, l_ij - mean_i = q_i . k~_j, so
var_i = q_i^T (K~^T K~ / N) q_i and sum_j (l_ij - mean_i) v_j = q_i^T (K~^T V); hence
o_i = g * q_i^T (K~^T V) / (std_i + 1e-3) + b * sum_j v_j, O(N d_h^2) instead of O(N^2 d_h).

With a key-padding mask or ``causal`` the mean and std are over the keys a query may attend to, and the other
keys get weight 0 (also the bias b); that path computes the N x N weights explicitly.
"""

from __future__ import annotations

import torch
from torch import nn

from trainables.mixers.base import MIXERS, MultiHeadMixer, per_head

NORMALIZE_EPS = 1e-3  # added to the std, as in the authors' release


@MIXERS.register("normalized")
class NormalizedAttention(MultiHeadMixer):
    """Multi-head attention whose weights are the per-row standardised logits, scaled by g and shifted by b."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        *,
        hidden_norm: bool = False,
        attention_gelu: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__(d_model, n_heads, hidden_norm=hidden_norm, attention_gelu=attention_gelu, dropout=dropout)
        self.gain = nn.Parameter(torch.ones(n_heads))  # (H,) one scalar per head
        self.bias = nn.Parameter(torch.zeros(n_heads))  # (H,)

    def bias_share(self) -> torch.Tensor:
        """|b| / (|g| + |b|) per head, (H,) or stacked (K, H): how much of the token weights g z + b (z: logits
        standardised over the keys, unit variance) is the bias, the same for every key (1: sum pooling, 0: pure
        normalised attention). 0 where g and b are both 0 (b is, and the denominator is kept above 0)."""
        g, b = self.gain.detach().abs(), self.bias.detach().abs()
        return b / (g + b).clamp_min(torch.finfo(b.dtype).tiny)

    def weights(self, q: torch.Tensor, k: torch.Tensor, allowed: torch.Tensor | None = None) -> torch.Tensor:
        logits = q @ k.transpose(-2, -1)  # (..., H, N, N)
        g, b = per_head(self.gain), per_head(self.bias)
        if allowed is None:
            std, mean = torch.std_mean(logits, dim=-1, correction=0, keepdim=True)  # (..., H, N, 1) each
            return g * (logits - mean) / (std + NORMALIZE_EPS) + b
        # Mean and population std over the allowed keys only; keys not allowed get weight 0 (not the bias b).
        count = allowed.to(logits.dtype).sum(dim=-1, keepdim=True).clamp_min(1)  # (..., N, 1)
        mean = logits.masked_fill(~allowed, 0.0).sum(dim=-1, keepdim=True) / count  # (..., H, N, 1)
        centred = (logits - mean).masked_fill(~allowed, 0.0)  # (..., H, N, N)
        var = centred.square().sum(dim=-1, keepdim=True) / count
        std = var.clamp_min(torch.finfo(var.dtype).tiny).sqrt()  # a one-key row: var 0, a finite gradient
        return (g * centred / (std + NORMALIZE_EPS) + b).masked_fill(~allowed, 0.0)

    def pool(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
             allowed: torch.Tensor | None = None) -> torch.Tensor:
        n = q.shape[-2]
        if (self.training and self.dropout > 0) or self.d_head > n or allowed is not None:
            return super().pool(q, k, v, allowed)  # explicit weights (..., H, N, N)
        kc = k - k.mean(dim=-2, keepdim=True)  # (..., H, N, d_h) centred keys
        cov = kc.transpose(-2, -1) @ kc * (1.0 / n)  # (..., H, d_h, d_h)
        var = ((q @ cov) * q).sum(dim=-1, keepdim=True)  # (..., H, N, 1) population variance of the logits
        std = var.clamp_min(0).sqrt()  # (..., H, N, 1)
        kv = kc.transpose(-2, -1) @ v  # (..., H, d_h, d_h)
        g, b = per_head(self.gain), per_head(self.bias)
        return g * (q @ kv) / (std + NORMALIZE_EPS) + b * v.sum(dim=-2, keepdim=True)  # (..., H, N, d_h)
