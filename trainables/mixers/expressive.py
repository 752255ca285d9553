"""Expressive attention (EA), Gros 2024, "Climbing the Complexity Ladder with Expressive Attention", Eq. 2.

a_mk = s_mk / sum_k s_mk with s_mk = z_mk^2 / (1 + z_mk^2): attention is high for parallel AND antiparallel
queries and keys, low for orthogonal ones (invariant under z -> -z). A drop-in replacement for softmax.

Scaling (a choice of this registry, not the paper's): z = <q, k> / sqrt(d_h), the same logits the ``softmax``
mixer uses, so that EA and softmax differ only in the map logits -> weights. (Gros' own head uses beta = 1,
z = <q, k>, and these same weights: ``trainables.gros2024.head``.) Guard: every numerator gets ``EA_EPS`` added, so an
all-orthogonal row (all z = 0) becomes uniform instead of 0/0; for |z| >~ 1e-3 the guard is negligible.
"""

from __future__ import annotations

import math

import torch

from trainables.mixers.base import MIXERS, MultiHeadMixer

EA_EPS = 1e-8  # added to every numerator z^2 / (1 + z^2)


def expressive_weights(z: torch.Tensor, allowed: torch.Tensor | None = None) -> torch.Tensor:
    """EA weights over the last axis from logits z (..., N_q, N_k), over keys where ``allowed`` (True = attend).

    A row with no allowed key is 0 (its sum is clamped; any other row's sum is at least EA_EPS, so unchanged).
    """
    z2 = z.square()
    s = z2 / (1.0 + z2) + EA_EPS  # (..., N_q, N_k)
    if allowed is None:
        return s / s.sum(dim=-1, keepdim=True)
    s = s.masked_fill(~allowed, 0.0)
    return s / s.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(s.dtype).tiny)


@MIXERS.register("expressive")
class ExpressiveAttention(MultiHeadMixer):
    """Multi-head expressive attention; rows lie on the probability simplex like softmax's."""

    def weights(self, q: torch.Tensor, k: torch.Tensor, allowed: torch.Tensor | None = None) -> torch.Tensor:
        z = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (..., H, N, N)
        return expressive_weights(z, allowed)
