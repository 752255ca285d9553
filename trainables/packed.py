"""Packed trials: K independent models that share shapes, trained as one stacked model.

Every parameter of the K members is stacked along a leading member axis (``(K, ...)``); the forward pass
runs all members at once with batched matmuls (``torch.baddbmm`` for the dense layers, one
``scaled_dot_product_attention`` call over the K*B*H batch for softmax, the O(N d_h^2) forms of NAP/NON);
one backward pass computes every member's gradients (the summed loss has no cross-member terms, so
member k's gradient is exactly its own). Each member keeps what a separate run has:

* its own initialisation (``torch.manual_seed(seed); build_model(cfg)``, then stacked),
* its own data streams (the same three generators as :func:`trainables.loop.train_seed`),
* its own learning rate, schedule, clipping switch and L2 weight (configs may differ in those scalars),
* its own Adam state (stacked moments; the step size is a per-member vector),
* per-tensor gradient clipping per member (each member's slice of a stacked gradient is clipped alone).

A member whose training loss is not finite is frozen (its gradients are zeroed and its learning rate is 0
from then on) and its rows are completed exactly like ``train_seed`` does; the other members go on
undisturbed. Rows equal separate ``train_seed`` runs up to float rounding, except with dropout > 0: the
dropout masks are drawn from the one global torch RNG for the whole stack, so they differ from a solo run's
(same distribution, not the same draws).

Why stacked weights and not ``torch.func.vmap(functional_call)``: both give batched matmuls, but the explicit
form lets every mixer pick its fused kernel over the flattened K*B*H batch (SDPA needs 4-D inputs for the CPU
flash kernel), keeps LayerNorm's affine in one ``addcmul``, and has no vmap fallbacks or per-call overhead.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from trainables.architectures import ARCHITECTURES
from trainables.config import TrainConfig
from trainables.loop import (
    _STREAM_CASES,
    _STREAM_TRAIN,
    _STREAM_VAL,
    ADAM_EPS,
    CASE_EVAL_CHUNK,
    GRAD_CLIP_NORM,
    OnEval,
    _generator,
    learning_rate_at,
    make_task,
    stream_seed,
)
from trainables.mixers.normalized import NORMALIZE_EPS
from trainables.model import LN_EPS, build_model, count_parameters
from trainables.registry import Registry
from trainables.tasks import CASES, TASKS
from trainables.tasks.cases import CasesTask

# Fields that may differ between the configs packed into one trial (scalars that change no shape).
PACKABLE_FIELDS: tuple[str, ...] = ("learning_rate", "l2_weight", "init_scale", "warmup", "grad_clip")
# On a CPU, members are packed in groups whose largest activation (B x N x FFN hidden, fp32) fits this budget:
# beyond the caches the stacked elementwise passes run from DRAM and packing gets slower than one model at a
# time (bench/README.md). On a GPU all members are packed together.
CPU_PACK_BYTES = 24 * 2**20

Params = dict[str, torch.Tensor]
ADAM_BETAS = (0.9, 0.999)  # torch.optim.Adam's defaults, as train_seed uses


# --------------------------------------------------------------------------------------------- primitives
def member_view(v: torch.Tensor, ndim: int) -> torch.Tensor:
    """A per-member vector (K,) viewed as (K, 1, ..., 1) to broadcast against a tensor of ``ndim`` dims."""
    return v.view(-1, *([1] * (ndim - 1)))


def linear(p: Params, name: str, x: torch.Tensor) -> torch.Tensor:
    """Stacked dense layer: x (K, ..., in) -> (K, ..., out) with weight (K, out, in) and bias (K, out)."""
    w, b = p[name + ".weight"], p[name + ".bias"]
    k, n_in = x.shape[0], x.shape[-1]
    y = torch.baddbmm(b.unsqueeze(1), x.reshape(k, -1, n_in), w.transpose(1, 2))  # (K, M, out)
    return y.view(*x.shape[:-1], w.shape[1])


def layer_norm(p: Params, name: str, x: torch.Tensor) -> torch.Tensor:
    """Stacked LayerNorm over the last dim (eps 1e-3); the per-member affine is one addcmul."""
    d = x.shape[-1]
    shape = (x.shape[0],) + (1,) * (x.dim() - 2) + (d,)  # (K, 1, ..., d)
    xn = F.layer_norm(x, (d,), eps=LN_EPS)
    return torch.addcmul(p[name + ".bias"].view(shape), xn, p[name + ".weight"].view(shape))


def gelu(x: torch.Tensor) -> torch.Tensor:
    """GELU, tanh approximation (as the model)."""
    return F.gelu(x, approximate="tanh")


@dataclass(frozen=True)
class Shape:
    """What a packed forward pass needs to know about the (shared) architecture."""

    mixers: tuple[str, ...]  # one mixer per layer, bottom first (Yun et al.'s hybrid stacks may differ)
    n_heads: int
    pre_residual: bool
    attention_gelu: bool
    dropout: float
    head: str
    positional: bool
    max_seq_len: int
    vocab_size: int


# ------------------------------------------------------------------------------------------------ mixers
PackedMixer = Callable[[Params, str, torch.Tensor, Shape, bool], torch.Tensor]
PACKED_MIXERS: Registry[PackedMixer] = Registry("packed mixer")


def _heads(p: Params, name: str, x: torch.Tensor, s: Shape) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Queries, keys, values, each (K, B, H, N, d_h) (views of one qkv projection)."""
    k, b, n, d = x.shape
    qkv = linear(p, name + ".qkv", x).view(k, b, n, 3, s.n_heads, d // s.n_heads)  # (K, B, N, 3, H, d_h)
    q, kk, v = qkv.permute(3, 0, 1, 4, 2, 5).unbind(0)  # 3 x (K, B, H, N, d_h)
    return q, kk, v


def _mix(p: Params, name: str, o: torch.Tensor, s: Shape, hidden_norm: bool) -> torch.Tensor:
    """Head outputs (K, B, H, N, d_h) -> concatenated (K, B, N, d) -> the output step."""
    k, b, h, n, dh = o.shape
    return _output(p, name, o.transpose(2, 3).reshape(k, b, n, h * dh), s, hidden_norm)


def _output(p: Params, name: str, o: torch.Tensor, s: Shape, hidden_norm: bool) -> torch.Tensor:
    """Mixer.output packed: (K, B, N, d) -> [hidden LN] -> [GELU] -> mixing linear W_O."""
    if hidden_norm:
        o = layer_norm(p, name + ".hidden_norm", o)
    if s.attention_gelu:
        o = gelu(o)
    return linear(p, name + ".mix", o)  # (K, B, N, d)


def _attention_dropout(a: torch.Tensor, s: Shape, training: bool) -> torch.Tensor:
    return F.dropout(a, s.dropout) if training and s.dropout > 0 else a


@PACKED_MIXERS.register("softmax")
def _softmax(p: Params, name: str, x: torch.Tensor, s: Shape, training: bool) -> torch.Tensor:
    q, k, v = _heads(p, name, x, s)
    kk, b, h, n, dh = q.shape
    # K and B are adjacent in the qkv layout, so flattening them is a view; one fused SDPA call for all members.
    o = F.scaled_dot_product_attention(
        q.reshape(kk * b, h, n, dh),
        k.reshape(kk * b, h, n, dh),
        v.reshape(kk * b, h, n, dh),
        dropout_p=s.dropout if training else 0.0,
    )  # (K*B, H, N, d_h)
    return _mix(p, name, o.view(kk, b, h, n, dh), s, s.pre_residual)


@PACKED_MIXERS.register("expressive")
def _expressive(p: Params, name: str, x: torch.Tensor, s: Shape, training: bool) -> torch.Tensor:
    from trainables.mixers.expressive import expressive_weights

    q, k, v = _heads(p, name, x, s)
    z = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (K, B, H, N, N), as trainables.mixers.expressive
    a = _attention_dropout(expressive_weights(z), s, training)
    return _mix(p, name, a @ v, s, s.pre_residual)  # a @ v: (K, B, H, N, d_h)


@PACKED_MIXERS.register("normalized")
def _normalized(p: Params, name: str, x: torch.Tensor, s: Shape, training: bool) -> torch.Tensor:
    q, k, v = _heads(p, name, x, s)
    n, dh = q.shape[-2], q.shape[-1]
    g = p[name + ".gain"][:, None, :, None, None]  # (K, 1, H, 1, 1)
    b = p[name + ".bias"][:, None, :, None, None]  # (K, 1, H, 1, 1)
    if (training and s.dropout > 0) or dh > n:
        logits = q @ k.transpose(-2, -1)  # (K, B, H, N, N)
        std, mean = torch.std_mean(logits, dim=-1, correction=0, keepdim=True)  # (K, B, H, N, 1)
        a = _attention_dropout(g * (logits - mean) / (std + NORMALIZE_EPS) + b, s, training)
        o = a @ v  # (K, B, H, N, d_h)
    else:  # the exact O(N d_h^2) form of trainables.mixers.normalized (no N x N tensor)
        kc = k - k.mean(dim=-2, keepdim=True)  # (K, B, H, N, d_h) centred keys
        cov = kc.transpose(-2, -1) @ kc * (1.0 / n)  # (K, B, H, d_h, d_h)
        var = ((q @ cov) * q).sum(dim=-1, keepdim=True)  # (K, B, H, N, 1)
        std = var.clamp_min(0).sqrt()
        kv = kc.transpose(-2, -1) @ v  # (K, B, H, d_h, d_h)
        o = g * (q @ kv) / (std + NORMALIZE_EPS) + b * v.sum(dim=-2, keepdim=True)  # (K, B, H, N, d_h)
    return _mix(p, name, o, s, s.pre_residual)


@PACKED_MIXERS.register("no_norm")
def _no_norm(p: Params, name: str, x: torch.Tensor, s: Shape, training: bool) -> torch.Tensor:
    q, k, v = _heads(p, name, x, s)
    n, dh = q.shape[-2], q.shape[-1]
    if (training and s.dropout > 0) or dh > n:
        a = _attention_dropout(q @ k.transpose(-2, -1) / math.sqrt(dh), s, training)  # (K, B, H, N, N)
        o = (a @ v) * (1.0 / math.sqrt(n))
    else:  # (Q K^T) V = Q (K^T V): O(N d_h^2)
        o = (q @ (k.transpose(-2, -1) @ v)) * (1.0 / math.sqrt(dh * n))  # (K, B, H, N, d_h)
    return _mix(p, name, o, s, False)  # NON never has the hidden LN


@PACKED_MIXERS.register("sum")
def _sum(p: Params, name: str, x: torch.Tensor, s: Shape, training: bool) -> torch.Tensor:
    return x.sum(dim=2, keepdim=True).expand_as(x)  # (K, B, 1, d) -> (K, B, N, d)


@PACKED_MIXERS.register("max")
def _max(p: Params, name: str, x: torch.Tensor, s: Shape, training: bool) -> torch.Tensor:
    return x.amax(dim=2, keepdim=True).expand_as(x)


@PACKED_MIXERS.register("mean")
def _mean(p: Params, name: str, x: torch.Tensor, s: Shape, training: bool) -> torch.Tensor:
    return x.mean(dim=2, keepdim=True).expand_as(x)


@PACKED_MIXERS.register("bilinear")
def _bilinear(p: Params, name: str, x: torch.Tensor, s: Shape, training: bool) -> torch.Tensor:
    w = p[name + ".seq_weight"]  # (K, N, N): each member's token-mixing matrix (trainables.mixers.bilinear)
    if x.shape[2] != w.shape[-1]:
        raise ValueError(f"invalid sequence length {x.shape[2]} for mixer 'bilinear'; allowed: {w.shape[-1]} "
                         "(the length its N x N matrix was built for; validate at the training length)")
    w = _attention_dropout(w, s, training)
    o = torch.matmul(w.unsqueeze(1), x)  # (K, 1, N, N) @ (K, B, N, d) -> (K, B, N, d)
    return _output(p, name, o, s, s.pre_residual)


@PACKED_MIXERS.register("sepconv")
def _sepconv(p: Params, name: str, x: torch.Tensor, s: Shape, training: bool) -> torch.Tensor:
    from trainables.mixers.separable_conv import shared_filter_conv

    u = F.glu(linear(p, name + ".glu", x), dim=-1)  # (K, B, N, d)
    taps = _attention_dropout(p[name + ".filters"].softmax(dim=-1), s, training)  # (K, H, k) normalised filters
    return _output(p, name, shared_filter_conv(u, taps), s, s.pre_residual)  # one batched convolution for all members


@PACKED_MIXERS.register("average")
def _average(p: Params, name: str, x: torch.Tensor, s: Shape, training: bool) -> torch.Tensor:
    o = linear(p, name + ".value", x.mean(dim=2, keepdim=True))  # (K, B, 1, d): mean first, then W_V
    return _output(p, name, o, s, s.pre_residual).expand_as(x)  # (K, B, N, d)


# ------------------------------------------------------------------------------------------------- model
def _drop(x: torch.Tensor, s: Shape, training: bool) -> torch.Tensor:
    return F.dropout(x, s.dropout) if training and s.dropout > 0 else x


def _ffn(p: Params, name: str, x: torch.Tensor, s: Shape) -> torch.Tensor:
    h = linear(p, name + ".up", x)  # (K, B, N, hidden)
    if s.pre_residual:
        h = layer_norm(p, name + ".norm", h)
    return linear(p, name + ".down", gelu(h))  # (K, B, N, d)


def packed_forward(p: Params, tokens: torch.Tensor, s: Shape, *, training: bool) -> torch.Tensor:
    """Logits of all members: tokens (K, B, N) -> (K, B, N) (position heads) or (K, B, vocab) (class head)."""
    k, _, n = tokens.shape
    emb = p["tok_emb.weight"]  # (K, S, d)
    offsets = torch.arange(k, device=tokens.device).view(k, 1, 1) * emb.shape[1]
    x = F.embedding(tokens + offsets, emb.reshape(-1, emb.shape[-1]))  # (K, B, N, d)
    if s.positional:
        if n > s.max_seq_len:
            raise ValueError(f"sequence length {n} exceeds max_seq_len={s.max_seq_len}")
        x = x + p["pos_emb"][:, None, :n]  # (K, B, N, d) + (K, 1, N, d)
    x = _drop(x, s, training)
    for i, name in enumerate(s.mixers):
        pre = f"layers.{i}"
        mixer = PACKED_MIXERS.get(name)
        if s.pre_residual:
            x = x + _drop(layer_norm(p, pre + ".norm1", mixer(p, pre + ".mixer", x, s, training)), s, training)
            x = x + _drop(layer_norm(p, pre + ".norm2", _ffn(p, pre + ".ffn", x, s)), s, training)
        else:
            x = layer_norm(p, pre + ".norm1", x + _drop(mixer(p, pre + ".mixer", x, s, training), s, training))
            x = layer_norm(p, pre + ".norm2", x + _drop(_ffn(p, pre + ".ffn", x, s), s, training))
    if s.head == "per_token":
        return linear(p, "head", x).squeeze(-1)  # (K, B, N)
    out = linear(p, "head", x[:, :, 0])  # (K, B, out_dim) from the first token
    if s.head == "first_token_positions":
        out = out[:, :, :n]
    return out


class PackedModel:
    """K models of one shape as stacked parameters ``(K, ...)``, initialised member by member.

    Args:
        configs: one config per member (they may differ only in :data:`PACKABLE_FIELDS`).
        seeds: one initialisation seed per member.
        device: where the stacked parameters live.
    """

    def __init__(
        self, configs: Sequence[TrainConfig], seeds: Sequence[int], *, device: str = "cpu", compile: bool = False
    ) -> None:
        if len(configs) != len(seeds) or not configs:
            raise ValueError("need one seed per config and at least one member")
        check_packable(configs)
        cfg = configs[0]
        models = []
        for c, seed in zip(configs, seeds, strict=True):
            torch.manual_seed(seed)  # exactly as train_seed: the init draws follow the seed
            models.append(build_model(c))
        self.n_params = count_parameters(models[0])
        named = [dict(m.named_parameters()) for m in models]
        self.params: Params = {
            name: torch.stack([nm[name].detach() for nm in named]).to(device).requires_grad_()
            for name in named[0]
        }
        linears = {id(m.weight) for m in models[0].modules() if isinstance(m, nn.Linear)}
        self.l2_names = [name for name, t in named[0].items() if id(t) in linears]
        r = cfg.resolved()
        task_cls = TASKS.get(cfg.task)
        self.shape = Shape(
            mixers=cfg.layer_mixers(),
            n_heads=cfg.n_heads,
            pre_residual=r["ln_placement"] == "pre_residual",
            attention_gelu=bool(r["attention_gelu"]),
            dropout=cfg.dropout,
            head=task_cls.head,
            positional=task_cls.positional,
            max_seq_len=max(cfg.seq_len, r["val_seq_len"]),
            vocab_size=r["vocab_size"],
        )
        self.k = len(configs)
        # torch.compile (inductor) fuses the elementwise work (LayerNorm affine, GELU, residuals) of the training
        # forward and backward; evaluation shapes differ, so they run eagerly instead of compiling again.
        self._train_forward = torch.compile(packed_forward, dynamic=False) if compile else packed_forward

    def __call__(self, tokens: torch.Tensor, *, training: bool) -> torch.Tensor:
        """Logits (K, B, ...) for tokens (K, B, N)."""
        forward = self._train_forward if training else packed_forward
        return forward(self.params, tokens, self.shape, training=training)


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


# --------------------------------------------------------------------------------------------- optimiser
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


# -------------------------------------------------------------------------------------------------- loop
@dataclass
class _Member:
    cfg: TrainConfig
    seed: int
    gen_train: torch.Generator
    gen_val: torch.Generator
    case_sets: dict[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]
    rows: list[dict[str, Any]]
    diverged: bool = False
    loss_sum: float = 0.0


def _stack_samples(task: Any, members: Sequence[_Member], batch: int, seq_len: int, split: str) -> tuple[
    torch.Tensor, torch.Tensor
]:
    """One batch per member from its own generator, stacked: tokens (K, B, N), labels (K, B)."""
    pairs = [task.sample(batch, seq_len, m.gen_train if split == "train" else m.gen_val) for m in members]
    return torch.stack([t for t, _ in pairs]), torch.stack([lab for _, lab in pairs])


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
) -> list[dict[str, Any]]:
    """Train every (config, seed) member packed into stacked models; rows as :func:`trainables.loop.train_seed`.

    Members are ``configs x seeds`` (config-major). ``configs`` may differ only in :data:`PACKABLE_FIELDS`.
    Every row has the keys of a ``train_seed`` row plus ``learning_rate`` (its member's). Rows come back
    member by member (each in step order); ``on_eval`` sees them as they are produced (all members of an
    evaluation step in turn; a diverging member's fill rows at the step it diverged).

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
    rows: list[dict[str, Any]] = []
    for i in range(0, len(member_cfgs), size):
        rows += _train_pack(member_cfgs[i : i + size], member_seeds[i : i + size], device=device, on_eval=on_eval,
                            compile=compile)
    return rows


def _train_pack(
    member_cfgs: Sequence[TrainConfig],
    member_seeds: Sequence[int],
    *,
    device: str,
    on_eval: OnEval | None,
    compile: bool,
) -> list[dict[str, Any]]:
    """Train one pack of members (config, seed) as one stacked model."""
    start = time.perf_counter()
    model = PackedModel(member_cfgs, member_seeds, device=device, compile=compile)
    k = model.k
    cfg = member_cfgs[0]
    r = cfg.resolved()
    task = make_task(cfg)
    members: list[_Member] = []
    for c, seed in zip(member_cfgs, member_seeds, strict=True):
        case_sets: dict[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}
        if isinstance(task, CasesTask):
            gen_cases = _generator(device, stream_seed(seed, _STREAM_CASES))
            case_sets["train"] = task.case_eval_set(cfg.case_eval_per_case, cfg.seq_len, gen_cases)
            case_sets["val"] = task.case_eval_set(cfg.case_eval_per_case, r["val_seq_len"], gen_cases)
        members.append(
            _Member(
                cfg=c,
                seed=seed,
                gen_train=_generator(device, stream_seed(seed, _STREAM_TRAIN)),
                gen_val=_generator(device, stream_seed(seed, _STREAM_VAL)),
                case_sets=case_sets,
                rows=[],
            )
        )
    # Stacked case sets: identical case layout (n per case, in case order) for every member.
    stacked_cases = {
        split: torch.stack([m.case_sets[split][0] for m in members]) for split in (members[0].case_sets or {})
    }
    stacked_case_labels = {
        split: torch.stack([m.case_sets[split][1] for m in members]) for split in (members[0].case_sets or {})
    }

    params = list(model.params.values())
    optimizer = PackedAdam(params)
    resolved = [c.resolved() for c in member_cfgs]
    l2 = torch.tensor([c.l2_weight for c in member_cfgs], device=device)
    l2_params = [model.params[n] for n in model.l2_names] if bool((l2 > 0).any()) else []
    clip = torch.tensor([bool(rr["grad_clip"]) for rr in resolved], device=device)
    any_clip = bool(clip.any())
    warmups = [bool(rr["warmup"]) for rr in resolved]
    active = torch.ones(k, dtype=torch.bool, device=device)
    correct_sum = torch.zeros(k, device=device)
    seen_batches = 0

    def emit(m: _Member, step: int, metrics: dict[str, Any]) -> None:
        row: dict[str, Any] = {"seed": m.seed, "step": step, "epoch": step // cfg.eval_every}
        row.update(metrics)
        row.update(
            status="diverged" if m.diverged else "ok",
            wall_time_s=time.perf_counter() - start,
            n_params=model.n_params,
            device=str(device),
            learning_rate=m.cfg.learning_rate,
        )
        m.rows.append(row)
        if on_eval is not None:
            on_eval(row)

    def case_columns(values: list[float] | None) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for si, split in enumerate(("train", "val")):
            for i, case in enumerate(CASES):
                key = f"{split}_{case}_accuracy"
                if not stacked_cases:
                    out[key] = None
                else:
                    out[key] = 0.0 if values is None else values[si * len(CASES) + i]
        return out

    @torch.no_grad()
    def evaluate() -> tuple[list[float], list[float], list[list[float]] | None]:
        losses, accs = torch.zeros(k, device=device), torch.zeros(k, device=device)
        for _ in range(cfg.eval_batches):
            tokens, labels = _stack_samples(task, members, cfg.batch_size, r["val_seq_len"], "val")
            logits = model(tokens, training=False)
            losses += member_losses(logits, labels)
            accs += (logits.argmax(dim=-1) == labels).float().mean(dim=1)
        if not stacked_cases:
            return (losses / cfg.eval_batches).tolist(), (accs / cfg.eval_batches).tolist(), None
        per_split = []
        for split in ("train", "val"):
            tokens, labels = stacked_cases[split], stacked_case_labels[split]  # (K, 3n, N), (K, 3n)
            correct = torch.cat(
                [
                    model(tokens[:, i : i + CASE_EVAL_CHUNK], training=False).argmax(dim=-1)
                    == labels[:, i : i + CASE_EVAL_CHUNK]
                    for i in range(0, tokens.shape[1], CASE_EVAL_CHUNK)
                ],
                dim=1,
            ).float()  # (K, 3n)
            per_split.append(correct.view(k, len(CASES), -1).mean(dim=2))  # (K, 3): case_eval_set's layout
        cases = torch.cat(per_split, dim=1).tolist()  # (K, 6)
        return (losses / cfg.eval_batches).tolist(), (accs / cfg.eval_batches).tolist(), cases

    def fill(m: _Member, step: int) -> None:
        """train_seed's rows after a divergence at ``step`` completed steps."""
        first_missing = (step // cfg.eval_every + 1) * cfg.eval_every
        for missing in range(first_missing, cfg.n_steps + 1, cfg.eval_every):
            emit(m, missing, {"train_loss": math.nan, "train_accuracy": 0.0, "val_loss": math.nan,
                              "val_accuracy": 0.0, **case_columns(None)})
        for row in m.rows:
            row["status"] = "diverged"

    step = 0
    while step < cfg.n_steps and bool(active.any()):
        tokens, labels = _stack_samples(task, members, cfg.batch_size, cfg.seq_len, "train")
        logits = model(tokens, training=True)
        losses = member_losses(logits, labels)  # (K,)
        loss_values = losses.detach().tolist()  # the one host sync per step, as train_seed
        newly = [i for i, (m, v) in enumerate(zip(members, loss_values, strict=True))
                 if not m.diverged and not math.isfinite(v)]
        for i in newly:
            members[i].diverged = True
            active[i] = False
            fill(members[i], step)
        if not bool(active.any()):
            break
        frozen = bool((~active).any())
        total = torch.where(active, losses, torch.zeros_like(losses)).sum() if frozen else losses.sum()
        if l2_params:
            # Keras l2 of the release per member: l2_weight * sum(w^2), no factor 1/2.
            total = total + sum((l2 * w.square().flatten(1).sum(1)).sum() for w in l2_params)
        for p in params:
            p.grad = None
        total.backward()
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
        for p, g in zip(params, grads, strict=True):
            p.grad = g
        if frozen:  # frozen members: no gradient at all (theirs may be NaN), and lr 0 below
            for g in grads:
                g.copy_(torch.where(member_view(active, g.dim()), g, torch.zeros_like(g)))
        if any_clip:
            clip_members_(grads, clip)
        lrs = [
            learning_rate_at(step, n_steps=cfg.n_steps, learning_rate=m.cfg.learning_rate, warmup=w)
            if not m.diverged else 0.0
            for m, w in zip(members, warmups, strict=True)
        ]
        optimizer.step(torch.tensor(lrs, device=device, dtype=params[0].dtype))
        step += 1
        for m, v in zip(members, loss_values, strict=True):
            m.loss_sum += v
        correct_sum += (logits.detach().argmax(dim=-1) == labels).float().mean(dim=1)
        seen_batches += 1

        if step % cfg.eval_every == 0:
            val_loss, val_acc, cases = evaluate()
            train_acc = (correct_sum / seen_batches).tolist()
            for i, m in enumerate(members):
                if m.diverged:
                    continue
                emit(m, step, {
                    "train_loss": m.loss_sum / seen_batches,
                    "train_accuracy": train_acc[i],
                    "val_loss": val_loss[i],
                    "val_accuracy": val_acc[i],
                    **case_columns(None if cases is None else cases[i]),
                })
                m.loss_sum = 0.0
            seen_batches = 0
            correct_sum.zero_()
    return [row for m in members for row in m.rows]
