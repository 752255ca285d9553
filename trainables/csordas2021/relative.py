"""Transformer-XL-style relative attention of the "+ rel" rows (Csordás et al. 2021; docs/csordas2021.md).

Written over leading dimensions like the registry mixers (``trainables.stacked``): one model on x (B, N, d), or K
members stacked by :func:`trainables.stacked.stack_modules` on x (K, B, N, d) with every parameter (K, ...).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
from torch import nn

from trainables.csordas2021.noise import OFFSETS, MemberNoise, dropout
from trainables.mixers.base import Mixer, allowed_keys
from trainables.mixers.softmax import softmax_weights
from trainables.stacked import dense, member_view


def sinusoid(positions: torch.Tensor, d_model: int) -> torch.Tensor:
    """Sinusoidal encodings (P, d) of (possibly negative) positions: sin on even dims, cos on odd, base 1e4."""
    device = positions.device  # the relative offsets live on the model's device (a CPU `inv` would not mix)
    dtype = torch.get_default_dtype()  # float32, or float64 in an fp64 run
    inv = torch.exp(torch.arange(0, d_model, 2, dtype=dtype, device=device) * (-math.log(10000.0) / d_model))
    angles = positions.to(dtype).view(-1, 1) * inv.view(1, -1)  # (P, d/2)
    pe = torch.zeros(positions.numel(), d_model, device=device)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles[:, : d_model // 2])
    return pe


def member_scalar(p: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """A learned scalar, (1,) for one model or (K, 1) stacked, shaped to broadcast against ``like`` (K, ...)."""
    return p if p.dim() == 1 else member_view(p, like.dim())


def per_head_bias(p: torch.Tensor) -> torch.Tensor:
    """A per-head bias (H, 1, d_h), or stacked (K, H, 1, d_h), shaped to broadcast against (..., B, H, N, d_h)."""
    return p if p.dim() == 3 else p.unsqueeze(1)  # (K, 1, H, 1, d_h)


def heads(x: torch.Tensor, layer: nn.Linear, parts: int, n_heads: int) -> tuple[torch.Tensor, ...]:
    """The ``parts`` projections of one linear layer, each (..., B, H, N, d_h): views of one (..., B, N, parts * d)."""
    *lead, b, n, d = x.shape
    y = dense(x, layer).view(*lead, b, n, parts, n_heads, d // n_heads)  # (..., B, N, parts, H, d_h)
    return y.movedim(-3, 0).transpose(-3, -2).unbind(0)  # parts x (..., B, H, N, d_h)


class RelativeAttention(Mixer):
    """Relative attention, optionally with the per-head abs/rel switch (docs/csordas2021.md).

    logits_ij = s * [(q_i + u)^T Drop(k_j) + (q_i + v)^T Drop(W_r PE(j - i))], s learned (init 1/sqrt(d_h)),
    weighted by the registry's masked softmax. With ``abs_gate`` the position term is
    r_i * rel + (1 - r_i) * (q_i + v)^T W_r PE(j) with r_i = sigmoid(w_r^T x_i + b_r) per head.

    The mixer interface, ``forward(x, mask, causal=..., noise=...)``; ``noise``: the members' own dropout
    (:mod:`trainables.csordas2021.noise`; None: torch's default generator).
    """

    supports_mask = True
    supports_causal = True

    def __init__(self, d_model: int, n_heads: int, *, dropout: float = 0.0, abs_gate: bool = False) -> None:
        super().__init__(d_model, n_heads)
        self.split_into_heads()
        self.q = nn.Linear(d_model, d_model, bias=False)
        self.kv = nn.Linear(d_model, 2 * d_model, bias=False)
        self.r = nn.Linear(d_model, d_model, bias=False)
        self.out = nn.Linear(d_model, d_model)
        for w in (self.q.weight, self.kv.weight, self.r.weight):
            nn.init.xavier_uniform_(w)
        self.u = nn.Parameter(torch.zeros(n_heads, 1, self.d_head))
        self.v = nn.Parameter(torch.zeros(n_heads, 1, self.d_head))
        self.scale = nn.Parameter(torch.tensor([1.0 / math.sqrt(self.d_head)]))
        self.abs_switch = nn.Linear(d_model, n_heads) if abs_gate else None
        self.dropout = dropout
        self.record = False
        self.last_weights: torch.Tensor | None = None

    def positions(self, n: int, like: torch.Tensor, noise: MemberNoise | None) -> torch.Tensor:
        """Drop(W_r PE(o)) for the 2N - 1 offsets o = -(N-1)..N-1 per head: (H, 2N-1, d_h), stacked
        (K, 1, H, 2N-1, d_h)."""
        lead, d = like.shape[:-3], self.d_model
        offsets = torch.arange(-(n - 1), n, device=like.device)  # relative offsets j - i
        pe = sinusoid(offsets, d).to(like.device, like.dtype)  # (2N-1, d)
        r = dropout(dense(pe.expand(*lead, 2 * n - 1, d), self.r), self.dropout, self.training, noise, OFFSETS)
        r = r.view(*lead, 2 * n - 1, self.n_heads, self.d_head).transpose(-3, -2)  # (..., H, 2N-1, d_h)
        return r if not lead else r.unsqueeze(1)

    if TYPE_CHECKING:  # its call is its forward: the mixer's, with the members' own dropout

        def __call__(self, x: torch.Tensor, mask: torch.Tensor | None = None, *, causal: bool = False,
                     noise: MemberNoise | None = None) -> torch.Tensor: ...

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, *, causal: bool = False,
                noise: MemberNoise | None = None) -> torch.Tensor:
        """x (..., B, N, d), mask (..., B, N) True at real tokens -> (..., B, N, d)."""
        *lead, b, n, d = x.shape
        h = self.n_heads
        (q,) = heads(x, self.q, 1, h)  # (..., B, H, N, d_h)
        k, v = heads(x, self.kv, 2, h)
        k = dropout(k, self.dropout, self.training, noise)
        r = self.positions(n, x, noise)
        content = (q + per_head_bias(self.u)) @ k.transpose(-2, -1)  # (..., B, H, N, N)
        position = (q + per_head_bias(self.v)) @ r.transpose(-2, -1)  # (..., B, H, N, 2N-1)
        i = torch.arange(n, device=x.device).view(n, 1)
        j = torch.arange(n, device=x.device).view(1, n)
        rel = position.gather(-1, (j - i + n - 1).expand(*lead, b, h, n, n))  # (..., B, H, N, N), offset j - i
        if self.abs_switch is not None:
            absolute = position.gather(-1, (j + n - 1).expand(*lead, b, h, n, n))  # (..., B, H, N, N), position j
            gate = torch.sigmoid(dense(x, self.abs_switch)).transpose(-2, -1).unsqueeze(-1)  # (..., B, H, N, 1)
            rel = gate * rel + (1 - gate) * absolute
        logits = member_scalar(self.scale, rel) * (content + rel)
        a = softmax_weights(logits, allowed_keys(mask, causal, n, x.device))  # (..., B, H, N, N)
        if self.record:
            self.last_weights = a.detach()
        return dense((a @ v).transpose(-3, -2).reshape(*lead, b, n, d), self.out)
