"""Bilinear projection over the sequence axis (Yun et al. 2020, Sec. 5.1, arXiv:1912.10077).

``BProj(X) = W_O X W_P``: a learned N x N matrix W_P mixes the tokens (the same for every input), then the
d x d output projection W_O, inside the usual residual + LayerNorm of the attention sub-layer. In the
(B, N, d) layout of this project: ``o = mix(W_P @ x)`` with ``W_P`` (N, N).

The parameters depend on the sequence length, so a model with this mixer runs only at the length it was
built for: a different input length raises ValueError, and configs must validate at the training length
(``val_seq_len = seq_len``; :class:`trainables.richter2020.config.TrainConfig` enforces it).

Choices the paper leaves open: W_P starts as a truncated normal with std 1/sqrt(N) (cut at 2 std; the output
of a token keeps the input's variance); the architecture's hidden LayerNorm and GELU (MTE) sit before W_O as
in every multi-head mixer; ``dropout`` drops entries of W_P while training (it plays the attention matrix's
role, where BERT applies its attention-probs dropout). ``n_heads`` is ignored (there are no heads).

A key-padding mask zeroes the padded tokens before mixing (their columns of W_P then add nothing); ``causal``
keeps the lower triangle of W_P (token i mixes j <= i).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from trainables.mixers.base import MIXERS, Mixer
from trainables.stacked import mix_tokens


@MIXERS.register("bilinear")
class BilinearProjection(Mixer):
    """Token mixing by one learned N x N matrix, then a d x d output projection.

    Args:
        d_model: model width d.
        n_heads: ignored (kept for the common interface).
        seq_len: the sequence length N the N x N matrix is built for (required).
        hidden_norm: LayerNorm on the mixed tokens before the output projection (MTE).
        attention_gelu: GELU before the output projection (MTE).
        dropout: dropout on the entries of the N x N matrix while training.
    """

    #: The model builder passes ``seq_len`` to mixers that set this (their parameters depend on N).
    fixed_length = True

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        *,
        seq_len: int | None = None,
        hidden_norm: bool = False,
        attention_gelu: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__(d_model, n_heads)
        if seq_len is None or seq_len < 1:
            raise ValueError(f"invalid seq_len={seq_len!r} for mixer 'bilinear'; allowed: a positive integer "
                             "(its N x N token-mixing matrix is built for one sequence length)")
        self.seq_len = seq_len
        self.seq_weight = nn.Parameter(torch.empty(seq_len, seq_len))  # (N_out, N_in)
        std = 1.0 / math.sqrt(seq_len)
        nn.init.trunc_normal_(self.seq_weight, std=std, a=-2 * std, b=2 * std)
        self.init_output(hidden_norm=hidden_norm, attention_gelu=attention_gelu)
        self.dropout = dropout

    def check_length(self, n: int) -> None:
        """ValueError unless ``n`` is the length this mixer was built for."""
        if n != self.seq_len:
            raise ValueError(
                f"invalid sequence length {n} for mixer 'bilinear'; allowed: {self.seq_len} (the length its "
                "N x N matrix was built for; validate at the training length: val_seq_len = seq_len)"
            )

    supports_mask = True
    supports_causal = True

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, *, causal: bool = False) -> torch.Tensor:
        self.check_length(x.shape[-2])
        w: torch.Tensor = self.seq_weight  # (N, N), or (K, N, N) stacked
        if self.training and self.dropout > 0:
            w = F.dropout(w, self.dropout)
        if causal:
            w = w.tril()  # W_P[i, j] = 0 for j > i
        if mask is not None:
            x = x.masked_fill(~mask[..., None], 0.0)  # the columns of padded tokens mix nothing in
        return self.output(mix_tokens(w, x))  # (..., B, N, d)
