"""The probe statistics (what a model does inside), defined once for every family (docs/results.md, "Probe columns").

Every family that probes hands these functions what its modules already compute, with a member axis K in front (one
model is K = 1), and gets one value per member (and head): packed members each get their own.

Attention weights ``w`` (K, B, H, N_q, N_k) are read as one distribution per query: p_ij = |w_ij| / sum_j |w_ij|
(the weights themselves wherever they are a distribution: softmax, expressive, average; NAP's and NON's are signed
and unnormalised, geometric attention's rows sum to at most 1, so the share of each key in the row is what is
compared). Queries that are padding, or whose row holds no weight at all, are left out. Per query:

* ``entropy``: -sum_j p_ij log p_ij, in nats (log N for a uniform row over N keys, 0 for a one-hot row);
* ``peak``: max_j p_ij, the largest share one key gets;
* ``distance``: sum_j p_ij |j - i|, the mean distance (in positions) of what the query attends to;
* ``nearest``: the share on the adjacent key in the direction the query attends (i + 1 when its weight right of i
  is at least its weight left of i, else i - 1; 0 where that key does not exist), what geometric attention is
  built to make large;
* ``range``: log10(max_j p_ij / min_j p_ij) over the keys the query may attend to, in decades: how many orders of
  magnitude its weights span (0 for a uniform row; a plot of the weights on a log10 colour scale spans the largest
  row's range). A key may be attended to when its weight is not exactly 0: masked keys (causal, padding) carry
  exactly 0 in every family, so a weight that underflowed to 0 is left out with them. The smallest weight counted is
  at least :data:`RANGE_FLOOR` times the row's largest, so a row spans at most 30 decades whatever the float format
  (an fp32 softmax first underflows near 38). A query with fewer than two such keys (the first query of causal
  attention) has no range and is left out of this statistic's mean.

Each is averaged over the queries (and the batch): one number per member and head. Gate values ``g``
(K, B, N, d) in [0, 1] (1 = take the update, 0 = copy the input): ``gate`` is the mean over positions and channels,
``gate_open`` the share of positions whose channel mean exceeds 1/2.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn

from core.probe_names import ATTENTION_PROBES, GATE_PROBES, ROUTE_PROBES, TIMING_PROBES, column
from trainables.dtypes import at_least_fp32
from trainables.mixers.base import allowed_keys

#: ``range``: the smallest weight a row's range counts, relative to its largest (30 decades at most).
RANGE_FLOOR = 1e-30

#: (column name, value per member (K,)) pairs, read from the device in one go by :func:`member_values`.
Columns = list[tuple[str, torch.Tensor]]


def _query_mean(values: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Mean of values (K, B, H, N) over the valid (batch, query) pairs: (K, H); NaN where none is valid."""
    count = valid.sum(dim=(1, 3))
    total = torch.where(valid, values, torch.zeros_like(values)).sum(dim=(1, 3))
    return total / count.to(total.dtype)  # 0 / 0 = NaN: nothing to read


def attention_statistics(w: torch.Tensor, queries: torch.Tensor | None, names: Sequence[str]
                         ) -> dict[str, torch.Tensor]:
    """The attention statistics ``names`` (of :data:`ATTENTION_PROBES`) of weights (K, B, H, N, N), each (K, H).

    ``queries``: bool (K, B, N), True at the queries to read (None: all). Computed on the magnitudes |w| and each
    row's total t_i (p_ij = |w_ij| / t_i is never formed: one pass over the weights less per statistic).
    """
    a = at_least_fp32(w.detach()).abs()
    total = a.sum(dim=-1)  # (K, B, H, N)
    valid = total > 0
    if queries is not None:
        valid = valid & queries[:, :, None, :]
    t = torch.where(valid, total, torch.ones_like(total))
    n = w.shape[-1]
    pos = torch.arange(n, device=w.device)
    offset = pos[None, :] - pos[:, None]  # (N_q, N_k): j - i
    out: dict[str, torch.Tensor] = {}
    for name in names:
        if name == "entropy":  # -sum p log p = log t - sum a log a / t
            value = (t.log() - torch.special.xlogy(a, a).sum(dim=-1) / t).clamp_min(0.0)
        elif name == "peak":
            value = a.amax(dim=-1) / t
        elif name == "distance":
            value = (a * offset.abs().to(a.dtype)).sum(dim=-1) / t
        elif name == "nearest":
            right = (a * (offset > 0).to(a.dtype)).sum(dim=-1)
            left = total - right - a.diagonal(dim1=-2, dim2=-1)
            zero = a.new_zeros(*a.shape[:-2], 1)
            after = torch.cat([a.diagonal(offset=1, dim1=-2, dim2=-1), zero], dim=-1)  # a_{i, i+1}, (K, B, H, N)
            before = torch.cat([zero, a.diagonal(offset=-1, dim1=-2, dim2=-1)], dim=-1)  # a_{i, i-1}
            value = torch.where(right >= left, after, before) / t
        elif name == "range":  # p_max / p_min = a_max / a_min: no share needed
            attended = a > 0
            largest = a.amax(dim=-1)
            smallest = torch.where(attended, a, torch.full_like(a, torch.inf)).amin(dim=-1)
            smallest = torch.maximum(smallest, largest * RANGE_FLOOR)
            value = (largest.log10() - smallest.log10()).clamp_min(0.0)
            out[name] = _query_mean(torch.where(valid, value, torch.zeros_like(value)),
                                    valid & (attended.sum(dim=-1) >= 2))
            continue
        else:
            one_step = (n for n in ATTENTION_PROBES if n not in ROUTE_PROBES)  # the CTL family's own: its inside.py
            raise ValueError(f"invalid attention probe {name!r}; allowed: {', '.join(one_step)}")
        out[name] = _query_mean(value, valid)
    return out


