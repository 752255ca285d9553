"""Member-stacked modules: K models of one shape run as one, from the code that runs one.

Packing K small models (seeds, learning rates) into one model makes one batched kernel out of K tiny ones,
which is what a GPU needs. Here that is not a second implementation: every mixer and model of the project
computes through the primitives below, which take either one model's parameters or K members' parameters
stacked along a new leading axis (``(K, ...)`` for every tensor, inputs ``(K, B, ...)``). So
:func:`stack_modules` turns K built models into one module of the same class whose forward pass is the one
definition, run on all members at once.

The one-model branch of each primitive is exactly the ``nn`` module's own call (``F.linear``,
``F.layer_norm``, ``F.embedding``), so a model does not change by being written this way. The stacked
branch uses batched matmuls (``torch.baddbmm``) and one ``F.layer_norm`` plus one ``addcmul`` for all members.
Member k's gradient depends on member k's loss only (nothing mixes the member axis), so a stacked model
trains K independent models; :class:`StackedAdam` steps them, each member at its own learning rate.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import TypeVar

import torch
import torch.nn.functional as F
from torch import nn

M = TypeVar("M", bound=nn.Module)


def dense(x: torch.Tensor, layer: nn.Linear) -> torch.Tensor:
    """``layer(x)`` for x (..., in); stacked: weight (K, out, in), bias (K, out), x (K, ..., in) -> (K, ..., out)."""
    w, b = layer.weight, layer.bias
    if w.dim() == 2:
        return F.linear(x, w, b)
    k, n_in = x.shape[0], x.shape[-1]
    flat = x.reshape(k, -1, n_in)  # (K, M, in)
    y = torch.bmm(flat, w.transpose(1, 2)) if b is None else torch.baddbmm(b.unsqueeze(1), flat, w.transpose(1, 2))
    return y.view(*x.shape[:-1], w.shape[1])  # (K, ..., out)


def norm(x: torch.Tensor, layer: nn.LayerNorm) -> torch.Tensor:
    """``layer(x)`` over the last dim; stacked: gain and bias (K, d), x (K, ..., d), the affine as one addcmul."""
    if layer.weight.dim() == 1:
        return F.layer_norm(x, layer.normalized_shape, layer.weight, layer.bias, layer.eps)
    d = x.shape[-1]
    shape = (x.shape[0],) + (1,) * (x.dim() - 2) + (d,)  # (K, 1, ..., d)
    xn = F.layer_norm(x, (d,), eps=layer.eps)
    return torch.addcmul(layer.bias.view(shape), xn, layer.weight.view(shape))


def embed(tokens: torch.Tensor, table: nn.Embedding) -> torch.Tensor:
    """``table(tokens)``; stacked: table (K, S, d), tokens (K, ...) index their own member's rows."""
    w = table.weight
    if w.dim() == 2:
        return F.embedding(tokens, w)
    k = w.shape[0]
    offsets = torch.arange(k, device=tokens.device).view(k, *([1] * (tokens.dim() - 1))) * w.shape[1]
    return F.embedding(tokens + offsets, w.reshape(-1, w.shape[-1]))  # (K, ..., d)


