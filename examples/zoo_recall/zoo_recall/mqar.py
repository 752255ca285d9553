"""Multi-query associative recall (MQAR; Arora et al. 2023, "Zoology"), a model family of its own.

The synthetic task the zoology line of work uses to compare attention alternatives: a sequence first lists P
(key, value) pairs, then asks for keys again; at every query the model must output the value that key was paired
with. Keys come from ``1 .. V/2 - 1``, values from ``V/2 .. V - 1`` (token 0 is unused). Worked example (V = 8: keys
1..3, values 4..7; P = 2, N = 7)::

    tokens   3 6 1 4 | 1 3 1
    targets  - - - - | 4 6 4      (a query's target is its key's value; the pair positions have none)

The model is a small causal stack (token and position embeddings, L pre-LN blocks of a registry mixer called causal
and a 4d GELU feed-forward layer, a linear read-out to V logits at every position), trained with Adam on
cross-entropy at the query positions only; ``val_accuracy`` is the share of queries answered right on fixed
validation batches. One seed after another (no packing: ``packs_when="never"``, the default).

This module is all a model family needs (the ``Family`` protocol of ``trainables.families``): a config, a ``train``
that writes rows through ``trainables.rows.SeedRows``, a ``tiny`` configuration for preflight, and one
``register_family`` call.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from trainables.catalog import register_family
from trainables.config_fields import ConfigFields
from trainables.families import Family
from trainables.mixers import MIXERS, build_mixer
from trainables.rows import OnEval, Row, SeedRows, TrialResult, stream_seed

STREAM_SALT = 4_201  # this family's data streams (trainables.rows.stream_seed)
EMPTY = {"train_loss": math.nan, "val_loss": math.nan, "val_accuracy": 0.0}  # a diverged seed's later rows


@dataclasses.dataclass(frozen=True, kw_only=True)
class MQARConfig(ConfigFields):
    """One MQAR trial (names identical to the Parquet columns).

    Attributes:
        task: ``mqar``.
        mixer: the registry mixer of every block (called with ``causal=True``).
        d_model: width d. n_heads: heads of the mixer. n_layers: blocks L.
        n_pairs: key-value pairs P per sequence. seq_len: tokens N per sequence (N - 2P queries).
        vocab_size: V (keys below V/2, values from V/2).
        batch_size, learning_rate, n_steps: Adam's training budget.
        eval_every: steps between evaluations (divides n_steps). eval_batches: fixed validation batches.
    """

    REQUIRED = ("task",)
    task: str
    mixer: str = "softmax"
    d_model: int = 64
    n_heads: int = 2
    n_layers: int = 2
    n_pairs: int = 8
    seq_len: int = 64
    vocab_size: int = 256
    batch_size: int = 64
    learning_rate: float = 1e-3
    n_steps: int = 2000
    eval_every: int = 200
    eval_batches: int = 4

    def __post_init__(self) -> None:
        self.require_choice("task", ("mqar",))
        self.require_choice("mixer", MIXERS.names())
        MIXERS.get(self.mixer).require(causal=True)  # the stack is causal: a mixer that cannot be is refused here
        self.require_ints(["d_model", "n_heads", "n_layers", "n_pairs", "seq_len", "vocab_size", "batch_size",
                           "n_steps", "eval_every", "eval_batches"])
        self.require_real("learning_rate", low=0)
        if self.d_model % self.n_heads:
            raise self.invalid("d_model", f"a multiple of n_heads={self.n_heads}")
        if self.n_steps % self.eval_every:
            raise self.invalid("n_steps", f"a multiple of eval_every={self.eval_every}")
        if self.n_pairs >= self.vocab_size // 2:
            raise self.invalid("n_pairs", f"fewer than the {self.vocab_size // 2 - 1} keys of vocab_size="
                                          f"{self.vocab_size}")
        if self.seq_len <= 2 * self.n_pairs:
            raise self.invalid("seq_len", f"more than 2 * n_pairs = {2 * self.n_pairs} (room for queries)")

    def resolved(self) -> dict[str, Any]:
        """Every field as used: the Parquet hyperparameter columns."""
        return self.to_dict()


def sample(cfg: MQARConfig, batch_size: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch: tokens (B, N) and targets (B, N), -1 where there is no query (the module docstring's layout)."""
    p, n, half = cfg.n_pairs, cfg.seq_len, cfg.vocab_size // 2
    keys = 1 + torch.rand(batch_size, half - 1, generator=generator).argsort(dim=1)[:, :p]  # (B, P) distinct keys
    values = half + torch.randint(half, (batch_size, p), generator=generator)  # (B, P)
    asked = torch.randint(p, (batch_size, n - 2 * p), generator=generator)  # (B, Q): which pair each query asks
    tokens = torch.cat([torch.stack([keys, values], dim=2).flatten(1), keys.gather(1, asked)], dim=1)  # (B, N)
    targets = torch.cat([torch.full((batch_size, 2 * p), -1), values.gather(1, asked)], dim=1)  # (B, N)
    return tokens, targets


