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

One row per evaluation (``docs/results.md``); with ``probes`` asked it also holds the ``probe_*`` columns of
:mod:`trainables.richter2020.inside`. A member whose training loss is not finite is frozen (its
gradients are zeroed and its learning rate is 0 from then on) and its rows are completed by the row writer;
the other members go on undisturbed. K members' rows equal K one-seed runs up to float rounding, except with
dropout > 0: the dropout masks are drawn from the one global torch RNG for the whole stack, so they differ from
a one-seed run's (same distribution, not the same draws). The caller sets ``torch.set_num_threads``.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence

import torch

from trainables.compiling import compile_mode, compiled
from trainables.counter_draws import Draws
from trainables.families import PackingWarning
from trainables.richter2020.architectures import ARCHITECTURES
from trainables.richter2020.config import TrainConfig
from trainables.richter2020.fit import gpu_budget, members_that_fit, peak_bytes
from trainables.richter2020.inside import PROBE_EXAMPLES, probe_columns
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
    learning_rates,
    make_task,
    member_losses,
    stream_keys,
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
    """

    def __init__(self, configs: Sequence[TrainConfig], seeds: Sequence[int], *, device: str = "cpu") -> None:
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

    def __call__(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits (K, B, ...) for tokens (K, B, N), in the module's current mode (``module.train(...)``: set outside
        compiled code, so a compiled graph never changes it)."""
        logits: torch.Tensor = self.module(tokens) if self.k > 1 else self.module(tokens[0]).unsqueeze(0)
        return logits


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
    """How many members one stacked model holds on ``device`` (None: all of them): on the CPU a budget of the largest
    activation, on CUDA what one measured step says fits the trial's share of the GPU (:mod:`.fit`)."""
    kind = torch.device(device).type
    if kind == "cuda":
        def probe(k: int) -> int:  # a pack of k members built, stepped, evaluated and dropped
            return peak_bytes(lambda: Pack([cfg] * k, list(range(k)), device=str(device), compile=False).probe(),
                              device)

        return members_that_fit(probe, gpu_budget(device))
    if kind != "cpu":
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
    compile: bool | str | None = "auto",
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
        compile: ``"auto"``: as the trial's compile setting says for ``device`` (:mod:`trainables.compiling`);
            True / a torch.compile mode: compiled; False / None: eager.
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
    if compile == "auto":
        compile = compile_mode(device)
    rows: list[Row] = []
    for i in range(0, len(member_cfgs), size):
        rows += Pack(member_cfgs[i : i + size], member_seeds[i : i + size], device=device, on_eval=on_eval,
                     compile=compile).train()
    return rows


def train_seed(cfg: TrainConfig, seed: int, *, device: str = "cpu", on_eval: OnEval | None = None) -> list[Row]:
    """One model: the loop at K = 1 (:func:`train_members`' rows for one member)."""
    return train_members([cfg], [seed], device=device, on_eval=on_eval, pack=1)


