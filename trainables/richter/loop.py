"""The Richter family's training loop, one seed at a time: one row per evaluation (``docs/results.md``).

Schedules, clipping and data streams: :mod:`trainables.richter.training`. A non-finite training loss stops
the seed (the row writer fills its remaining evaluation points and marks it ``diverged``). The caller sets
``torch.set_num_threads``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from trainables.richter.config import TrainConfig
from trainables.richter.model import Model, build_model
from trainables.richter.tasks import CASES, Task
from trainables.richter.training import (
    ADAM_EPS,
    CASE_EVAL_CHUNK,
    STREAM_TRAIN,
    STREAM_VAL,
    CaseSet,
    case_columns,
    case_eval_sets,
    clip_each_,
    empty_metrics,
    generator,
    learning_rate_at,
    make_task,
)
from trainables.rows import OnEval, Row, SeedRows
from trainables.stacked import count_parameters


@torch.no_grad()
def _accuracy_and_loss(model: Model, tokens: torch.Tensor, labels: torch.Tensor) -> tuple[float, float]:
    logits = model(tokens)
    loss = F.cross_entropy(logits, labels)
    acc = (logits.argmax(dim=-1) == labels).float().mean()
    return float(loss), float(acc)


@torch.no_grad()
def _case_accuracies(model: Model, eval_set: CaseSet) -> list[float]:
    tokens, labels, case = eval_set
    correct = torch.cat(
        [
            model(tokens[i : i + CASE_EVAL_CHUNK]).argmax(dim=-1) == labels[i : i + CASE_EVAL_CHUNK]
            for i in range(0, tokens.shape[0], CASE_EVAL_CHUNK)
        ]
    ).float()  # (3n,)
    per_case = torch.zeros(len(CASES), dtype=correct.dtype, device=correct.device).index_add_(0, case, correct)
    counts = torch.bincount(case, minlength=len(CASES)).clamp(min=1)
    return (per_case / counts).tolist()


def _evaluate(model: Model, task: Task, cfg: TrainConfig, gen_val: torch.Generator,
              case_sets: dict[str, CaseSet]) -> tuple[list[tuple[float, float]], dict[str, list[float]]]:
    """(loss, accuracy) per fresh validation batch, and the case accuracies per split."""
    model.eval()
    val_len = cfg.resolved()["val_seq_len"]
    val = [_accuracy_and_loss(model, *task.sample(cfg.batch_size, val_len, gen_val)) for _ in range(cfg.eval_batches)]
    cases = {split: _case_accuracies(model, s) for split, s in case_sets.items()}
    model.train()
    return val, cases


def train_seed(cfg: TrainConfig, seed: int, *, device: str = "cpu", on_eval: OnEval | None = None) -> list[Row]:
    """Train one model and return one row per evaluation (every ``eval_every`` steps).

    Row keys: seed, step, epoch, train_loss, train_accuracy, val_loss, val_accuracy,
    {train,val}_{argmin,first,argmax}_accuracy (None unless a cases task), status, wall_time_s, n_params,
    device. ``on_eval(row)`` is called per row as it is produced.
    """
    start = time.perf_counter()
    r = cfg.resolved()
    torch.manual_seed(seed)
    model = build_model(cfg).to(device)
    writer = SeedRows(seed, n_params=count_parameters(model), device=device, on_eval=on_eval, start=start)
    task = make_task(cfg)
    gen_train, gen_val = generator(device, seed, STREAM_TRAIN), generator(device, seed, STREAM_VAL)
    case_sets = case_eval_sets(task, cfg, seed, device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate, eps=ADAM_EPS)
    params = [p for p in model.parameters() if p.requires_grad]
    l2_params = model.l2_parameters() if cfg.l2_weight > 0 else []
    warmup, grad_clip = bool(r["warmup"]), bool(r["grad_clip"])
    loss_sum, seen_batches = 0.0, 0
    correct_sum = torch.zeros((), device=device)  # summed on the device: one host sync per step (the loss)

    model.train()
    step = 0
    while step < cfg.n_steps:
        tokens, labels = task.sample(cfg.batch_size, cfg.seq_len, gen_train)
        logits = model(tokens)
        loss = F.cross_entropy(logits, labels)
        loss_value = float(loss.detach())
        if not math.isfinite(loss_value):
            writer.stop(step, cfg.eval_every, cfg.n_steps, empty_metrics(bool(case_sets)))
            break
        total = loss
        if l2_params:
            # Keras l2 regularizer convention of the release: l2_weight * sum(w^2) (no factor 1/2).
            total = total + cfg.l2_weight * sum(w.square().sum() for w in l2_params)
        optimizer.zero_grad(set_to_none=True)
        total.backward()
        if grad_clip:
            clip_each_([p.grad for p in params if p.grad is not None])
        for group in optimizer.param_groups:
            group["lr"] = learning_rate_at(step, n_steps=cfg.n_steps, learning_rate=cfg.learning_rate, warmup=warmup)
        optimizer.step()
        step += 1
        loss_sum += loss_value
        correct_sum += (logits.detach().argmax(dim=-1) == labels).float().mean()
        seen_batches += 1

        if step % cfg.eval_every == 0:
            val, cases = _evaluate(model, task, cfg, gen_val, case_sets)
            writer.emit(step, step // cfg.eval_every, {
                "train_loss": loss_sum / seen_batches,
                "train_accuracy": float(correct_sum) / seen_batches,
                "val_loss": sum(v[0] for v in val) / len(val),
                "val_accuracy": sum(v[1] for v in val) / len(val),
                **case_columns(bool(case_sets), cases),
            })
            loss_sum, seen_batches = 0.0, 0
            correct_sum.zero_()
    return writer.finish()


def train_seeds(cfg: TrainConfig, seeds: Sequence[int], *, device: str = "cpu",
                on_eval: OnEval | None = None) -> list[Row]:
    """One model per seed, one after another; all their rows, seed by seed."""
    return [row for seed in seeds for row in train_seed(cfg, seed, device=device, on_eval=on_eval)]
