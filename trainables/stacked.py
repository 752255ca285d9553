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
trains K independent models.
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


def count_parameters(model: nn.Module) -> int:
    """Trainable parameters of one (unstacked) model."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