def attention_columns(w: torch.Tensor, queries: torch.Tensor | None, names: Sequence[str], *,
                      layer: int | None = None, step: int | None = None) -> Columns:
    """The columns of weights (K, B, H, N, N) at one layer or step: per head (counted from 1) each statistic of
    ``names`` (:func:`attention_statistics`), a value per member."""
    stats = attention_statistics(w, queries, names)  # each (K, H)
    return [(column(name, layer=layer, step=step, head=h + 1), stats[name][:, h])
            for h in range(w.shape[-3]) for name in names]


def gate_statistics(g: torch.Tensor, positions: torch.Tensor | None, names: Sequence[str]) -> dict[str, torch.Tensor]:
    """The gate statistics ``names`` (of :data:`GATE_PROBES`) of gates (K, B, N, d), each (K,); ``positions``:
    bool (K, B, N), True at the positions to read (None: all)."""
    per_position = at_least_fp32(g.detach()).mean(dim=-1)  # (K, B, N)
    valid = torch.ones_like(per_position, dtype=torch.bool) if positions is None else positions
    count = valid.sum(dim=(1, 2)).to(per_position.dtype)
    out: dict[str, torch.Tensor] = {}
    for name in names:
        if name == "gate":
            value = per_position
        elif name == "gate_open":
            value = (per_position > 0.5).to(per_position.dtype)
        else:
            one_step = (n for n in GATE_PROBES if n not in TIMING_PROBES)  # the CTL family's own: its inside.py
            raise ValueError(f"invalid gate probe {name!r}; allowed: {', '.join(one_step)}")
        out[name] = torch.where(valid, value, torch.zeros_like(value)).sum(dim=(1, 2)) / count
    return out


def mixer_weights(mixer: nn.Module, x: torch.Tensor, mask: torch.Tensor | None = None, *,
                  causal: bool = False) -> torch.Tensor | None:
    """The attention weights (..., B, H, N, N) a token mixer uses on its input x (..., B, N, d): its own
    ``attention_weights`` (every multi-head mixer), uniform over the keys it may see for a mixer that averages
    (``uniform_weights``: average attention, mean pooling), None for one without weights (sum, max, convolution,
    bilinear)."""
    weights_of = getattr(mixer, "attention_weights", None)
    if callable(weights_of):
        weights: torch.Tensor = weights_of(x, mask, causal=causal)
        return weights
    if getattr(mixer, "uniform_weights", False):
        n = x.shape[-2]
        allowed = allowed_keys(mask, causal, n, x.device)
        ones = x.new_ones(*x.shape[:-2], 1, n, n)  # (..., B, 1, N, N)
        if allowed is not None:
            ones = ones.masked_fill(~allowed, 0.0)
        return ones / ones.sum(dim=-1, keepdim=True).clamp_min(1.0)
    return None


@contextmanager
def inputs_of(modules: Sequence[nn.Module]) -> Iterator[list[torch.Tensor | None]]:
    """The first positional input of each module's latest call while the block runs (forward pre-hooks, removed
    on exit: outside a probe, no module carries a hook)."""
    seen: list[torch.Tensor | None] = [None] * len(modules)

    def keeper(i: int) -> Any:
        def keep(_module: nn.Module, args: tuple[Any, ...]) -> None:
            seen[i] = args[0].detach()
        return keep

    handles = [m.register_forward_pre_hook(keeper(i)) for i, m in enumerate(modules)]
    try:
        yield seen
    finally:
        for handle in handles:
            handle.remove()


def member_values(columns: Columns, k: int) -> list[dict[str, float]]:
    """Each member's probe columns as floats (one read from the device for all of them)."""
    if not columns:
        return [{} for _ in range(k)]
    values = torch.stack([v.to(torch.float64) for _, v in columns], dim=1).cpu().tolist()  # (K, columns)
    return [dict(zip([name for name, _ in columns], row, strict=True)) for row in values]