def mix_tokens(w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """A token-mixing matrix w (N_out, N_in) applied to x (B, N_in, d); stacked: w (K, N_out, N_in), x (K, B, ...)."""
    if w.dim() == 2:
        return torch.matmul(w, x)  # (B, N_out, d)
    return torch.matmul(w.unsqueeze(1), x)  # (K, 1, N, N) @ (K, B, N, d) -> (K, B, N, d)


def member_view(v: torch.Tensor, ndim: int) -> torch.Tensor:
    """A per-member vector (K,) viewed as (K, 1, ..., 1) to broadcast against a tensor of ``ndim`` dims."""
    return v.view(-1, *([1] * (ndim - 1)))


def stack_modules(models: Sequence[M]) -> M:
    """One module of the members' class whose every parameter is the members' parameters stacked, (K, ...).

    The members must have the same structure (one config, different seeds or learning rates); their
    parameters are copied (detached), so the members themselves stay as they were. The result's forward
    takes inputs with a leading member axis K.
    """
    if not models:
        raise ValueError("stack_modules needs at least one model")
    stacked = copy.deepcopy(models[0])
    for name, _ in list(stacked.named_parameters()):
        owner_name, _, attr = name.rpartition(".")
        owner = stacked.get_submodule(owner_name)
        members = [m.get_parameter(name).detach() for m in models]
        setattr(owner, attr, nn.Parameter(torch.stack(members)))
    return stacked


class StackedAdam:
    """Adam (with ``weight_decay``: AdamW) over K members' parameters, each member at its own learning rate.

    The arithmetic is ``torch.optim.Adam``'s (``AdamW``'s) single-tensor path operation for operation
    (foreach-batched), so one member (K = 1, a model's own parameters, no member axis) steps bit for bit as torch's
    Adam (AdamW) does on the CPU. torch's
    optimisers take one learning rate per parameter group and a stacked tensor holds every member, hence this
    class: the step size is a per-member vector. One step count serves every parameter (each gets a gradient
    every step; a parameter without one steps with a zero gradient, which leaves zero moments where they are).
    The step count lives on the parameters' device (float64), so a step needs nothing from the host and a compiled
    step does not specialise on it.
    """

    def __init__(self, params: Sequence[torch.Tensor], *, eps: float,
                 betas: tuple[float, float] = (0.9, 0.999), weight_decay: float = 0.0) -> None:
        self.params = list(params)
        self.exp_avg = [torch.zeros_like(p) for p in self.params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in self.params]
        self.eps, self.betas, self.weight_decay = eps, betas, weight_decay
        self.steps = torch.zeros((), dtype=torch.float64, device=self.params[0].device)

    @torch.no_grad()
    def step(self, lr: torch.Tensor, grads: Sequence[torch.Tensor] | None = None) -> None:
        """One update with learning rates ``lr`` (K,) (float64: the step size is rounded to the parameters' dtype
        once, as torch rounds its scalar); a member with lr 0 and zero gradients stays put. ``grads``: one per
        parameter (default: the parameters' ``.grad``, zeros where there is none)."""
        beta1, beta2 = self.betas
        dtype = self.params[0].dtype
        self.steps += 1
        if self.weight_decay:  # AdamW's decoupled decay first: p * (1 - lr * wd), the factor rounded once, as torch's
            decay = (1 - lr * self.weight_decay).to(dtype)  # (K,)
            for p in self.params:
                p.mul_(member_view(decay, p.dim()))
        if grads is None:
            grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in self.params]
        grads = list(grads)
        torch._foreach_lerp_(self.exp_avg, grads, 1 - beta1)
        torch._foreach_mul_(self.exp_avg_sq, beta2)
        torch._foreach_addcmul_(self.exp_avg_sq, grads, grads, value=1 - beta2)
        bias_correction1 = 1 - torch.pow(beta1, self.steps)
        bias_correction2_sqrt = torch.pow(1 - torch.pow(beta2, self.steps), 0.5)
        denom = torch._foreach_sqrt(self.exp_avg_sq)
        torch._foreach_div_(denom, bias_correction2_sqrt.to(dtype))
        torch._foreach_add_(denom, self.eps)
        neg_step = (-lr / bias_correction1).to(dtype)  # (K,)
        # p + (step * m) / denom: the order of torch's addcdiv(m, denom, value=step)
        scaled = [m * member_view(neg_step, m.dim()) for m in self.exp_avg]
        torch._foreach_addcdiv_(self.params, scaled, denom)


@torch.no_grad()
def clip_grad_norm_members_(params: Sequence[torch.Tensor], max_norm: float, *, stacked: bool) -> None:
    """``torch.nn.utils.clip_grad_norm_`` for each member alone: member k's gradients (its slices of every ``.grad``)
    scaled by min(1, max_norm / (their global 2-norm + 1e-6)). One model (not ``stacked``): torch's own call."""
    if not stacked:
        torch.nn.utils.clip_grad_norm_(params, max_norm)
        return
    grads = [p.grad for p in params if p.grad is not None]
    k = grads[0].shape[0]
    norms = torch.stack([torch.linalg.vector_norm(g.reshape(k, -1), dim=1) for g in grads])  # (P, K)
    scale = torch.clamp(max_norm / (torch.linalg.vector_norm(norms, dim=0) + 1e-6), max=1.0)  # (K,)
    for g in grads:
        g.mul_(member_view(scale, g.dim()))


def count_parameters(model: nn.Module) -> int:
    """Trainable parameters of one (unstacked) model."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
