"""Geometric attention (Csordás et al. 2021, Sec. 3; docs/csordas2021.md): attend to the *closest* matching key.

Per head, with match probabilities P_ij = sigmoid(l_ij) and the diagonal and the keys not allowed (padding, and
later tokens with ``causal``) masked,

    A_ij = P_ij * prod_{k in S_ij} (1 - P_ik),
    S_ij = {k != i, j : |k - i| < |j - i|}  u  ({i + |j - i|} if j < i),

i.e. keys are scanned outward from i in the order i+1, i-1, i+2, i-2, ... (ties: the right side is
closer). :func:`geometric_weights` computes this in log space with one cumulative sum over the key axis
(no loop over positions); :func:`geometric_weights_reference` is the brute-force definition for tests.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

from trainables.csordas2021.noise import MemberNoise, dropout
from trainables.csordas2021.relative import heads, member_scalar, per_head_bias
from trainables.dtypes import at_least_fp32
from trainables.mixers.base import Mixer, allowed_keys
from trainables.stacked import dense


def _scan_indices(n: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """(hi, lo), each (N, N): sum_{k in S_ij} = C[i, hi_ij] - C[i, lo_ij] (0 where lo_ij < 0)."""
    i = torch.arange(n, device=device).view(n, 1)
    j = torch.arange(n, device=device).view(1, n)
    dist = (i - j).abs()
    hi = (i + dist - (j > i).long()).clamp(max=n - 1)  # (N, N)
    lo = i - dist  # (N, N), may be negative
    return hi, lo


def geometric_weights(logits: torch.Tensor, allowed: torch.Tensor | None, normalize: bool = False) -> torch.Tensor:
    """Geometric attention weights from logits (..., N, N) and the keys each query may attend to, bool
    broadcastable to (..., N, N), True = attend (None: every key; ``trainables.mixers.base.allowed_keys``).

    The diagonal is masked here as well. Computed in at least fp32; returns (..., N, N) with rows summing to <= 1
    (or renormalised to 1 with ``normalize``, the "+ geom. att." baseline).
    """
    n = logits.shape[-1]
    eye = torch.eye(n, dtype=torch.bool, device=logits.device)
    mask = eye if allowed is None else ~allowed | eye  # True = masked
    logits = at_least_fp32(logits)
    log_p = F.logsigmoid(logits).masked_fill(mask, -math.inf)  # log P_ij
    log_not_p = F.logsigmoid(-logits).masked_fill(mask, 0.0)  # log(1 - P_ij); masked keys never block
    cum = log_not_p.cumsum(-1)  # (..., N, N): C[i, k] = sum_{k' <= k} log(1 - P_ik')
    hi, lo = _scan_indices(n, logits.device)
    shape = cum.shape
    c_hi = cum.gather(-1, hi.expand(shape))  # (..., N, N)
    c_lo = cum.gather(-1, lo.clamp(min=0).expand(shape)).masked_fill((lo < 0).expand(shape), 0.0)
    weights = torch.exp(log_p + (c_hi - c_lo))  # (..., N, N); exp(-inf) = 0 on the diagonal and padding
    if normalize:
        weights = weights / weights.sum(-1, keepdim=True).clamp(min=1e-12)
    return weights


def geometric_weights_reference(logits: torch.Tensor, allowed: torch.Tensor | None,
                                normalize: bool = False) -> torch.Tensor:
    """The definition, term by term in float64 (slow; tests only). Same arguments as :func:`geometric_weights`."""
    n = logits.shape[-1]
    p = torch.sigmoid(logits.double())
    if allowed is not None:
        p = p.masked_fill(~allowed, 0.0)
    out = torch.zeros_like(p)
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            d = abs(j - i)
            blockers = [k for k in range(n) if k not in (i, j) and abs(k - i) < d]
            if j < i and i + d < n:
                blockers.append(i + d)
            w = p[..., i, j]
            for k in blockers:
                w = w * (1 - p[..., i, k])
            out[..., i, j] = w
    if normalize:
        out = out / out.sum(-1, keepdim=True).clamp(min=1e-12)
    return out


def _my_init(weight: torch.Tensor, d_model: int, d_head: int) -> None:
    """The release's "MyInit": uniform(+-a), a = sqrt(3) * sqrt(2 / (d + d_h)) (Xavier with per-head fans)."""
    a = math.sqrt(3.0) * math.sqrt(2.0 / (d_model + d_head))
    nn.init.uniform_(weight, -a, a)


