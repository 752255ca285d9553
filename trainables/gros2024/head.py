"""Gros 2024's attention head, written over the mixer interface and the registry's weight maps.

One head (H = 1), queries / keys / values with their own matrix per context position (``per_token``) or one
shared matrix, optional biases, no output projection, and the logits z_ts = Q_t . K_s WITHOUT 1/sqrt(d):

    DPA: a = softmax(beta z)        EA (Eq. 2): a = expressive_weights(z)

the same masked maps the registry's ``softmax`` and ``expressive`` mixers use
(:func:`trainables.mixers.softmax.softmax_weights`, :func:`trainables.mixers.expressive.expressive_weights`),
so the head differs from them only in its parameterisation and scaling. It is called like every mixer,
``head(x, mask, causal=True)`` (the bilayer passes ``causal=True``), and written over leading dimensions: K
members (seeds) are stacked by :func:`trainables.stacked.stack_modules` like a registry mixer.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import nn

from trainables.mixers.base import Mixer, allowed_keys
from trainables.mixers.expressive import expressive_weights
from trainables.mixers.softmax import softmax_weights

HEAD_ATTENTIONS = ("dpa", "ea")


class PaperHead(Mixer):
    """Gros' single causal head; parameters are given (the bilayer draws them with its other weights).

    Args:
        params: ``wq``, ``wk``, ``wv`` ((T, d, d) per token or (d, d) shared, x @ w) and, with biases, ``bq``,
            ``bk``, ``bv`` (d,).
        attention: ``dpa`` (softmax of beta z) or ``ea`` (expressive attention).
        beta: DPA's inverse temperature.
        per_token: whether the matrices have a per-position axis T.
    """

    supports_mask = True
    supports_causal = True

    def __init__(self, params: Mapping[str, torch.Tensor], *, attention: str, beta: float, per_token: bool) -> None:
        d = params["wq"].shape[-1]
        super().__init__(d, 1)
        if attention not in HEAD_ATTENTIONS:
            raise ValueError(f"invalid attention={attention!r}; allowed: {', '.join(HEAD_ATTENTIONS)}")
        self.attention, self.beta, self.per_token = attention, beta, per_token
        self.bias = "bq" in params
        for name, value in params.items():
            setattr(self, name, nn.Parameter(value.clone()))

    def _project(self, x: torch.Tensor, name: str) -> torch.Tensor:
        """Q, K or V (``name`` q, k, v): x (..., B, T, d) -> (..., B, 1, T, d), one head axis."""
        w = getattr(self, f"w{name}")  # (..., T, d, d) or (..., d, d)
        out = torch.einsum("...bti,...tij->...btj" if self.per_token else "...bti,...ij->...btj", x, w)
        if self.bias:
            out = out + getattr(self, f"b{name}")[..., None, None, :]  # (..., d) -> (..., 1, 1, d)
        return out.unsqueeze(-3)  # (..., B, 1, T, d)

    def attention_weights(self, x: torch.Tensor, mask: torch.Tensor | None = None, *,
                          causal: bool = False) -> torch.Tensor:
        """Attention weights (..., B, 1, T, T) on x (..., B, T, d), as the registry mixers' (one head)."""
        q, k = self._project(x, "q"), self._project(x, "k")
        z = q @ k.transpose(-2, -1)  # (..., B, 1, T, T), z_ts = Q_t . K_s
        allowed = allowed_keys(mask, causal, x.shape[-2], x.device)
        if self.attention == "dpa":
            return softmax_weights(self.beta * z, allowed)
        return expressive_weights(z, allowed)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, *, causal: bool = False) -> torch.Tensor:
        a = self.attention_weights(x, mask, causal=causal)  # (..., B, 1, T, T)
        return (a @ self._project(x, "v")).squeeze(-3)  # (..., B, T, d), no output projection