class Pack:
    """One pack of members (config, seed) trained as one model; :meth:`step` is one training step of all.

    Nothing in a step waits for the device: a member whose loss is not finite is found and frozen there (``active``,
    ``diverged_at``), losses and accuracies are summed there, the step counter, learning rates and Adam's step count
    live there; the host reads once per evaluation (:meth:`_read_back`). ``compile``: the sampling, the forward with
    its loss (and so its backward) and the update (masking, clipping, Adam) each run as one compiled graph
    (:mod:`trainables.compiling`); eager otherwise, the same code.
    """

    def __init__(self, member_cfgs: Sequence[TrainConfig], member_seeds: Sequence[int], *, device: str = "cpu",
                 on_eval: OnEval | None = None, compile: bool | str | None = False) -> None:
        start = time.perf_counter()
        self.model = Members(member_cfgs, member_seeds, device=device)
        self.cfg = cfg = member_cfgs[0]
        self.device = device
        self.task: Task = make_task(cfg)
        self.rows = [SeedRows(seed, n_params=self.model.n_params, device=device, on_eval=on_eval, start=start,
                              extra={"learning_rate": c.learning_rate})
                     for c, seed in zip(member_cfgs, member_seeds, strict=True)]
        self.case_sets = case_eval_sets(self.task, cfg, member_seeds, device)
        self.has_cases = bool(self.case_sets)
        self.train_keys = stream_keys(member_seeds, STREAM_TRAIN, device)
        self.val_keys = stream_keys(member_seeds, STREAM_VAL, device)
        self.params = self.model.params
        self.optimizer = StackedAdam(self.params, eps=ADAM_EPS)
        self.l2 = torch.tensor([c.l2_weight for c in member_cfgs], device=device)
        self.l2_params = self.model.l2_params if any(c.l2_weight > 0 for c in member_cfgs) else []
        resolved = [c.resolved() for c in member_cfgs]
        self.clip = torch.tensor([bool(r["grad_clip"]) for r in resolved], device=device)
        self.any_clip = any(bool(r["grad_clip"]) for r in resolved)  # decided here, not by a device sync per step
        self.base_lr = torch.tensor([c.learning_rate for c in member_cfgs], dtype=torch.float64, device=device)
        self.warmup = torch.tensor([bool(r["warmup"]) for r in resolved], device=device)
        self.val_seq_len = cfg.resolved()["val_seq_len"]
        k = self.model.k
        # The device-side state of a step: counters (a training batch is a function of (seed, step), a validation
        # batch of (seed, j)), which members still train and where each stopped, the sums since the last evaluation.
        self.step_counter = torch.zeros((), dtype=torch.int64, device=device)
        self.val_counter = torch.zeros((), dtype=torch.int64, device=device)
        self.active = torch.ones(k, dtype=torch.bool, device=device)
        self.diverged_at = torch.full((k,), -1, dtype=torch.int64, device=device)
        self.loss_sum = torch.zeros(k, dtype=torch.float64, device=device)
        self.correct_sum = torch.zeros(k, device=device)
        self.seen_batches = 0
        self._sample_train = compiled(self._sample, compile)
        self._forward_loss = compiled(self._forward_and_losses, compile)
        self._apply_update = compiled(self._update, compile)
        self._validation_fn = compiled(self._validation_batch, compile)
        self._case_chunk_fn = compiled(self._case_chunk, compile)
        # The probes' input (trainables.richter2020.inside): each member's first validation batch, drawn by counter.
        self.probe_tokens = None if cfg.probes is None else self._sample(
            self.val_keys, torch.zeros((), dtype=torch.int64, device=device), self.val_seq_len)[0][:, :PROBE_EXAMPLES]

    def _sample(self, keys: torch.Tensor, counter: torch.Tensor, seq_len: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Every member's batch of ``counter`` in one call: tokens (K, B, N), labels (K, B)."""
        return self.task.sample(self.cfg.batch_size, seq_len, Draws(keys, counter))

    @torch.no_grad()
    def _case_chunk(self, tokens: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """(K, n) whether each example of a chunk of a case set is predicted right."""
        return (self.model(tokens).argmax(dim=-1) == labels).float()

    def _case_accuracies(self) -> torch.Tensor | None:
        """(K, splits, 3) case accuracies, on the device (None without cases)."""
        if not self.has_cases:
            return None
        k, per_split = self.model.k, []
        for tokens, labels in self.case_sets.values():  # (K, 3n, N), (K, 3n)
            correct = torch.cat([
                self._case_chunk_fn(tokens[:, i : i + CASE_EVAL_CHUNK], labels[:, i : i + CASE_EVAL_CHUNK])
                for i in range(0, tokens.shape[1], CASE_EVAL_CHUNK)
            ], dim=1)  # (K, 3n)
            per_split.append(correct.view(k, len(CASES), -1).mean(dim=2))  # (K, 3): case_eval_set's layout
        return torch.stack(per_split, dim=1)

    @torch.no_grad()
    def _validation_batch(self, counter: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Validation batch ``counter`` of every member: its losses (K,) and accuracies (K,)."""
        tokens, labels = self._sample(self.val_keys, counter, self.val_seq_len)
        logits = self.model(tokens)
        return member_losses(logits, labels), (logits.argmax(dim=-1) == labels).float().mean(dim=1)

    def _evaluate(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Validation loss and accuracy sums per member (fresh batches at val_seq_len), on the device."""
        k = self.model.k
        # Summed in float64, as Python floats would be: a float32 run's means do not depend on K.
        losses, accs = (torch.zeros(k, dtype=torch.float64, device=self.device) for _ in range(2))
        for _ in range(self.cfg.eval_batches):
            loss, acc = self._validation_fn(self.val_counter)
            self.val_counter += 1
            losses += loss
            accs += acc
        return losses, accs

    def _forward_and_losses(
        self, tokens: torch.Tensor, labels: torch.Tensor, active: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """The summed training loss of the members still finite (+ L2), their losses (K,), accuracies (K,) and
        which members are still active (a non-finite loss freezes its member from this step on)."""
        logits = self.model(tokens)
        losses = member_losses(logits, labels)  # (K,)
        active = active & torch.isfinite(losses.detach())
        total = torch.where(active, losses, torch.zeros_like(losses)).sum()
        if self.l2_params:
            # Keras l2 of the release per member: l2_weight * sum(w^2), no factor 1/2.
            k = self.model.k
            total = total + sum((self.l2 * w.square().reshape(k, -1).sum(1)).sum() for w in self.l2_params)
        correct = (logits.detach().argmax(dim=-1) == labels).float().mean(dim=1)
        return total, losses.detach(), correct, active

    @torch.no_grad()
    def _update(self, losses: torch.Tensor, correct: torch.Tensor) -> None:
        """Frozen members' gradients zeroed (theirs may be NaN) and their learning rate 0, per-member clipping, one
        Adam step at each member's scheduled rate, the training sums."""
        active = self.active
        grads = [torch.zeros_like(p) if p.grad is None else
                 torch.where(member_view(active, p.dim()), p.grad, torch.zeros_like(p)) for p in self.params]
        if self.any_clip:
            clip_members_(grads, self.clip)
        lrs = learning_rates(self.step_counter.to(torch.float64), self.base_lr, self.warmup, self.cfg.n_steps)
        self.optimizer.step(torch.where(active, lrs, torch.zeros_like(lrs)), grads)
        self.loss_sum += torch.where(active, losses.to(torch.float64), torch.zeros_like(self.loss_sum))
        self.correct_sum += torch.where(active, correct, torch.zeros_like(correct))

    def step(self) -> None:
        """One training step of every member still training (frozen members keep their parameters)."""
        tokens, labels = self._sample_train(self.train_keys, self.step_counter, self.cfg.seq_len)
        self.model.module.train(True)
        total, losses, correct, active = self._forward_loss(tokens, labels, self.active)
        self.diverged_at = torch.where(self.active & ~active, self.step_counter, self.diverged_at)
        self.active = active
        for p in self.params:
            p.grad = None
        torch.autograd.backward(total)
        self._apply_update(losses, correct)
        self.step_counter += 1
        self.seen_batches += 1

    def probe(self) -> None:
        """One step and one evaluation, nothing recorded: the work whose memory :mod:`.fit` measures."""
        self.step()
        self._read_back()

    def _read_back(self) -> tuple[list[int], list[list[float]]]:
        """The one read of an evaluation: where each member diverged (-1: it did not) and, per member, its training
        loss and accuracy sums, validation loss and accuracy sums and case accuracies (flattened)."""
        self.model.module.train(False)
        val_loss, val_acc = self._evaluate()
        # diverged_at rides along as a float64 column: a step count is exact there, and one copy is one sync
        columns = [self.diverged_at.to(torch.float64), self.loss_sum, self.correct_sum.to(torch.float64), val_loss,
                   val_acc]
        cases = self._case_accuracies()
        if cases is not None:
            columns.append(cases.flatten(1).to(torch.float64))
        values = torch.column_stack(columns).cpu().tolist()  # the host sync of this evaluation
        return [int(v[0]) for v in values], [v[1:] for v in values]

    def _stop_diverged(self, diverged_at: Sequence[int]) -> None:
        """Members that diverged since the last read stop at the step whose loss was not finite."""
        cfg = self.cfg
        for rows, at in zip(self.rows, diverged_at, strict=True):
            if at >= 0 and not rows.diverged:
                rows.stop(at, cfg.eval_every, cfg.n_steps, empty_metrics(self.has_cases))

    def _emit(self, step: int) -> bool:
        """The rows of evaluation ``step``; the training sums start again. Whether the pack stops here: the answer to
        its last member's row (by then every member's row of this step is known to on_eval)."""
        diverged_at, values = self._read_back()
        self._stop_diverged(diverged_at)
        seen, stop = self.seen_batches, False
        eval_batches = self.cfg.eval_batches
        inside: list[dict[str, float]] = [{}] * self.model.k
        if self.probe_tokens is not None:  # what the model does inside: extra columns (trainables.probes)
            inside = probe_columns(self.model.module, self.probe_tokens, self.cfg.probes, self.model.k)
        for rows, v, probed in zip(self.rows, values, inside, strict=True):
            if rows.diverged:
                continue
            cases = None
            if self.has_cases:
                cases = {split: v[4 + 3 * i : 7 + 3 * i] for i, split in enumerate(self.case_sets)}
            stop = rows.emit(step, step // self.cfg.eval_every, {
                "train_loss": v[0] / seen, "train_accuracy": v[1] / seen,
                "val_loss": v[2] / eval_batches, "val_accuracy": v[3] / eval_batches,
                **case_columns(self.has_cases, cases), **probed,
            })
        self.seen_batches = 0
        self.loss_sum.zero_()
        self.correct_sum.zero_()
        return stop

    def train(self) -> list[Row]:
        """Train the pack to ``n_steps``; the members' rows, member by member."""
        cfg = self.cfg
        for step in range(1, cfg.n_steps + 1):
            self.step()
            if step % cfg.eval_every == 0:
                if self._emit(step) and step < cfg.n_steps:
                    for rows in self.rows:  # nothing the study reads can change any more (trainables.rows)
                        rows.stop_here()
                    break
                if all(rows.diverged for rows in self.rows):
                    break
        self._stop_diverged(self.diverged_at.cpu().tolist())  # a divergence after the last evaluation
        return [row for rows in self.rows for row in rows.finish()]
