"""Softmax dot-product attention (BERT, MTE): o = softmax(Q K^T / sqrt(d_h)) V (Vaswani et al. 2017).

:func:`softmax_weights` is the project's one masked softmax: the CTL models' relative attention and Gros'
DPA head use it too.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from trainables.mixers.base import MIXERS, MultiHeadMixer, no_key_to_zero


def softmax_weights(logits: torch.Tensor, allowed: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the key axis of logits (..., N_q, N_k), only over keys where ``allowed`` (True = attend).

    Masked logits become the dtype's lowest finite value, not -inf: exp of it is exactly 0 next to any real
    logit, and a row with no allowed key gives no NaN (forward or backward); such a row is set to 0.
    """
    if allowed is None:
        return logits.softmax(dim=-1)
    a = logits.masked_fill(~allowed, torch.finfo(logits.dtype).min).softmax(dim=-1)
    return no_key_to_zero(a, allowed)


@MIXERS.register("softmax")
class SoftmaxAttention(MultiHeadMixer):
    """Multi-head softmax attention; weights lie on the probability simplex (each row sums to 1)."""

    def weights(self, q: torch.Tensor, k: torch.Tensor, allowed: torch.Tensor | None = None) -> torch.Tensor:
        logits = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (..., H, N, N)
        return softmax_weights(logits, allowed)  # softmax over the key axis

    def pool(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
             allowed: torch.Tensor | None = None) -> torch.Tensor:
        # The fused kernel computes exactly softmax(QK^T/sqrt(d_h)) V (its default scale), with dropout on the
        # attention probabilities as in BERT; its bool mask means True = attend, and a query with no key gets 0.
        # Leading dims are flattened into one batch (a view): the CPU flash kernel takes 4-D inputs only.
        p = self.dropout if self.training else 0.0
        *lead, h, n, dh = q.shape
        mask = None if allowed is None else allowed.expand(*lead, 1, n, n).reshape(-1, 1, n, n)  # (prod(...), 1, N, N)
        o = F.scaled_dot_product_attention(q.reshape(-1, h, n, dh), k.reshape(-1, h, n, dh),
                                           v.reshape(-1, h, n, dh), attn_mask=mask, dropout_p=p)  # (prod, H, N, d_h)
        return o.view(q.shape)  # (..., H, N, d_h)
