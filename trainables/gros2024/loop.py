"""Training loop of the Gros 2024 family: SGD with momentum, one fresh series per epoch, greedy evaluation.

Epoch (paper, "Training"): every member draws a fresh random series; its first N_con symbols fill the
context and the model predicts the next ``batch_predictions`` (40) symbols one by one, sliding the context
over the TRUE series; ``optimizer_steps`` chooses between the 40 predictions as one batch and one optimiser
step (``per_epoch``) or one step per prediction, in order (``per_prediction``); the paper's "predict one-by-one"
does not settle it. Loss: squared error between the linear outputs and the one-hot target, averaged over the
batch and, with ``loss_reduction="mean"``, over the d outputs too (``sum_outputs``: summed over them).

Evaluation: ``eval_series`` (100) fresh series per member; from the first N_con true symbols the model
predicts ``eval_predictions`` (50) symbols free-running: every prediction is appended to the context and
fed back (greedy inference; the strict reading). ``val_accuracy`` = the fraction of those predictions equal to
the true continuation; ``val_loss`` = the squared error along the same rollout. After the last epoch the same
evaluation with ``final_eval_series`` (>= 10^4 in the paper) series gives ``final_accuracy``. The mixture
(``nt_mix``) is evaluated on each of its tasks with ``eval_series`` series each (``val_accuracy_nt``,
``val_accuracy_nt_s``; ``val_accuracy`` is their mean).

All K seeds train as one stacked model (``StackedBilayer``); each has its own initialisation and its own data
generators (training, evaluation, final evaluation), so results equal separate runs up to float rounding.
A member whose loss is not finite is frozen (zero gradient and momentum) and reported ``diverged``. With ``probes``
asked, every evaluation row also holds the ``probe_*`` columns of :mod:`trainables.gros2024.inside`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from trainables.gros2024.config import GrosConfig
from trainables.gros2024.inside import probe_columns, probe_contexts
from trainables.gros2024.model import StackedBilayer
from trainables.gros2024.tasks import COMPONENTS, RULES, continue_series, initial_symbols
from trainables.rows import OnEval, Row, SeedRows, stream_seed
from trainables.stacked import member_view

STREAM_TRAIN, STREAM_VAL, STREAM_FINAL = 1, 2, 3
STREAM_SALT = 0x6705  # this family's data streams (changing it changes every result)
#: Largest attention tensor (K x B x T x T floats) one evaluation chunk may allocate.
EVAL_CHUNK_BYTES = 64 * 2**20


def _series(cfg: GrosConfig, gens: Sequence[torch.Generator], n: int, length: int, task: str) -> torch.Tensor:
    """(K, n, length): n series per member, each member's drawn from its own generator."""
    starts, rules = zip(*(initial_symbols(task, cfg.basis, cfg.delay, n, g) for g in gens), strict=True)
    series = continue_series(torch.cat(starts), torch.cat(rules), cfg.basis, cfg.delay, length)
    return series.view(len(gens), n, length)


