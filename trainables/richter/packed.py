"""Packed trials: K independent models that share shapes, trained as one stacked model.

The K members are built one by one (``torch.manual_seed(seed); build_model(cfg)``, exactly as a one-seed
run) and stacked by :func:`trainables.stacked.stack_modules`: every parameter gets a leading member axis and
the model's own forward pass (written over leading dimensions, mixers included) runs all members at once
with batched matmuls. One backward pass computes every member's gradients (the summed loss has no
cross-member terms, so member k's gradient is exactly its own). Each member keeps what a separate run has:

* its own initialisation and its own data streams (:mod:`trainables.richter.training`),
* its own learning rate, schedule, clipping switch and L2 weight (configs may differ in those scalars),
* its own Adam state (stacked moments; the step size is a per-member vector),
* per-tensor gradient clipping per member (each member's slice of a stacked gradient is clipped alone).

A member whose training loss is not finite is frozen (its gradients are zeroed and its learning rate is 0
from then on) and its rows are completed by the row writer; the other members go on undisturbed. Rows equal
separate one-seed runs up to float rounding, except with dropout > 0: the dropout masks are drawn from the
one global torch RNG for the whole stack, so they differ from a solo run's (same distribution, not the same
draws).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from trainables.richter.architectures import ARCHITECTURES
from trainables.richter.config import TrainConfig
from trainables.richter.model import build_model
from trainables.richter.tasks import CASES, Task
from trainables.richter.training import (
    ADAM_EPS,
    CASE_EVAL_CHUNK,
    GRAD_CLIP_NORM,
    STREAM_TRAIN,
    STREAM_VAL,
    case_columns,
    case_eval_sets,
    empty_metrics,
    generator,
    learning_rate_at,
    make_task,
)
from trainables.rows import OnEval, Row, SeedRows
from trainables.stacked import count_parameters, member_view, stack_modules

# Fields that may differ between the configs packed into one trial (scalars that change no shape).
PACKABLE_FIELDS: tuple[str, ...] = ("learning_rate", "l2_weight", "init_scale", "warmup", "grad_clip")
# On a CPU, members are packed in groups whose largest activation (B x N x FFN hidden, fp32) fits this budget:
# beyond the caches the stacked elementwise passes run from DRAM and packing gets slower than one model at a
# time (bench/README.md). On a GPU all members are packed together.
CPU_PACK_BYTES = 24 * 2**20
ADAM_BETAS = (0.9, 0.999)  # torch.optim.Adam's defaults, as the one-seed loop uses


class PackedModel:
    """K models of one shape as one stacked module, initialised member by member.

    Args:
        configs: one config per member (they may differ only in :data:`PACKABLE_FIELDS`).
        seeds: one initialisation seed per member.
        device: where the stacked parameters live.
        compile: ``torch.compile`` (inductor) the training forward; evaluation shapes differ, so they run eagerly.
            A string is torch.compile's mode (``reduce-overhead``: CUDA graphs, against launch overhead on GPUs).
    """

    def __init__(
        self, configs: Sequence[TrainConfig], seeds: Sequence[int], *, device: str = "cpu",
        compile: bool | str = False,
    ) -> None:
        if len(configs) != len(seeds) or not configs:
            raise ValueError("need one seed per config and at least one member")
        check_packable(configs)
        models = []
        for c, seed in zip(configs, seeds, strict=True):
            torch.manual_seed(seed)  # exactly as the one-seed loop: the init draws follow the seed
            models.append(build_model(c))
        self.n_params = count_parameters(models[0])
        self.module = stack_modules(models).to(device)
        self.params = dict(self.module.named_parameters())
        self.l2_params = self.module.l2_parameters()
        self.k = len(configs)
        mode = compile if isinstance(compile, str) else None
        self._train_forward = torch.compile(self.module, dynamic=False, mode=mode) if compile else self.module

    def __call__(self, tokens: torch.Tensor, *, training: bool) -> torch.Tensor:
        """Logits (K, B, ...) for tokens (K, B, N)."""
        self.module.train(training)
        return (self._train_forward if training else self.module)(tokens)


def check_packable(configs: Sequence[TrainConfig]) -> None:
    """ValueError naming the field if the configs differ in anything but :data:`PACKABLE_FIELDS`."""
    first = configs[0].to_dict()
    for c in configs[1:]:
        for key, value in c.to_dict().items():
            if key not in PACKABLE_FIELDS and value != first[key]:
                raise ValueError(
                    f"cannot pack configs that differ in {key!r} ({first[key]!r} vs {value!r}); "
                    f"packable: {', '.join(PACKABLE_FIELDS)}"
                )


class PackedAdam:
    """Adam over stacked parameters with a per-member learning rate (torch.optim.Adam's single-tensor math)."""

    def __init__(self, params: Sequence[torch.Tensor], *, eps: float = ADAM_EPS) -> None:
        self.params = list(params)
        self.exp_avg = [torch.zeros_like(p) for p in self.params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in self.params]
        self.eps = eps
        self.n_steps = 0

    @torch.no_grad()
    def step(self, lr: torch.Tensor) -> None:
        """One update with learning rates ``lr`` (K,); a member with lr 0 and zero gradients stays put."""
        beta1, beta2 = ADAM_BETAS
        self.n_steps += 1
        grads = [p.grad for p in self.params]
        torch._foreach_lerp_(self.exp_avg, grads, 1 - beta1)
        torch._foreach_mul_(self.exp_avg_sq, beta2)
        torch._foreach_addcmul_(self.exp_avg_sq, grads, grads, value=1 - beta2)
        bias_correction1 = 1 - beta1**self.n_steps
        bias_correction2_sqrt = math.sqrt(1 - beta2**self.n_steps)
        denom = torch._foreach_sqrt(self.exp_avg_sq)
        torch._foreach_div_(denom, bias_correction2_sqrt)
        torch._foreach_add_(denom, self.eps)
        neg_step = -lr / bias_correction1  # (K,)
        scaled = [m * member_view(neg_step, m.dim()) for m in self.exp_avg]
        torch._foreach_addcdiv_(self.params, scaled, denom)


@torch.no_grad()
def clip_members_(grads: Sequence[torch.Tensor], clip: torch.Tensor, max_norm: float = GRAD_CLIP_NORM) -> None:
    """Per member and per tensor: scale member k's slice of each gradient to norm <= max_norm where clip[k]."""
    for g in grads:
        norms = torch.linalg.vector_norm(g.reshape(g.shape[0], -1), dim=1)  # (K,)
        scale = torch.where(clip, max_norm / torch.clamp(norms, min=max_norm), torch.ones_like(norms))
        g.mul_(member_view(scale, g.dim()))


def member_losses(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy per member (K,) for logits (K, B, C) and labels (K, B)."""
    k, b, c = logits.shape
    return F.cross_entropy(logits.reshape(k * b, c), labels.reshape(k * b), reduction="none").view(k, b).mean(1)


def members_per_pack(cfg: TrainConfig, device: str | torch.device = "cpu") -> int | None:
    """How many members one packed model holds on ``device`` (None: all of them)."""
    if torch.device(device).type != "cpu":
        return None
    arch = ARCHITECTURES.get(cfg.architecture)
    widest = max(arch.ffn_hidden(cfg.d_model), 3 * cfg.d_model)
    return max(1, CPU_PACK_BYTES // (cfg.batch_size * cfg.seq_len * widest * 4))


def train_packed(
    configs: Sequence[TrainConfig],
    seeds: Sequence[int],
    *,
    device: str = "cpu",
    on_eval: OnEval | None = None,
    pack: int | None | str = "auto",
    compile: bool = False,
) -> list[Row]:
    """Train every (config, seed) member packed into stacked models; rows as the one-seed loop's.

    Members are ``configs x seeds`` (config-major). ``configs`` may differ only in :data:`PACKABLE_FIELDS`.
    Every row has the keys of a one-seed row plus ``learning_rate`` (its member's). Rows come back member by
    member (each in step order); ``on_eval`` sees them as they are produced.

    Args:
        pack: members per packed model: ``"auto"`` (:func:`members_per_pack`), None (all at once) or a number;
            the packs train one after another.
        compile: ``torch.compile`` the training forward/backward (about 30 s per shape on this CPU).
    """
    configs = list(configs)
    if not configs or not seeds:
        raise ValueError("train_packed needs at least one config and one seed")
    check_packable(configs)
    member_cfgs = [c for c in configs for _ in seeds]
    member_seeds = [s for _ in configs for s in seeds]
    size = members_per_pack(configs[0], device) if pack == "auto" else pack
    size = len(member_cfgs) if size is None else int(size)
    if size < 1:
        raise ValueError(f"invalid pack={pack!r}; allowed: 'auto', None or an integer >= 1")
    rows: list[Row] = []
    for i in range(0, len(member_cfgs), size):
        pack_run = _Pack(member_cfgs[i : i + size], member_seeds[i : i + size], device=device, on_eval=on_eval,
                         compile=compile)
        rows += pack_run.train()
    return rows


@dataclass
class _Member:
    cfg: TrainConfig
    gen_train: torch.Generator
    gen_val: torch.Generator
    rows: SeedRows
    loss_sum: float = 0.0


class _Pack:
    """One pack of members (config, seed) trained as one stacked model."""

    def __init__(self, member_cfgs: Sequence[TrainConfig], member_seeds: Sequence[int], *, device: str,
                 on_eval: OnEval | None, compile: bool) -> None:
        start = time.perf_counter()
        self.model = PackedModel(member_cfgs, member_seeds, device=device, compile=compile)
        self.cfg = cfg = member_cfgs[0]
        self.device = device
        self.task: Task = make_task(cfg)
        case_sets = [case_eval_sets(self.task, cfg, seed, device) for seed in member_seeds]
        self.members = [
            _Member(cfg=c, gen_train=generator(device, seed, STREAM_TRAIN), gen_val=generator(device, seed, STREAM_VAL),
                    rows=SeedRows(seed, n_params=self.model.n_params, device=device, on_eval=on_eval, start=start,
                                  extra={"learning_rate": c.learning_rate}))
            for c, seed in zip(member_cfgs, member_seeds, strict=True)
        ]
        self.has_cases = bool(case_sets[0])
        # Stacked case sets: identical case layout (n per case, in case order) for every member.
        self.case_sets = {split: (torch.stack([s[split][0] for s in case_sets]),
                                  torch.stack([s[split][1] for s in case_sets])) for split in case_sets[0]}
        self.params = list(self.model.params.values())
        self.optimizer = PackedAdam(self.params)
        self.l2 = torch.tensor([c.l2_weight for c in member_cfgs], device=device)
        self.l2_params = self.model.l2_params if bool((self.l2 > 0).any()) else []
        resolved = [c.resolved() for c in member_cfgs]
        self.clip = torch.tensor([bool(r["grad_clip"]) for r in resolved], device=device)
        self.any_clip = any(bool(r["grad_clip"]) for r in resolved)  # decided here, not by a device sync per step
        self.val_seq_len = cfg.resolved()["val_seq_len"]
        self.warmups = [bool(r["warmup"]) for r in resolved]
        self.active = torch.ones(self.model.k, dtype=torch.bool, device=device)

    def _samples(self, seq_len: int, split: str) -> tuple[torch.Tensor, torch.Tensor]:
        """One batch per member from its own generator, stacked: tokens (K, B, N), labels (K, B)."""
        pairs = [self.task.sample(self.cfg.batch_size, seq_len, m.gen_train if split == "train" else m.gen_val)
                 for m in self.members]
        return torch.stack([t for t, _ in pairs]), torch.stack([lab for _, lab in pairs])

    @torch.no_grad()
    def _case_accuracies(self) -> list[dict[str, list[float]]] | None:
        """Per member, the case accuracies of each split (None without cases)."""
        if not self.has_cases:
            return None
        k, per_split = self.model.k, {}
        for split, (tokens, labels) in self.case_sets.items():  # (K, 3n, N), (K, 3n)
            correct = torch.cat([
                self.model(tokens[:, i : i + CASE_EVAL_CHUNK], training=False).argmax(dim=-1)
                == labels[:, i : i + CASE_EVAL_CHUNK]
                for i in range(0, tokens.shape[1], CASE_EVAL_CHUNK)
            ], dim=1).float()  # (K, 3n)
            per_split[split] = correct.view(k, len(CASES), -1).mean(dim=2).tolist()  # (K, 3): case_eval_set's layout
        return [{split: values[i] for split, values in per_split.items()} for i in range(k)]

    @torch.no_grad()
    def _evaluate(self) -> tuple[list[float], list[float], list[dict[str, list[float]]] | None]:
        """Validation loss and accuracy per member (fresh batches at val_seq_len), and the case accuracies."""
        k, cfg = self.model.k, self.cfg
        losses, accs = torch.zeros(k, device=self.device), torch.zeros(k, device=self.device)
        for _ in range(cfg.eval_batches):
            tokens, labels = self._samples(self.val_seq_len, "val")
            logits = self.model(tokens, training=False)
            losses += member_losses(logits, labels)
            accs += (logits.argmax(dim=-1) == labels).float().mean(dim=1)
        return (losses / cfg.eval_batches).tolist(), (accs / cfg.eval_batches).tolist(), self._case_accuracies()

    def _freeze_diverged(self, loss_values: Sequence[float], step: int) -> None:
        """Members whose loss is not finite stop here; the row writer fills their remaining evaluations."""
        cfg = self.cfg
        for i, (m, v) in enumerate(zip(self.members, loss_values, strict=True)):
            if not m.rows.diverged and not math.isfinite(v):
                m.rows.stop(step, cfg.eval_every, cfg.n_steps, empty_metrics(self.has_cases))
                self.active[i] = False

    def _any_diverged(self) -> bool:
        """Whether a member is frozen (the host-side record of ``active``: no device sync)."""
        return any(m.rows.diverged for m in self.members)

    def _all_diverged(self) -> bool:
        return all(m.rows.diverged for m in self.members)

    def _update(self, losses: torch.Tensor, step: int) -> None:
        """Backward of the active members' summed loss (+ L2), per-member clipping, one Adam step."""
        frozen = self._any_diverged()
        total = torch.where(self.active, losses, torch.zeros_like(losses)).sum() if frozen else losses.sum()
        if self.l2_params:
            # Keras l2 of the release per member: l2_weight * sum(w^2), no factor 1/2.
            total = total + sum((self.l2 * w.square().flatten(1).sum(1)).sum() for w in self.l2_params)
        for p in self.params:
            p.grad = None
        total.backward()
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in self.params]
        for p, g in zip(self.params, grads, strict=True):
            p.grad = g
        if frozen:  # frozen members: no gradient at all (theirs may be NaN), and lr 0 below
            for g in grads:
                g.copy_(torch.where(member_view(self.active, g.dim()), g, torch.zeros_like(g)))
        if self.any_clip:
            clip_members_(grads, self.clip)
        lrs = [learning_rate_at(step, n_steps=self.cfg.n_steps, learning_rate=m.cfg.learning_rate, warmup=w)
               if not m.rows.diverged else 0.0 for m, w in zip(self.members, self.warmups, strict=True)]
        self.optimizer.step(torch.tensor(lrs, device=self.device, dtype=self.params[0].dtype))

    def _emit(self, step: int, correct_sum: torch.Tensor, seen_batches: int) -> None:
        val_loss, val_acc, cases = self._evaluate()
        train_acc = (correct_sum / seen_batches).tolist()
        for i, m in enumerate(self.members):
            if m.rows.diverged:
                continue
            m.rows.emit(step, step // self.cfg.eval_every, {
                "train_loss": m.loss_sum / seen_batches, "train_accuracy": train_acc[i],
                "val_loss": val_loss[i], "val_accuracy": val_acc[i],
                **case_columns(self.has_cases, None if cases is None else cases[i]),
            })
            m.loss_sum = 0.0

    def train(self) -> list[Row]:
        """Train the pack to ``n_steps``; the members' rows, member by member."""
        cfg, k = self.cfg, self.model.k
        correct_sum, seen_batches = torch.zeros(k, device=self.device), 0
        step = 0
        while step < cfg.n_steps and not self._all_diverged():
            tokens, labels = self._samples(cfg.seq_len, "train")
            logits = self.model(tokens, training=True)
            losses = member_losses(logits, labels)  # (K,)
            loss_values = losses.detach().tolist()  # the one host sync per step, as the one-seed loop
            self._freeze_diverged(loss_values, step)
            if self._all_diverged():
                break
            self._update(losses, step)
            step += 1
            for m, v in zip(self.members, loss_values, strict=True):
                m.loss_sum += v
            correct_sum += (logits.detach().argmax(dim=-1) == labels).float().mean(dim=1)
            seen_batches += 1
            if step % cfg.eval_every == 0:
                self._emit(step, correct_sum, seen_batches)
                seen_batches = 0
                correct_sum.zero_()
        return [row for m in self.members for row in m.rows.finish()]