class Block(nn.Module):
    """Pre-LN block: x + mixer(LN(x), causal) then x + FFN(LN(x))."""

    def __init__(self, cfg: MQARConfig) -> None:
        super().__init__()
        d = cfg.d_model
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mixer = build_mixer(cfg.mixer, d, cfg.n_heads, hidden_norm=False, attention_gelu=False, dropout=0.0,
                                 options={"seq_len": cfg.seq_len})
        self.ffn = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.mixer(self.norm1(x), causal=True)  # (B, N, d)
        return x + self.ffn(self.norm2(x))


class MQARModel(nn.Module):
    """Embeddings -> L blocks -> LN -> logits (B, N, V) at every position."""

    def __init__(self, cfg: MQARConfig) -> None:
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.position = nn.Parameter(torch.randn(cfg.seq_len, cfg.d_model) * 0.02)  # (N, d)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = nn.LayerNorm(cfg.d_model)
        self.read_out = nn.Linear(cfg.d_model, cfg.vocab_size)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens) + self.position[: tokens.shape[1]]  # (B, N, d)
        for block in self.blocks:
            x = block(x)
        return self.read_out(self.norm(x))  # (B, N, V)


def _loss_and_correct(model: MQARModel, tokens: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, float]:
    """Cross-entropy over the query positions, and the share of queries answered right."""
    logits = model(tokens)  # (B, N, V)
    asked = targets >= 0  # (B, N)
    loss = F.cross_entropy(logits[asked], targets[asked])
    return loss, float((logits[asked].argmax(-1) == targets[asked]).float().mean())


def _evaluate(model: MQARModel, batches: list[tuple[torch.Tensor, torch.Tensor]]) -> dict[str, float]:
    model.eval()
    with torch.no_grad():
        results = [_loss_and_correct(model, t, y) for t, y in batches]
    model.train()
    return {"val_loss": sum(float(loss) for loss, _ in results) / len(results),
            "val_accuracy": sum(c for _, c in results) / len(results)}


def train_seed(cfg: MQARConfig, seed: int, *, device: str = "cpu", on_eval: OnEval | None = None) -> list[Row]:
    """One seed: its own initialisation, training stream and validation batches."""
    torch.manual_seed(seed)
    model = MQARModel(cfg).to(device)
    writer = SeedRows(seed, n_params=sum(p.numel() for p in model.parameters()), device=device, on_eval=on_eval)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)
    train_stream = torch.Generator().manual_seed(stream_seed(seed, 0, STREAM_SALT))
    val_stream = torch.Generator().manual_seed(stream_seed(seed, 1, STREAM_SALT))
    validation = [tuple(t.to(device) for t in sample(cfg, cfg.batch_size, val_stream)) for _ in range(cfg.eval_batches)]
    for step in range(1, cfg.n_steps + 1):
        tokens, targets = (t.to(device) for t in sample(cfg, cfg.batch_size, train_stream))
        loss, _ = _loss_and_correct(model, tokens, targets)
        if not math.isfinite(float(loss.detach())):
            writer.stop(step - 1, cfg.eval_every, cfg.n_steps, EMPTY)
            break
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % cfg.eval_every == 0:
            writer.emit(step, step // cfg.eval_every, {"train_loss": loss.item(), **_evaluate(model, validation)})
    return writer.finish()


def train(configs: Sequence[MQARConfig], seeds: Sequence[int], *, device: str = "cpu",
          on_eval: OnEval | None = None, packed: bool | None = None) -> TrialResult:
    """Every seed of one configuration, one after another (``packed`` is accepted and ignored)."""
    if len(configs) != 1:
        raise ValueError(f"invalid number of configs={len(configs)}; allowed: 1 (mqar does not pack learning rates)")
    return TrialResult([row for seed in seeds for row in train_seed(configs[0], seed, device=device, on_eval=on_eval)])


def tiny(cfg: MQARConfig) -> MQARConfig:
    """One step on a batch of 2 and one validation batch: the same model."""
    return dataclasses.replace(cfg, batch_size=2, n_steps=1, eval_every=1, eval_batches=1)


FAMILY = register_family(Family(name="mqar", tasks=("mqar",), config=MQARConfig, train=train, tiny=tiny))
