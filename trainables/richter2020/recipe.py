"""The training recipe of the Richter family's loop (``loop.py``), per member of a stack (K = 1: one seed): optimiser
settings, schedule, clipping, losses, data streams, evaluation sets and metric columns.

Optimiser: Adam (default betas; eps 1e-7 as Keras' Adam in the authors' release, torch's default is
1e-8). Learning rate: linear decay from ``learning_rate`` to 0 over ``n_steps``; with ``warmup`` a linear
warm-up from 0 over the first 10% of steps, after which the same decay line measured from step 0 applies
(the BERT / authors' schedule, with its small drop when warm-up ends). With ``grad_clip`` each gradient
tensor is clipped separately to norm 1.0 (tf.clip_by_norm), per member.

The seed fixes the initialisation (``torch.manual_seed``) and three independent counter-based data streams
(training batches, validation batches, the equalised case sets: :mod:`trainables.counter_draws`): training batch t
of a member is a function of (its seed, t) alone, validation batch j of (its seed, j), whatever else is packed with it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F

from trainables.counter_draws import Draws, member_keys
from trainables.richter2020.config import TrainConfig
from trainables.richter2020.tasks import CASES, TASKS, Task
from trainables.richter2020.tasks.cases import CasesTask
from trainables.stacked import member_view

GRAD_CLIP_NORM = 1.0
WARMUP_FRACTION = 0.1
ADAM_EPS = 1e-7  # Keras' default, used by the authors' release
CASE_EVAL_CHUNK = 128  # examples per forward pass on the equalised case sets
STREAM_TRAIN, STREAM_VAL, STREAM_CASES = 1, 2, 3
STREAM_SALT = 0x5EED  # this family's data streams (changing it changes every result)

CaseSet = tuple[torch.Tensor, torch.Tensor]  # per member: tokens (K, 3n, N), labels (K, 3n); n per case, in case order


def learning_rates(step: torch.Tensor, base: torch.Tensor, warmup: torch.Tensor, n_steps: int) -> torch.Tensor:
    """Every member's learning rate (K,) for the optimiser step taken after ``step`` completed steps (a 0-dim float64
    tensor: on the device, so no step waits for the host), from base rates (K,) float64 and warm-up flags (K,) bool."""
    warmup_steps = int(WARMUP_FRACTION * n_steps)
    decay = base * torch.clamp(1.0 - step / n_steps, min=0.0)
    if warmup_steps == 0:
        return decay
    return torch.where(warmup & (step < warmup_steps), base * step / warmup_steps, decay)


def learning_rate_at(step: int, *, n_steps: int, learning_rate: float, warmup: bool) -> float:
    """:func:`learning_rates` of one member, as a Python float."""
    one = torch.tensor([learning_rate], dtype=torch.float64)
    at = torch.tensor(float(step), dtype=torch.float64)
    return float(learning_rates(at, one, torch.tensor([warmup]), n_steps)[0])


@torch.no_grad()
def clip_members_(grads: Sequence[torch.Tensor], clip: torch.Tensor, max_norm: float = GRAD_CLIP_NORM) -> None:
    """Per member and per tensor: scale member k's slice of each gradient to norm <= max_norm where ``clip[k]``.

    ``clip`` (K,) bool; a gradient is (K, ...) stacked, or one model's own (K = 1): either way ``g.reshape(K, -1)``
    holds one member per row. ``t * max_norm / max(||t||, max_norm)``, as tf.clip_by_norm.
    """
    k = clip.shape[0]
    norms = torch.stack([torch.linalg.vector_norm(g.reshape(k, -1), dim=1) for g in grads])  # (P, K)
    scales = torch.where(clip, max_norm / torch.clamp(norms, min=max_norm), torch.ones_like(norms))  # (P, K)
    for scale, g in zip(scales.unbind(0), grads, strict=True):  # per tensor: a (K, 1, ...) scale broadcasts, which
        g.mul_(member_view(scale, g.dim()))  # inductor's foreach lowering refuses (it failed on CUDA, not on the CPU)


def member_losses(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy per member (K,) for logits (K, B, C) and labels (K, B).

    One member: torch's own mean reduction (its sum order is not the per-example mean's, and one-seed rows
    have always been that, to the last bit).
    """
    k, b, c = logits.shape
    if k == 1:
        return F.cross_entropy(logits[0], labels[0]).unsqueeze(0)
    return F.cross_entropy(logits.reshape(k * b, c), labels.reshape(k * b), reduction="none").view(k, b).mean(1)


def stream_keys(seeds: Sequence[int], stream: int, device: str | torch.device) -> torch.Tensor:
    """The members' keys (K,) of data stream ``stream`` (:data:`STREAM_TRAIN`, ...) on ``device``."""
    return member_keys(seeds, stream, STREAM_SALT, device)


def make_task(cfg: TrainConfig) -> Task:
    """The task instance for a config."""
    return TASKS.get(cfg.task)(vocab_size=cfg.resolved()["vocab_size"], case_mix=cfg.case_mix)


def case_eval_sets(
    task: Task, cfg: TrainConfig, seeds: Sequence[int], device: str | torch.device
) -> dict[str, CaseSet]:
    """The members' equalised case sets of a cases task, ``train`` at seq_len and ``val`` at val_seq_len ({}
    otherwise): counters 0 and 1 of their case stream."""
    if not isinstance(task, CasesTask):
        return {}
    keys = stream_keys(seeds, STREAM_CASES, device)
    sets = {}
    for counter, (split, seq_len) in enumerate((("train", cfg.seq_len), ("val", cfg.resolved()["val_seq_len"]))):
        tokens, labels, _ = task.case_eval_set(cfg.case_eval_per_case, seq_len, Draws(keys, counter))
        sets[split] = (tokens, labels)
    return sets


def case_columns(has_cases: bool, values: Mapping[str, Sequence[float]] | None) -> dict[str, float | None]:
    """``{train,val}_{argmin,first,argmax}_accuracy``: null without cases, 0.0 for a diverged seed (``values`` None)."""
    out: dict[str, float | None] = {}
    for split in ("train", "val"):
        for i, case in enumerate(CASES):
            out[f"{split}_{case}_accuracy"] = None if not has_cases else (0.0 if values is None else values[split][i])
    return out


def empty_metrics(has_cases: bool) -> dict[str, Any]:
    """The metrics of an evaluation point a diverged seed did not reach."""
    return {"train_loss": math.nan, "train_accuracy": 0.0, "val_loss": math.nan, "val_accuracy": 0.0,
            **case_columns(has_cases, None)}
