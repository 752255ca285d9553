"""Training loop of the CTL family (docs/csordas2021.md): K seeds of a configuration as one stacked model; one seed is
K = 1 of the same loop.

AdamW (the LSTM: Adam), gradient-norm clipping, a constant learning rate, evaluation every ``eval_every`` steps.
Each member keeps what it would have alone (:mod:`trainables.csordas2021.members`): its initialisation, its dropout
draws (:mod:`trainables.csordas2021.noise`), its batches (its own data stream: uniform or length-bucketed, so the
members' batches differ in width and are padded to the widest, which no real token attends to), its Adam state
(:class:`trainables.stacked.StackedAdam`, with AdamW's decoupled decay), its clipping (its own global gradient norm)
and its loss. So member k's rows equal seed k's trained alone up to float rounding (tests/test_csordas2021_packed.py);
one seed is its own model, and its rows are what the one-seed loop gave before the loops were one.

Rows (one per seed and evaluation): ``train_loss``/``train_accuracy`` (means over the batches since the
previous evaluation), ``iid_accuracy``/``iid_loss`` (valid/iid, depth 2-5), ``depth_val_accuracy``/
``depth_val_loss`` (valid/deeper_val, depth 6-8), ``test_accuracy``/``test_loss`` (test/deeper, depth 9-10,
the "longer" columns) and ``val_accuracy`` (= iid_accuracy, for the generic report). Table 1's statistic
(IID at the end, longer at the best depth-valid step) is computed from these rows in ``analysis.papers.csordas2021``.
A member whose training loss is not finite is frozen (its gradients zeroed, its learning rate 0) and its rows are
completed by the row writer; the others train on. With ``probes`` asked, every evaluation row also holds the
``probe_*`` columns of :mod:`trainables.csordas2021.inside`. Nothing in a step waits for the device: divergence,
losses and accuracies are kept there and read once per evaluation. Artifacts:
:func:`trainables.csordas2021.evaluation.probe`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from trainables.csordas2021.config import CTLConfig
from trainables.csordas2021.ctl import encoded_splits, length_bucketed_batches, uniform_batches
from trainables.csordas2021.evaluation import EVAL_SETS, evaluate_all, probe
from trainables.csordas2021.inside import PROBE_SPLIT, probe_columns
from trainables.csordas2021.members import Members
from trainables.rows import OnEval, Row, SeedRows, stream_seed
from trainables.stacked import StackedAdam, clip_grad_norm_members_, member_view

STREAM_SALT = 17  # the batch order's stream (changing it changes every result)
ADAM_EPS = 1e-8  # torch's Adam / AdamW default, the release's
#: The metrics of an evaluation point a diverged seed did not reach.
EMPTY_METRICS: dict[str, Any] = {"train_loss": math.nan, "train_accuracy": 0.0,
                                 **{f"{p}_{m}": (0.0 if m == "accuracy" else math.nan)
                                    for p in (*EVAL_SETS, "val") for m in ("accuracy", "loss")}}


def member_losses(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy per member (K,) for logits (K, B, 8), labels (K, B); one member: torch's own mean, as the
    one-seed loop computed it."""
    k, b, c = logits.shape
    if k == 1:
        return F.cross_entropy(logits[0], labels[0]).unsqueeze(0)
    return F.cross_entropy(logits.reshape(k * b, c), labels.reshape(k * b), reduction="none").view(k, b).mean(1)


