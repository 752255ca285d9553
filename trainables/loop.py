"""Plain-PyTorch training loop: one seed at a time, one row dict per evaluation (see docs/results.md).

Optimiser: Adam (default betas; eps 1e-7 as Keras' Adam in the authors' release, torch's default is
1e-8). Learning rate: linear decay from ``learning_rate`` to 0 over
``n_steps``; with ``warmup`` a linear warm-up from 0 over the first 10% of steps, after which the same
decay line measured from step 0 applies (the BERT / authors' schedule, with its small drop when warm-up
ends). With ``grad_clip`` each gradient tensor is clipped separately to norm 1.0 (tf.clip_by_norm).

The seed fixes the initialisation (``torch.manual_seed``) and three independent data generators
(training batches, validation batches, the equalised case sets). The caller sets ``torch.set_num_threads``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F

from trainables.config import TrainConfig
from trainables.model import Model, build_model, count_parameters
from trainables.tasks import CASES, TASKS, Task
from trainables.tasks.cases import CasesTask

GRAD_CLIP_NORM = 1.0
WARMUP_FRACTION = 0.1
CASE_EVAL_CHUNK = 128  # examples per forward pass on the equalised case sets

_STREAM_TRAIN, _STREAM_VAL, _STREAM_CASES = 1, 2, 3

OnEval = Callable[[dict[str, Any]], None]


def stream_seed(seed: int, stream: int) -> int:
    """Seed of data stream ``stream`` for model seed ``seed`` (distinct from the init seed itself)."""
    return (seed * 1_000_003 + stream * 7_919 + 0x5EED) % (2**63)


ADAM_EPS = 1e-7  # Keras' default, used by the authors' release


def learning_rate_at(step: int, *, n_steps: int, learning_rate: float, warmup: bool) -> float:
    """Learning rate for the optimiser step taken after ``step`` completed steps (0-based)."""
    warmup_steps = int(WARMUP_FRACTION * n_steps)
    if warmup and step < warmup_steps:
        return learning_rate * step / warmup_steps
    return learning_rate * max(0.0, 1.0 - step / n_steps)


@torch.no_grad()
def clip_each_(grads: Sequence[torch.Tensor], max_norm: float = GRAD_CLIP_NORM) -> None:
    """Scale every gradient tensor separately to norm <= max_norm (t * max_norm / max(||t||, max_norm))."""
    if not grads:
        return
    norms = torch._foreach_norm(list(grads))
    scales = [max_norm / torch.clamp(n, min=max_norm) for n in norms]
    torch._foreach_mul_(list(grads), scales)


@torch.no_grad()
def _accuracy_and_loss(model: Model, tokens: torch.Tensor, labels: torch.Tensor) -> tuple[float, float]:
    logits = model(tokens)
    loss = F.cross_entropy(logits, labels)
    acc = (logits.argmax(dim=-1) == labels).float().mean()
    return float(loss), float(acc)


@torch.no_grad()
def _case_accuracies(model: Model, eval_set: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> list[float]:
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


def _generator(device: str | torch.device, seed: int) -> torch.Generator:
    return torch.Generator(device=device).manual_seed(seed)


def make_task(cfg: TrainConfig) -> Task:
    """The task instance for a config."""
    return TASKS.get(cfg.task)(vocab_size=cfg.resolved()["vocab_size"], case_mix=cfg.case_mix)


def train_seed(
    cfg: TrainConfig, seed: int, *, device: str = "cpu", on_eval: OnEval | None = None
) -> list[dict[str, Any]]:
    """Train one model and return one row per evaluation (every ``eval_every`` steps).

    Row keys: seed, step, epoch, train_loss, train_accuracy, val_loss, val_accuracy,
    {train,val}_{argmin,first,argmax}_accuracy (None unless a cases task), status, wall_time_s, n_params,
    device. A non-finite training loss stops the seed: every row is marked ``diverged`` and the remaining
    evaluation points are filled with accuracy 0.0 and NaN losses. ``on_eval(row)`` is called per row as
    it is produced (rows produced before a divergence still say ``ok`` there).
    """
    start = time.perf_counter()
    r = cfg.resolved()
    torch.manual_seed(seed)
    model = build_model(cfg).to(device)
    n_params = count_parameters(model)
    task = make_task(cfg)
    gen_train = _generator(device, stream_seed(seed, _STREAM_TRAIN))
    gen_val = _generator(device, stream_seed(seed, _STREAM_VAL))
    case_sets: dict[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}
    if isinstance(task, CasesTask):
        gen_cases = _generator(device, stream_seed(seed, _STREAM_CASES))
        case_sets["train"] = task.case_eval_set(cfg.case_eval_per_case, cfg.seq_len, gen_cases)
        case_sets["val"] = task.case_eval_set(cfg.case_eval_per_case, r["val_seq_len"], gen_cases)

    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate, eps=ADAM_EPS)
    params = [p for p in model.parameters() if p.requires_grad]
    l2_params = model.l2_parameters() if cfg.l2_weight > 0 else []
    warmup, grad_clip = bool(r["warmup"]), bool(r["grad_clip"])

    rows: list[dict[str, Any]] = []
    diverged = False
    loss_sum, seen_batches = 0.0, 0
    correct_sum = torch.zeros((), device=device)  # summed on the device: one host sync per step (the loss)

    def emit(step: int, metrics: dict[str, Any]) -> None:
        row: dict[str, Any] = {"seed": seed, "step": step, "epoch": step // cfg.eval_every}
        row.update(metrics)
        row.update(
            status="diverged" if diverged else "ok",
            wall_time_s=time.perf_counter() - start,
            n_params=n_params,
            device=str(device),
        )
        rows.append(row)
        if on_eval is not None:
            on_eval(row)

    def case_columns(values: dict[str, list[float]] | None) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for split in ("train", "val"):
            for i, case in enumerate(CASES):
                key = f"{split}_{case}_accuracy"
                if not case_sets:
                    out[key] = None
                else:
                    out[key] = 0.0 if values is None else values[split][i]
        return out

    model.train()
    step = 0
    while step < cfg.n_steps:
        tokens, labels = task.sample(cfg.batch_size, cfg.seq_len, gen_train)
        logits = model(tokens)
        loss = F.cross_entropy(logits, labels)
        loss_value = float(loss.detach())
        if not math.isfinite(loss_value):
            diverged = True
            break
        total = loss
        if l2_params:
            # Keras l2 regularizer convention of the release: l2_weight * sum(w^2) (no factor 1/2).
            total = total + cfg.l2_weight * sum(w.square().sum() for w in l2_params)
        optimizer.zero_grad(set_to_none=True)
        total.backward()
        if grad_clip:
            clip_each_([p.grad for p in params if p.grad is not None])
        lr = learning_rate_at(step, n_steps=cfg.n_steps, learning_rate=cfg.learning_rate, warmup=warmup)
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.step()
        step += 1
        loss_sum += loss_value
        correct_sum += (logits.detach().argmax(dim=-1) == labels).float().mean()
        seen_batches += 1

        if step % cfg.eval_every == 0:
            model.eval()
            val = [
                _accuracy_and_loss(model, *task.sample(cfg.batch_size, r["val_seq_len"], gen_val))
                for _ in range(cfg.eval_batches)
            ]
            cases = {split: _case_accuracies(model, s) for split, s in case_sets.items()}
            model.train()
            emit(
                step,
                {
                    "train_loss": loss_sum / seen_batches,
                    "train_accuracy": float(correct_sum) / seen_batches,
                    "val_loss": sum(v[0] for v in val) / len(val),
                    "val_accuracy": sum(v[1] for v in val) / len(val),
                    **case_columns(cases),
                },
            )
            loss_sum, seen_batches = 0.0, 0
            correct_sum.zero_()

    if diverged:
        first_missing = (step // cfg.eval_every + 1) * cfg.eval_every
        for missing in range(first_missing, cfg.n_steps + 1, cfg.eval_every):
            emit(
                missing,
                {
                    "train_loss": math.nan,
                    "train_accuracy": 0.0,
                    "val_loss": math.nan,
                    "val_accuracy": 0.0,
                    **case_columns(None),
                },
            )
        for row in rows:
            row["status"] = "diverged"
    return rows


def train_trial(
    cfg: TrainConfig,
    seeds: Sequence[int],
    *,
    device: str = "cpu",
    on_eval: OnEval | None = None,
    packed: bool | None = None,
) -> list[dict[str, Any]]:
    """Train one model per seed and return all their rows, seed by seed.

    ``packed=True`` trains all seeds together as one packed model (:func:`trainables.packed.train_packed`:
    the same rows as separate runs up to float rounding, plus a ``learning_rate`` key); ``packed=False``
    trains them one after another with :func:`train_seed`. ``None`` (default) packs on a GPU, where small
    models are launch-bound, and not on a CPU, where packing measured no faster (bench/README.md: the
    demo study took 311 s packed vs 257 s one seed after another on 2 cores).
    """
    if packed is None:
        packed = str(device).startswith("cuda")
    if packed:
        from trainables.packed import train_packed  # packed builds on this module

        return train_packed([cfg], list(seeds), device=device, on_eval=on_eval)
    rows: list[dict[str, Any]] = []
    for seed in seeds:
        rows.extend(train_seed(cfg, seed, device=device, on_eval=on_eval))
    return rows
