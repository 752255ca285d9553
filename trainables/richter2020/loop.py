"""The Richter family's training loop: K members (config, seed) trained as one stacked model; one seed is K = 1.

The K members are built one by one (``torch.manual_seed(seed); build_model(cfg)``) and stacked by
:func:`trainables.stacked.stack_modules`: every parameter gets a leading member axis and the model's own
forward pass (written over leading dimensions, mixers included) runs all members at once with batched
matmuls. One member needs no stack: it trains its own model, whose layers are then ``nn``'s own calls. One
backward pass computes every member's gradients (the summed loss has no cross-member terms, so member k's
gradient is exactly its own). Each member keeps what it would have alone:

* its own initialisation and its own data streams (:mod:`trainables.richter2020.recipe`),
* its own learning rate, schedule, clipping switch and L2 weight (configs may differ in those scalars),
* its own Adam state (:class:`trainables.stacked.StackedAdam`: stacked moments, a per-member step size),
* per-tensor gradient clipping per member (each member's slice of a stacked gradient is clipped alone).

One row per evaluation (``docs/results.md``). A member whose training loss is not finite is frozen (its
gradients are zeroed and its learning rate is 0 from then on) and its rows are completed by the row writer;
the other members go on undisturbed. K members' rows equal K one-seed runs up to float rounding, except with
dropout > 0: the dropout masks are drawn from the one global torch RNG for the whole stack, so they differ from
a one-seed run's (same distribution, not the same draws). The caller sets ``torch.set_num_threads``.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from trainables.families import PackingWarning
from trainables.richter2020.architectures import ARCHITECTURES
from trainables.richter2020.config import TrainConfig
from trainables.richter2020.model import build_model
from trainables.richter2020.recipe import (
    ADAM_EPS,
    CASE_EVAL_CHUNK,
    STREAM_TRAIN,
    STREAM_VAL,
    case_columns,
    case_eval_sets,
    clip_members_,
    empty_metrics,
    generator,
    learning_rate_at,
    make_task,
    member_losses,
)
from trainables.richter2020.tasks import CASES, Task
from trainables.rows import OnEval, Row, SeedRows
from trainables.stacked import StackedAdam, count_parameters, member_view, stack_modules

# Fields that may differ between the configs packed into one trial (scalars that change no shape).
PACKABLE_FIELDS: tuple[str, ...] = ("learning_rate", "l2_weight", "init_scale", "warmup", "grad_clip")
# On a CPU, members are packed in groups whose largest activation (B x N x FFN hidden, fp32) fits this budget:
# beyond the caches the stacked elementwise passes run from DRAM and packing gets slower than one model at a
# time (bench/README.md). On a GPU all members are packed together.
CPU_PACK_BYTES = 24 * 2**20


class Members:
    """K models of one shape, initialised member by member: one stacked module (K > 1) or the model itself.

    Args:
        configs: one config per member (they may differ only in :data:`PACKABLE_FIELDS`).
        seeds: one initialisation seed per member.
        device: where the parameters live.
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
            torch.manual_seed(seed)  # the init draws follow the seed
            models.append(build_model(c))
        self.k = len(configs)
        self.n_params = count_parameters(models[0])
        self.module = (models[0] if self.k == 1 else stack_modules(models)).to(device)
        self.params = list(self.module.parameters())
        self.l2_params = self.module.l2_parameters()
        mode = compile if isinstance(compile, str) else None
        self._train_forward = torch.compile(self.module, dynamic=False, mode=mode) if compile else self.module

    def __call__(self, tokens: torch.Tensor, *, training: bool) -> torch.Tensor:
        """Logits (K, B, ...) for tokens (K, B, N)."""
        self.module.train(training)
        forward = self._train_forward if training else self.module
        return forward(tokens) if self.k > 1 else forward(tokens[0]).unsqueeze(0)


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


