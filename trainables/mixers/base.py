"""The interface every token mixer implements (the "pooling" sub-module of a Transformer layer).

A mixer maps ``(..., B, N, d) -> (..., B, N, d)`` and is built as ``Mixer(d_model, n_heads, *, hidden_norm,
attention_gelu, dropout, **options)``; ``options`` are settings only some mixers take (``seq_len``,
``conv_width``): :func:`trainables.mixers.build_mixer` passes a mixer those its constructor names. Multi-head
mixers own the query/key/value projections and the mixing linear (Richter & Wattenhofer 2020, Sec. 2 and
App. C); reduce mixers (sum, max, mean) have no parameters.

**Leading dimensions.** The leading ``...`` is empty for one model and ``K`` for K members stacked by
:func:`trainables.stacked.stack_modules` (every parameter then has a leading K axis too). A mixer is written
once for both: layers through :func:`~trainables.stacked.dense` / :func:`~trainables.stacked.norm`, tensors
indexed from the right (``dim=-2`` is the token axis), per-head parameters broadcast with
``p[..., None, :, None, None]``. That one definition is what trains solo and packed.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from trainables.registry import Registry
from trainables.stacked import dense, norm

MIXERS: Registry[type[Mixer]] = Registry("mixer")
LN_EPS = 1e-3  # every LayerNorm of the encoder (the Keras default of the authors' release)


class Mixer(nn.Module):
    """Base class: token mixing ``(..., B, N, d) -> (..., B, N, d)``."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        *,
        hidden_norm: bool = False,
        attention_gelu: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.d_model = d_model
        self.n_heads = n_heads

    def init_output(self, *, hidden_norm: bool, attention_gelu: bool) -> None:
        """Create the output step that projecting mixers share: [LayerNorm] -> [GELU] -> mixing linear W_O.

        Called where the subclass creates W_O, so that parameter creation (and init RNG) order stays put.
        """
        self.mix = nn.Linear(self.d_model, self.d_model)  # W_O
        self.hidden_norm = nn.LayerNorm(self.d_model, eps=LN_EPS) if hidden_norm else None
        self.attention_gelu = attention_gelu

    def output(self, o: torch.Tensor) -> torch.Tensor:
        """The output step on mixed tokens (..., d): [hidden LayerNorm (MTE)] -> [GELU (MTE)] -> W_O."""
        if self.hidden_norm is not None:
            o = norm(o, self.hidden_norm)
        if self.attention_gelu:
            o = F.gelu(o, approximate="tanh")
        return dense(o, self.mix)


class MultiHeadMixer(Mixer):
    """Multi-head "attention" skeleton: projections -> per-head pooling -> [LN] -> [GELU] -> mixing linear.

    Subclasses implement :meth:`weights` (the attention weights from queries and keys) and may override
    :meth:`pool`. ``dropout`` is applied to the attention weights (BERT's attention-probs dropout).

    Args:
        d_model: model width d; d_h = d / n_heads per head.
        n_heads: number of heads M.
        hidden_norm: MTE's LayerNorm on the concatenated head outputs before the mixing linear.
        attention_gelu: MTE's GELU (tanh approx.) after that LayerNorm, before the mixing linear.
        dropout: dropout probability on the attention weights during training.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        *,
        hidden_norm: bool = False,
        attention_gelu: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__(d_model, n_heads)
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.d_head = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.init_output(hidden_norm=hidden_norm, attention_gelu=attention_gelu)
        self.dropout = dropout

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Queries, keys, values per head, each (..., B, H, N, d_h) (views of one qkv projection)."""
        qkv = dense(x, self.qkv).unflatten(-1, (3, self.n_heads, self.d_head))  # (..., B, N, 3, H, d_h)
        q, k, v = qkv.movedim(-3, 0).transpose(-3, -2).unbind(0)  # 3 x (..., B, H, N, d_h)
        return q, k, v

    def weights(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """Attention weights (..., H, N_query, N_key) from q, k (..., H, N, d_h)."""
        raise NotImplementedError

    def pool(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Head outputs (..., H, N, d_h) = weights @ v, with attention dropout on the weights while training."""
        a = self.weights(q, k)
        if self.training and self.dropout > 0:
            a = F.dropout(a, self.dropout)
        return a @ v

    def attention_weights(self, x: torch.Tensor) -> torch.Tensor:
        """The attention weights (..., B, H, N, N) this mixer uses on input x (..., B, N, d); for tests and plots."""
        q, k, _ = self.project(x)
        return self.weights(q, k)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.project(x)
        o = self.pool(q, k, v)  # (..., B, H, N, d_h)
        o = o.transpose(-3, -2).flatten(-2)  # (..., B, N, H * d_h) = (..., B, N, d), heads concatenated
        return self.output(o)  # (..., B, N, d)


def per_head(p: torch.Tensor) -> torch.Tensor:
    """A per-head parameter (H,) or stacked (K, H) viewed to broadcast against (..., B, H, N, x)."""
    return p[..., None, :, None, None]  # (1, H, 1, 1) or (K, 1, H, 1, 1)
