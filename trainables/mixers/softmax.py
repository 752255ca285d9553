"""Softmax dot-product attention (BERT, MTE): o = softmax(Q K^T / sqrt(d_h)) V (Vaswani et al. 2017)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from trainables.mixers.base import MIXERS, MultiHeadMixer


@MIXERS.register("softmax")
class SoftmaxAttention(MultiHeadMixer):
    """Multi-head softmax attention; weights lie on the probability simplex (each row sums to 1)."""

    def weights(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        logits = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (B, H, N, N)
        return logits.softmax(dim=-1)  # (B, H, N, N), softmax over the key axis

    def pool(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        # No mask, so the fused kernel computes exactly softmax(QK^T/sqrt(d_h)) V (its default scale),
        # with dropout on the attention probabilities as in BERT.
        p = self.dropout if self.training else 0.0
        return F.scaled_dot_product_attention(q, k, v, dropout_p=p)  # (B, H, N, d_h)