class Stack:
    """The members (configs x seeds) of one trial trained as one model; :meth:`train` runs it to the end.

    Args:
        configs: one config per member (they may differ only in the learning rate; the family passes one config
            for every seed). seeds: one per member. device: where it trains. on_eval: gets every row as it is
            produced (its answer is not read: a CTL model trains its whole budget).
    """

    def __init__(self, configs: Sequence[CTLConfig], seeds: Sequence[int], *, device: str = "cpu",
                 on_eval: OnEval | None = None) -> None:
        start = time.perf_counter()
        self.cfg = cfg = configs[0]
        r = cfg.resolved()
        self.device = device
        self.splits = encoded_splits(cfg.direction, cfg.holdout_seed)
        self.members = Members(configs, seeds, device=device)
        self.seeds = list(seeds)
        self.rows = [SeedRows(seed, n_params=self.members.n_params, device=device, on_eval=on_eval, start=start)
                     for seed in seeds]
        self.optimizer = StackedAdam(self.members.params, eps=ADAM_EPS,
                                     weight_decay=r["weight_decay"] if r["optimizer"] == "adamw" else 0.0)
        self.lr = torch.tensor([c.resolved()["learning_rate"] for c in configs], dtype=torch.float64, device=device)
        self.clip, self.n_steps = r["grad_clip_norm"], r["n_steps"]
        train = self.splits["train"]
        streams = [torch.Generator().manual_seed(stream_seed(seed, 0, STREAM_SALT)) for seed in seeds]
        self.batches = [length_bucketed_batches(train.lengths, r["batch_size"], g) if r["length_bucketed"]
                        else uniform_batches(len(train), r["batch_size"], g) for g in streams]
        k = self.members.k
        self.step_counter = torch.zeros((), dtype=torch.int64, device=device)
        self.active = torch.ones(k, dtype=torch.bool, device=device)
        self.diverged_at = torch.full((k,), -1, dtype=torch.int64, device=device)
        self.loss_sum = torch.zeros(k, dtype=torch.float64, device=device)
        self.correct_sum = torch.zeros(k, dtype=torch.float64, device=device)
        self.seen = 0

    def _batch(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[int]]:
        """Every member's next batch from its own stream: tokens (K, B, N) padded with 0 to the widest member's
        width N, lengths (K, B), labels (K, B), and each member's own width."""
        parts = [self.splits["train"].batch(next(batches)) for batches in self.batches]
        widths = [int(tokens.shape[1]) for tokens, _, _ in parts]
        n = max(widths)
        tokens = torch.stack([F.pad(t, (0, n - t.shape[1])) for t, _, _ in parts])
        lengths = torch.stack([length for _, length, _ in parts])
        labels = torch.stack([label for _, _, label in parts])
        return tokens.to(self.device), lengths.to(self.device), labels.to(self.device), widths

    def step(self) -> None:
        """One training step of every member still training (a frozen member keeps its parameters)."""
        tokens, lengths, labels, widths = self._batch()
        logits = self.members(tokens, lengths, widths)  # (K, B, 8)
        losses = member_losses(logits, labels)
        active = self.active & torch.isfinite(losses.detach())
        self.diverged_at = torch.where(self.active & ~active, self.step_counter, self.diverged_at)
        self.active = active
        for p in self.members.params:
            p.grad = None
        torch.autograd.backward(torch.where(active, losses, torch.zeros_like(losses)).sum())
        correct = (logits.detach().argmax(-1) == labels).float().mean(-1)  # (K,)
        self._update(losses.detach(), correct)
        self.step_counter += 1
        self.seen += 1

    @torch.no_grad()
    def _update(self, losses: torch.Tensor, correct: torch.Tensor) -> None:
        """Frozen members' gradients zeroed (theirs may be NaN) and their learning rate 0, each member's gradients
        clipped to its own global norm, one AdamW step, the training sums."""
        active, params = self.active, self.members.params
        grads = [torch.zeros_like(p) if p.grad is None else
                 torch.where(member_view(active, p.dim()), p.grad, torch.zeros_like(p)) for p in params]
        for p, g in zip(params, grads, strict=True):
            p.grad = g
        clip_grad_norm_members_(params, self.clip, stacked=self.members.k > 1)  # scales each p.grad in place
        self.optimizer.step(torch.where(active, self.lr, torch.zeros_like(self.lr)), grads)
        self.loss_sum += torch.where(active, losses.double(), torch.zeros_like(self.loss_sum))
        self.correct_sum += torch.where(active, correct.double(), torch.zeros_like(self.correct_sum))

    def _stop_diverged(self, diverged_at: Sequence[int]) -> None:
        """Members that diverged since the last read stop at the step whose loss was not finite."""
        for rows, at in zip(self.rows, diverged_at, strict=True):
            if at >= 0 and not rows.diverged:
                rows.stop(at, self.cfg.eval_every, self.n_steps, EMPTY_METRICS)

    def _emit(self, step: int) -> None:
        """The rows of evaluation ``step``: training means since the last one, then every evaluation set."""
        columns = torch.stack([self.diverged_at.double(), self.loss_sum, self.correct_sum], dim=1)
        values = columns.cpu().tolist()  # one read: where each member diverged, its training sums
        self._stop_diverged([int(v[0]) for v in values])
        if not all(rows.diverged for rows in self.rows):
            metrics = evaluate_all(self.members, self.splits, self.cfg, self.device)
            if self.cfg.probes is not None:  # what the model does inside: extra columns (trainables.probes)
                inside = probe_columns(self.members, self.splits[PROBE_SPLIT], self.cfg.probes, self.cfg.eval_samples,
                                       self.device, self.cfg.direction)
                metrics = [{**m, **p} for m, p in zip(metrics, inside, strict=True)]
            for rows, v, m in zip(self.rows, values, metrics, strict=True):
                if not rows.diverged:
                    rows.emit(step, step // self.cfg.eval_every,
                              {"train_loss": v[1] / self.seen, "train_accuracy": v[2] / self.seen, **m})
        self.seen = 0
        self.loss_sum.zero_()
        self.correct_sum.zero_()

    def train(self) -> tuple[list[Row], list[Row], list[Row]]:
        """Train to ``n_steps``: (rows member by member, attention probe rows, gate probe rows)."""
        self.members.module.train()
        for step in range(1, self.n_steps + 1):
            self.step()
            if step % self.cfg.eval_every == 0:
                self._emit(step)
                if all(rows.diverged for rows in self.rows):
                    break
        alive = [not rows.diverged for rows in self.rows]
        attention, gates = probe(self.members, self.splits["depth_test"], self.seeds, alive, self.device)
        return [row for rows in self.rows for row in rows.finish()], attention, gates


def train_members(configs: Sequence[CTLConfig], seeds: Sequence[int], *, device: str = "cpu",
                  on_eval: OnEval | None = None) -> tuple[list[Row], list[Row], list[Row]]:
    """Every (config, seed) member (config-major) as one stacked model: (rows, attention rows, gate rows)."""
    member_cfgs = [c for c in configs for _ in seeds]
    member_seeds = [s for _ in configs for s in seeds]
    return Stack(member_cfgs, member_seeds, device=device, on_eval=on_eval).train()


def train_seed(cfg: CTLConfig, seed: int, *, device: str = "cpu", on_eval: OnEval | None = None
               ) -> tuple[list[Row], list[Row], list[Row]]:
    """One seed: the loop at K = 1; returns (rows, attention probe rows, gate probe rows). A non-finite training
    loss stops the seed: the row writer fills its remaining evaluation points (accuracy 0, NaN losses) and marks it
    ``diverged``; a diverged seed has no probe rows."""
    return Stack([cfg], [seed], device=device, on_eval=on_eval).train()