class GeometricAttention(Mixer):
    """Multi-head geometric attention with the directional term (docs/csordas2021.md; optional: ``directional``).

    logits_ij = alpha * (q_i + u)^T Drop(k_j) + beta * D_ij + gamma, with D_ij = s_i^right for j > i and
    s_i^left for j < i (a Linear d -> 2 per head), alpha/beta/gamma learned scalars shared by the heads
    (init 1/sqrt(d_h), 1, 0). Attention dropout acts on the key vectors.

    Args:
        d_model: width d. n_heads: heads H. dropout: attention dropout on the keys.
        normalize: row-L1 renormalisation (on for "+ geom. att.", off for NDR).
        directional: with the directional term (the paper's); False: logits_ij = alpha * (q_i + u)^T Drop(k_j) + gamma
            (App. B's ablation, config ``directional``), without the direction layer and beta. The layer is still
            drawn (then discarded), so the other parameters start as the directional model's of the same seed.

    The mixer interface, ``forward(x, mask, causal=..., noise=...)``, over leading dimensions: one model on
    x (B, N, d) or K stacked members on x (K, B, N, d) (``trainables.stacked``); ``noise``: the members' own dropout
    (:mod:`trainables.csordas2021.noise`; None: torch's default generator).
    """

    supports_mask = True
    supports_causal = True

    def __init__(self, d_model: int, n_heads: int, *, dropout: float = 0.0, normalize: bool = False,
                 directional: bool = True) -> None:
        super().__init__(d_model, n_heads)
        self.split_into_heads()
        self.q = nn.Linear(d_model, d_model, bias=False)
        self.kv = nn.Linear(d_model, 2 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)
        direction = nn.Linear(d_model, 2 * n_heads)  # (s_left, s_right) per head, with bias (drawn either way)
        self.direction: nn.Linear | None = direction if directional else None
        self.u = nn.Parameter(torch.zeros(n_heads, 1, self.d_head))
        self.alpha = nn.Parameter(torch.tensor([1.0 / math.sqrt(self.d_head)]))
        self.beta: nn.Parameter | None = nn.Parameter(torch.ones(1)) if directional else None
        self.gamma = nn.Parameter(torch.zeros(1))
        self.dropout = dropout
        self.normalize = normalize
        for w in (self.q.weight, self.out.weight):
            _my_init(w, d_model, self.d_head)
        _my_init(self.kv.weight, d_model, self.d_head)
        self.last_weights: torch.Tensor | None = None
        self.record = False

    if TYPE_CHECKING:  # its call is its forward: the mixer's, with the members' own dropout

        def __call__(self, x: torch.Tensor, mask: torch.Tensor | None = None, *, causal: bool = False,
                     noise: MemberNoise | None = None) -> torch.Tensor: ...

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, *, causal: bool = False,
                noise: MemberNoise | None = None) -> torch.Tensor:
        """x (..., B, N, d), mask (..., B, N) True at real tokens -> (..., B, N, d)."""
        *lead, b, n, d = x.shape
        (q,) = heads(x, self.q, 1, self.n_heads)  # (..., B, H, N, d_h)
        k, v = heads(x, self.kv, 2, self.n_heads)
        k = dropout(k, self.dropout, self.training, noise)  # dropout on the keys
        content = (q + per_head_bias(self.u)) @ k.transpose(-2, -1)  # (..., B, H, N, N)
        logits = member_scalar(self.alpha, content) * content
        if self.direction is not None and self.beta is not None:  # the paper's: with the directional term
            s = dense(x, self.direction).view(*lead, b, n, self.n_heads, 2).transpose(-3, -2)  # (..., B, H, N, 2)
            right = torch.ones(n, n, dtype=torch.bool, device=x.device).triu(1)  # j > i
            directional = torch.where(right, s[..., 1:2], s[..., 0:1])  # (..., B, H, N, N); diagonal masked anyway
            logits = logits + member_scalar(self.beta, content) * directional
        logits = logits + member_scalar(self.gamma, content)  # in the order the directional model always summed
        allowed = allowed_keys(mask, causal, n, x.device)  # (..., B, 1, 1, N), (N, N), (..., B, 1, N, N) or None
        a = geometric_weights(logits, allowed, self.normalize).to(v.dtype)  # (..., B, H, N, N)
        if self.record:
            self.last_weights = a.detach()
        o = (a @ v).transpose(-3, -2).reshape(*lead, b, n, d)  # (..., B, N, d), heads concatenated
        return dense(o, self.out)
