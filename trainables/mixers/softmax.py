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
        logits = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (..., H, N, N)
        return logits.softmax(dim=-1)  # softmax over the key axis

    def pool(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        # No mask, so the fused kernel computes exactly softmax(QK^T/sqrt(d_h)) V (its default scale), with
        # dropout on the attention probabilities as in BERT. Leading dims are flattened into one batch (a view):
        # the CPU flash kernel takes 4-D inputs only.
        p = self.dropout if self.training else 0.0
        h, n, dh = q.shape[-3:]
        o = F.scaled_dot_product_attention(q.reshape(-1, h, n, dh), k.reshape(-1, h, n, dh),
                                           v.reshape(-1, h, n, dh), dropout_p=p)  # (prod(...), H, N, d_h)
        return o.view(q.shape)  # (..., H, N, d_h)