def members_per_pack(cfg: TrainConfig, device: str | torch.device = "cpu") -> int | None:
    """How many members one stacked model holds on ``device`` (None: all of them)."""
    if torch.device(device).type != "cpu":
        return None
    return max(1, CPU_PACK_BYTES // member_bytes(cfg))


def member_bytes(cfg: TrainConfig) -> int:
    """One member's largest activation in bytes: B x N x (the FFN's hidden width or the 3d of q, k, v), float32."""
    arch = ARCHITECTURES.get(cfg.architecture)
    return cfg.batch_size * cfg.seq_len * max(arch.ffn_hidden(cfg.d_model), 3 * cfg.d_model) * 4


def _warn_unpacked(cfg: TrainConfig, members: int, device: str | torch.device) -> None:
    """A PackingWarning: packing was decided, but one member's activations exceed the CPU budget alone."""
    warnings.warn(f"packing asked for, but these {members} members train one after another on {device}: one "
                  f"member's largest activation ({member_bytes(cfg) / 2**20:.1f} MiB: batch {cfg.batch_size} x length "
                  f"{cfg.seq_len} x width, float32) exceeds the CPU packing budget of {CPU_PACK_BYTES / 2**20:.0f} MiB "
                  "(trainables/richter2020/loop.py CPU_PACK_BYTES)", PackingWarning, stacklevel=3)


def train_members(
    configs: Sequence[TrainConfig],
    seeds: Sequence[int],
    *,
    device: str = "cpu",
    on_eval: OnEval | None = None,
    pack: int | None | str = "auto",
    compile: bool = False,
) -> list[Row]:
    """Train every (config, seed) member, ``pack`` members per stacked model; one row per evaluation.

    Members are ``configs x seeds`` (config-major). ``configs`` may differ only in :data:`PACKABLE_FIELDS`.
    Row keys: seed, step, epoch, train_loss, train_accuracy, val_loss, val_accuracy,
    {train,val}_{argmin,first,argmax}_accuracy (None unless a cases task), status, wall_time_s, n_params,
    device, learning_rate (the member's). Rows come back member by member (each in step order); ``on_eval``
    sees them as they are produced.

    Args:
        pack: members per stacked model: ``"auto"`` (:func:`members_per_pack`), None (all at once) or a number
            (1: one seed at a time); the packs train one after another.
        compile: ``torch.compile`` the training forward/backward (about 30 s per shape on this CPU).
    """
    configs = list(configs)
    if not configs or not seeds:
        raise ValueError("train_members needs at least one config and one seed")
    check_packable(configs)
    member_cfgs = [c for c in configs for _ in seeds]
    member_seeds = [s for _ in configs for s in seeds]
    size = members_per_pack(configs[0], device) if pack == "auto" else pack
    size = len(member_cfgs) if size is None else int(size)
    if pack == "auto" and size == 1 < len(member_cfgs):
        _warn_unpacked(configs[0], len(member_cfgs), device)
    if size < 1:
        raise ValueError(f"invalid pack={pack!r}; allowed: 'auto', None or an integer >= 1")
    rows: list[Row] = []
    for i in range(0, len(member_cfgs), size):
        rows += Pack(member_cfgs[i : i + size], member_seeds[i : i + size], device=device, on_eval=on_eval,
                     compile=compile).train()
    return rows


def train_seed(cfg: TrainConfig, seed: int, *, device: str = "cpu", on_eval: OnEval | None = None) -> list[Row]:
    """One model: the loop at K = 1 (:func:`train_members`' rows for one member)."""
    return train_members([cfg], [seed], device=device, on_eval=on_eval, pack=1)


@dataclass
class _Member:
    cfg: TrainConfig
    gen_train: torch.Generator
    gen_val: torch.Generator
    rows: SeedRows
    loss_sum: float = 0.0


class Pack:
    """One pack of members (config, seed) trained as one model; :meth:`step` is one training step of all."""

    def __init__(self, member_cfgs: Sequence[TrainConfig], member_seeds: Sequence[int], *, device: str = "cpu",
                 on_eval: OnEval | None = None, compile: bool | str = False) -> None:
        start = time.perf_counter()
        self.model = Members(member_cfgs, member_seeds, device=device, compile=compile)
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
        self.params = self.model.params
        self.optimizer = StackedAdam(self.params, eps=ADAM_EPS)
        self.l2 = torch.tensor([c.l2_weight for c in member_cfgs], device=device)
        self.l2_params = self.model.l2_params if bool((self.l2 > 0).any()) else []
        resolved = [c.resolved() for c in member_cfgs]
        self.clip = torch.tensor([bool(r["grad_clip"]) for r in resolved], device=device)
        self.any_clip = any(bool(r["grad_clip"]) for r in resolved)  # decided here, not by a device sync per step
        self.val_seq_len = cfg.resolved()["val_seq_len"]
        self.warmups = [bool(r["warmup"]) for r in resolved]
        self.active = torch.ones(self.model.k, dtype=torch.bool, device=device)
        # Since the last evaluation: summed accuracies (on the device: one host sync per step, the losses), steps.
        self.correct_sum, self.seen_batches = torch.zeros(self.model.k, device=device), 0

    def _samples(self, seq_len: int, split: str) -> tuple[torch.Tensor, torch.Tensor]:
        """One batch per member from its own generator, stacked: tokens (K, B, N), labels (K, B). Only the draws go
        member by member; the K batches are labelled in one call (the per-member label kernels were most of the
        launches that grow with K on a GPU: bench/README.md section 10)."""
        generators = [m.gen_train if split == "train" else m.gen_val for m in self.members]
        if type(self.task).sample is not Task.sample:  # a batch that is more than the labels of its draw
            pairs = [self.task.sample(self.cfg.batch_size, seq_len, g) for g in generators]
            return torch.stack([t for t, _ in pairs]), torch.stack([lab for _, lab in pairs])
        tokens = torch.stack([self.task.draw(self.cfg.batch_size, seq_len, g) for g in generators])  # (K, B, N)
        return tokens, self.task.labels(tokens.flatten(0, 1)).view(tokens.shape[:2])

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
        # Summed in float64, as Python floats would be: a float32 run's means do not depend on K.
        losses, accs = (torch.zeros(k, dtype=torch.float64, device=self.device) for _ in range(2))
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
            k = self.model.k
            total = total + sum((self.l2 * w.square().reshape(k, -1).sum(1)).sum() for w in self.l2_params)
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
        self.optimizer.step(torch.tensor(lrs, dtype=torch.float64, device=self.device))

    def step(self, step: int) -> bool:
        """Training step ``step`` (0-based) of every member still training; False when none is left."""
        tokens, labels = self._samples(self.cfg.seq_len, "train")
        logits = self.model(tokens, training=True)
        losses = member_losses(logits, labels)  # (K,)
        loss_values = losses.detach().tolist()  # the one host sync per step
        self._freeze_diverged(loss_values, step)
        if self._all_diverged():
            return False
        self._update(losses, step)
        for m, v in zip(self.members, loss_values, strict=True):
            m.loss_sum += v
        self.correct_sum += (logits.detach().argmax(dim=-1) == labels).float().mean(dim=1)
        self.seen_batches += 1
        return True

    def _emit(self, step: int) -> bool:
        """The rows of evaluation ``step``; the training sums start again. Whether the pack stops here: the answer to
        its last member's row (by then every member's row of this step is known to on_eval)."""
        val_loss, val_acc, cases = self._evaluate()
        seen = self.seen_batches
        train_acc = [c / seen for c in self.correct_sum.tolist()]
        stop = False
        for i, m in enumerate(self.members):
            if m.rows.diverged:
                continue
            stop = m.rows.emit(step, step // self.cfg.eval_every, {
                "train_loss": m.loss_sum / seen, "train_accuracy": train_acc[i],
                "val_loss": val_loss[i], "val_accuracy": val_acc[i],
                **case_columns(self.has_cases, None if cases is None else cases[i]),
            })
            m.loss_sum = 0.0
        self.seen_batches = 0
        self.correct_sum.zero_()
        return stop

    def train(self) -> list[Row]:
        """Train the pack to ``n_steps``; the members' rows, member by member."""
        step = 0
        while step < self.cfg.n_steps and self.step(step):
            step += 1
            if step % self.cfg.eval_every == 0 and self._emit(step) and step < self.cfg.n_steps:
                for m in self.members:  # nothing the study reads can change any more (trainables.rows)
                    m.rows.stop_here()
                break
        return [row for m in self.members for row in m.rows.finish()]
