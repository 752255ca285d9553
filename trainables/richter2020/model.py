"""Encoder model shared by all architectures (Richter & Wattenhofer 2020, Sec. 4 and App. C).

Written over leading dimensions like the mixers (``trainables.stacked``): the same module runs one model on
tokens (B, N) or, stacked by :func:`trainables.stacked.stack_modules`, K members on tokens (K, B, N).

Each layer may use its own mixer (``TrainConfig.mixer_stack``: Yun et al. 2020's hybrid stacks, e.g.
convolution in the bottom layers and softmax attention above).

embedding (token + learned position, the latter absent for set tasks) -> L x [mixer sub-module,
feed-forward sub-module] -> output head. LayerNorm placement per architecture:

* ``post`` (BERT):          x = LN(x + drop(sub(x)))
* ``pre_residual`` (MTE):   x = x + drop(LN(sub(x)))  and hidden LNs on the concatenated head outputs
  (inside the mixer) and on the FFN hidden layer before its GELU.

Dropout (probability ``dropout``, default 0) sits where the authors' release puts it: on the embeddings,
on the attention weights (inside multi-head mixers), and on each sub-module output before the residual
addition (after the LN for ``pre_residual``). All LayerNorms use eps = 1e-3 (the Keras default used by the
release). Init: weight matrices and embeddings truncated normal (std 0.02 * init_scale, cut at 2 std),
biases 0, LN gain 1 / bias 0, NAP gain 1 / bias 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from trainables.mixers import build_mixer
from trainables.mixers.base import LN_EPS
from trainables.richter2020.architectures import ARCHITECTURES
from trainables.richter2020.config import TrainConfig
from trainables.richter2020.tasks import TASKS
from trainables.richter2020.tasks.base import Head
from trainables.stacked import dense, embed, norm


class FeedForward(nn.Module):
    """d -> hidden -> d with GELU (tanh approximation); optional LN on the hidden layer before the GELU."""

    def __init__(self, d_model: int, hidden: int, *, hidden_norm: bool) -> None:
        super().__init__()
        self.up = nn.Linear(d_model, hidden)
        self.norm = nn.LayerNorm(hidden, eps=LN_EPS) if hidden_norm else None
        self.down = nn.Linear(hidden, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = dense(x, self.up)  # (..., B, N, hidden)
        if self.norm is not None:
            h = norm(h, self.norm)
        return dense(F.gelu(h, approximate="tanh"), self.down)  # (..., B, N, d)


class Layer(nn.Module):
    """One Transformer layer: mixer sub-module then feed-forward sub-module, each with residual + LN."""

    def __init__(
        self,
        *,
        mixer: str,
        d_model: int,
        n_heads: int,
        ffn_hidden: int,
        ln_placement: str,
        attention_gelu: bool,
        dropout: float,
        mixer_options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        pre = ln_placement == "pre_residual"
        self.pre_residual = pre
        self.mixer = build_mixer(mixer, d_model, n_heads, hidden_norm=pre, attention_gelu=attention_gelu,
                                 dropout=dropout, options=mixer_options)
        self.ffn = FeedForward(d_model, ffn_hidden, hidden_norm=pre)
        self.norm1 = nn.LayerNorm(d_model, eps=LN_EPS)
        self.norm2 = nn.LayerNorm(d_model, eps=LN_EPS)
        self.drop: Callable[[torch.Tensor], torch.Tensor] = nn.Dropout(dropout) if dropout > 0 else nn.Identity()

    def mixer_branch(self, x: torch.Tensor) -> torch.Tensor:
        """What the mixer sub-module adds to the residual x (before dropout): MTE style LN(mixer(x)), BERT style
        mixer(x) (its LN comes after the addition). Sec. 3's e^i is x^i plus this."""
        return norm(self.mixer(x), self.norm1) if self.pre_residual else self.mixer(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.drop(self.mixer_branch(x))
        if self.pre_residual:
            return x + self.drop(norm(self.ffn(x), self.norm2))
        x = norm(x, self.norm1)
        return norm(x + self.drop(self.ffn(x)), self.norm2)


class Model(nn.Module):
    """Token/position embedding, one layer per entry of ``mixers`` (bottom first), and one of three heads.

    Heads: ``per_token`` (linear d -> 1 per token; logits (B, N) over positions), ``first_token_positions``
    (first token -> max_seq_len logits sliced to N), ``first_token_classes`` (first token -> vocab logits).
    """

    def __init__(
        self,
        *,
        mixers: Sequence[str],
        d_model: int,
        n_heads: int,
        vocab_size: int,
        max_seq_len: int,
        positional: bool,
        head: Head,
        ln_placement: str,
        attention_gelu: bool,
        ffn_hidden: int,
        dropout: float = 0.0,
        init_scale: float = 1.0,
        mixer_options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.max_seq_len = max_seq_len
        self.head_kind = head
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Parameter(torch.empty(max_seq_len, d_model)) if positional else None
        self.emb_drop = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.layers = nn.ModuleList(
            Layer(
                mixer=name,
                d_model=d_model,
                n_heads=n_heads,
                ffn_hidden=ffn_hidden,
                ln_placement=ln_placement,
                attention_gelu=attention_gelu,
                dropout=dropout,
                mixer_options=mixer_options,
            )
            for name in mixers
        )
        out_dim = {"per_token": 1, "first_token_positions": max_seq_len, "first_token_classes": vocab_size}
        if head not in out_dim:
            raise ValueError(f"unknown head {head!r}; valid: {', '.join(out_dim)}")
        self.head = nn.Linear(d_model, out_dim[head])
        self.reset_parameters(init_scale)

    def reset_parameters(self, init_scale: float = 1.0) -> None:
        """BERT-style init: truncated normal (std 0.02 * init_scale, +-2 std) for matrices, zeros for biases."""
        std = 0.02 * init_scale

        def trunc(t: torch.Tensor) -> None:
            nn.init.trunc_normal_(t, std=std, a=-2 * std, b=2 * std)

        trunc(self.tok_emb.weight)
        if self.pos_emb is not None:
            trunc(self.pos_emb)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                trunc(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def l2_parameters(self) -> list[torch.Tensor]:
        """Weight matrices penalised by l2_weight: every dense kernel (as the release's Keras regularizers)."""
        return [m.weight for m in self.modules() if isinstance(m, nn.Linear)]

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits for tokens (..., B, N): (..., B, N) for position heads, (..., B, vocab) for the class head."""
        n = tokens.shape[-1]
        x = embed(tokens, self.tok_emb)  # (..., B, N, d)
        if self.pos_emb is not None:
            if n > self.max_seq_len:
                raise ValueError(f"sequence length {n} exceeds max_seq_len={self.max_seq_len}")
            x = x + self.pos_emb[..., :n, :].unsqueeze(-3)  # (..., B, N, d) + (..., 1, N, d)
        x = self.emb_drop(x)
        for layer in self.layers:
            x = layer(x)  # (..., B, N, d)
        if self.head_kind == "per_token":
            return dense(x, self.head).squeeze(-1)  # (..., B, N, 1) -> (..., B, N)
        out = dense(x[..., 0, :], self.head)  # (..., B, out_dim) from the first token
        if self.head_kind == "first_token_positions":
            if n > self.max_seq_len:
                raise ValueError(f"sequence length {n} exceeds max_seq_len={self.max_seq_len}")
            out = out[..., :n]  # (..., B, N): slice to the actual length
        return out


def build_model(cfg: TrainConfig) -> Model:
    """The model for a config (uses the resolved switches; the current torch RNG state for the init)."""
    r = cfg.resolved()
    arch = ARCHITECTURES.get(cfg.architecture)
    task_cls = TASKS.get(cfg.task)
    return Model(
        mixers=cfg.layer_mixers(),
        d_model=cfg.d_model,
        n_heads=cfg.n_heads,
        vocab_size=r["vocab_size"],
        max_seq_len=max(cfg.seq_len, r["val_seq_len"]),
        positional=task_cls.positional,
        head=task_cls.head,
        ln_placement=r["ln_placement"],
        attention_gelu=r["attention_gelu"],
        ffn_hidden=arch.ffn_hidden(cfg.d_model),
        dropout=cfg.dropout,
        init_scale=cfg.init_scale,
        mixer_options=mixer_options(cfg),
    )


def mixer_options(cfg: TrainConfig) -> dict[str, Any]:
    """Settings that some mixers need: the training length (bilinear) and the filter length (sepconv)."""
    return {"seq_len": cfg.seq_len, "conv_width": cfg.conv_width}