@torch.no_grad()
def greedy_rollout(model: StackedBilayer, series: torch.Tensor,
                   n_predictions: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Free-running prediction from the first N_con symbols of ``series`` (K, B, >= N_con + n_predictions).

    Returns (correct (K, B, n_predictions) bool, squared error (K, B) summed over the rollout).
    """
    t = model.cfg.n_context
    context = series[:, :, :t]
    correct, sq = [], torch.zeros(series.shape[:2], device=series.device)
    for i in range(n_predictions):
        out = model(context)  # (K, B, d)
        target = series[:, :, t + i]
        pred = out.argmax(dim=-1)  # (K, B)
        correct.append(pred == target)
        sq += (out - F.one_hot(target, model.cfg.basis).to(out.dtype)).square().mean(dim=-1)
        context = torch.cat([context[:, :, 1:], pred[:, :, None]], dim=2)  # slide, feeding the prediction back
    return torch.stack(correct, dim=-1), sq / n_predictions


def evaluate(model: StackedBilayer, gens: Sequence[torch.Generator], n_series: int) -> dict[str, list[float]]:
    """Greedy accuracy and rollout loss per member (lists of K) on fresh series, per component task."""
    cfg = model.cfg
    k, t = model.k, cfg.n_context
    chunk = max(1, EVAL_CHUNK_BYTES // (4 * k * t * t))
    out: dict[str, list[float]] = {}
    accs, losses = [], []
    for component in COMPONENTS[cfg.task]:
        series = _series(cfg, gens, n_series, t + cfg.eval_predictions, component)  # (K, n, T + N_g)
        correct = torch.zeros(k, device=series.device)
        sq = torch.zeros(k, device=series.device)
        for i in range(0, n_series, chunk):
            c, s = greedy_rollout(model, series[:, i:i + chunk], cfg.eval_predictions)
            correct += c.float().mean(dim=-1).sum(dim=1)
            sq += s.sum(dim=1)
        acc, loss = (correct / n_series).tolist(), (sq / n_series).tolist()
        accs.append(acc)
        losses.append(loss)
        if cfg.task == "nt_mix":
            out[f"accuracy_{component}"] = acc
    out["accuracy"] = [sum(a[i] for a in accs) / len(accs) for i in range(k)]
    out["loss"] = [sum(v[i] for v in losses) / len(losses) for i in range(k)]
    return out


def train_members(cfg: GrosConfig, seeds: Sequence[int], *, device: str = "cpu",
                  on_eval: OnEval | None = None) -> tuple[list[Row], list[Row]]:
    """Train every seed of ``cfg`` as one stacked model: (rows, attention-snapshot rows)."""
    start_time = time.perf_counter()
    seeds = list(seeds)
    model = StackedBilayer(cfg, seeds, device=device)
    k = model.k
    gens = {s: [torch.Generator(device=device).manual_seed(stream_seed(seed, s, STREAM_SALT)) for seed in seeds]
            for s in (STREAM_TRAIN, STREAM_VAL, STREAM_FINAL)}
    readout = [model.params["wr"], model.params["br"]]
    body = [p for p in model.parameters() if all(p is not r for r in readout)]
    # The readout may step at a smaller rate (``readout_lr_context``); "lr_factor" scales every lr set below.
    optimizer = torch.optim.SGD([{"params": body, "lr_factor": 1.0},
                                 {"params": readout, "lr_factor": cfg.readout_lr_factor}],
                                lr=cfg.learning_rate, momentum=cfg.momentum)
    writers = [SeedRows(seed, n_params=model.n_params(), device=device, on_eval=on_eval, start=start_time)
               for seed in seeds]
    active = torch.ones(k, dtype=torch.bool, device=device)
    loss_sum, correct_sum, n_batches = torch.zeros(k), torch.zeros(k), 0
    contexts = probe_contexts(model) if cfg.probes is not None else None
    for epoch in range(cfg.n_epochs):
        lr = cfg.learning_rate_at(epoch)
        for group in optimizer.param_groups:
            group["lr"] = lr * group["lr_factor"]
        _train_epoch(model, optimizer, gens[STREAM_TRAIN], active, writers, loss_sum, correct_sum)
        n_batches += 1
        done = epoch + 1
        if done % cfg.eval_every:
            continue
        ev = evaluate(model, gens[STREAM_VAL], cfg.eval_series)
        final = evaluate(model, gens[STREAM_FINAL], cfg.final_eval_series) \
            if done == cfg.n_epochs and cfg.final_eval_series else None
        inside = probe_columns(model, contexts, cfg.probes) if contexts is not None else [{}] * k
        for i, writer in enumerate(writers):
            writer.emit(done, done, empty_metrics(cfg) if writer.diverged else {
                "train_loss": float(loss_sum[i]) / n_batches,
                "train_accuracy": float(correct_sum[i]) / n_batches,
                **_evaluation_metrics(cfg, i, ev, final), "current_learning_rate": lr, **inside[i],
            })
        loss_sum.zero_()
        correct_sum.zero_()
        n_batches = 0
    diverged = [w.diverged for w in writers]
    return [row for w in writers for row in w.finish()], _snapshots(model, seeds, diverged)


def _train_epoch(model: StackedBilayer, optimizer: torch.optim.Optimizer, gens: Sequence[torch.Generator],
                 active: torch.Tensor, writers: Sequence[SeedRows], loss_sum: torch.Tensor,
                 correct_sum: torch.Tensor) -> None:
    """One epoch's optimiser steps; adds each member's loss and accuracy, averaged over the epoch's steps, to
    ``loss_sum`` and ``correct_sum`` (K,). A member whose loss is not finite is frozen (``active`` False, its
    writer told) and adds 0 from then on."""
    cfg = model.cfg
    windows, targets = training_batch(cfg, gens)
    # One step on the whole batch, or one step per prediction (each window in order, a batch of one).
    per_step = cfg.batch_predictions if cfg.optimizer_steps == "per_epoch" else 1
    share = per_step / cfg.batch_predictions  # the epoch's loss and accuracy average its steps
    for j in range(0, cfg.batch_predictions, per_step):
        values, correct = sgd_step(model, optimizer, windows[:, j:j + per_step], targets[:, j:j + per_step],
                                   active, cfg.loss_reduction)
        for i, writer in enumerate(writers):
            if not writer.diverged and not math.isfinite(float(values[i])):
                writer.diverge()
                active[i] = False
        loss_sum += torch.where(active.cpu(), values, torch.zeros_like(values)) * share
        correct_sum += correct * share


def _mix_columns(cfg: GrosConfig) -> list[str]:
    """The per-component accuracy columns of the mixture task (none for the others)."""
    return [f"accuracy_{c}" for c in COMPONENTS[cfg.task]] if cfg.task == "nt_mix" else []


def _evaluation_metrics(cfg: GrosConfig, i: int, ev: dict[str, list[float]],
                        final: dict[str, list[float]] | None) -> dict[str, Any]:
    """Member i's validation (and, after the last epoch, final) metrics."""
    mix = _mix_columns(cfg)
    return {"val_loss": ev["loss"][i], "val_accuracy": ev["accuracy"][i], **{f"val_{c}": ev[c][i] for c in mix},
            "final_accuracy": final["accuracy"][i] if final else None,
            **{f"final_{c}": (final[c][i] if final else None) for c in mix}}


def empty_metrics(cfg: GrosConfig) -> dict[str, Any]:
    """The metrics of an evaluation a diverged (frozen) member does not get."""
    mix = _mix_columns(cfg)
    return {"train_loss": math.nan, "train_accuracy": 0.0, "val_loss": math.nan, "val_accuracy": 0.0,
            **{f"val_{c}": 0.0 for c in mix}, "final_accuracy": None, **{f"final_{c}": None for c in mix},
            "current_learning_rate": cfg.learning_rate}


def training_batch(cfg: GrosConfig, gens: Sequence[torch.Generator]) -> tuple[torch.Tensor, torch.Tensor]:
    """One epoch's data: a fresh series per member; windows (K, P, N_con) sliding over the TRUE series and
    the P next symbols (K, P) as targets."""
    t = cfg.n_context
    series = _series(cfg, gens, 1, t + cfg.batch_predictions, cfg.task)[:, 0]  # (K, T + P)
    return series.unfold(1, t, 1)[:, : cfg.batch_predictions], series[:, t:]


def sgd_step(model: StackedBilayer, optimizer: torch.optim.Optimizer, windows: torch.Tensor,
             targets: torch.Tensor, active: torch.Tensor, reduction: str) -> tuple[torch.Tensor, torch.Tensor]:
    """One optimiser step on windows (K, P, T) -> targets (K, P): (loss per member, accuracy per member).

    A member whose loss is not finite (or that is already frozen) gets no gradient and no momentum; the caller
    freezes it on the returned loss.
    """
    out = model(windows)  # (K, P, d)
    sq = (out - F.one_hot(targets, model.cfg.basis).to(out.dtype)).square()  # (K, P, N)
    losses = sq.mean(dim=(1, 2)) if reduction == "mean" else sq.sum(dim=2).mean(dim=1)  # (K,)
    values = losses.detach().cpu()
    live = active & torch.isfinite(losses.detach())
    optimizer.zero_grad(set_to_none=False)
    torch.autograd.backward(torch.where(live, losses, torch.zeros_like(losses)).sum())
    if not bool(live.all()):
        _zero_frozen(model, optimizer, live)
    optimizer.step()
    return values, (out.detach().argmax(dim=-1) == targets).float().mean(dim=1).cpu()


@torch.no_grad()
def _zero_frozen(model: StackedBilayer, optimizer: torch.optim.Optimizer, active: torch.Tensor) -> None:
    """Frozen members' slices of every gradient and momentum buffer become 0 (a NaN included)."""
    keep = active.to(torch.float32)
    for p in model.parameters():
        mask = member_view(keep, p.dim()).to(p.dtype)
        if p.grad is not None:
            p.grad.mul_(mask).nan_to_num_(0.0)
        buf = optimizer.state.get(p, {}).get("momentum_buffer")
        if buf is not None:
            buf.mul_(mask).nan_to_num_(0.0)


@torch.no_grad()
def _snapshots(model: StackedBilayer, seeds: Sequence[int], diverged: Sequence[bool]) -> list[dict[str, Any]]:
    """Final attention matrices of the first ``snapshot_seeds`` members on one probe series (artifact rows)."""
    cfg = model.cfg
    n = min(cfg.snapshot_seeds, model.k)
    if n == 0:
        return []
    gen = torch.Generator(device=model.device).manual_seed(12345)  # one probe series for every member
    task = COMPONENTS[cfg.task][0]
    start, rules = initial_symbols(task, cfg.basis, cfg.delay, 1, gen)
    probe = continue_series(start, rules, cfg.basis, cfg.delay, cfg.n_context)  # (1, T)
    _, a = model(probe.expand(model.k, 1, -1).contiguous(), return_attention=True)
    if a is None:
        return []
    a = a[:, 0].cpu()  # (K, T, T)
    t = cfg.n_context
    query = torch.arange(t).repeat_interleave(t).tolist()
    key = torch.arange(t).repeat(t).tolist()
    out = []
    for i in range(n):
        if diverged[i]:
            continue
        for q, kk, w in zip(query, key, a[i].reshape(-1).tolist(), strict=True):
            if kk <= q:  # every mixer is causal here: later keys have weight 0
                out.append({"seed": seeds[i], "epoch": cfg.n_epochs, "query": q, "key": kk, "weight": w,
                            "rule": RULES.index(task)})
    return out
