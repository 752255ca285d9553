"""The CTL models' probe columns (docs/csordas2021.md, "Probes"): what the shared layer does at each step.

At every evaluation, when the trial asks for probes (``CTLConfig.probes``), every member's model runs once more, in
evaluation mode, on the first :data:`PROBE_SAMPLES` samples of the deeper test set (depth 9-10, within
``eval_samples``), recording what its layer already computes at each of the ``n_layers`` steps (the NDR applies
one layer again and again, so a step is what a layer is in other models): the attention weights of every head and
the copy gate's values (``SharedLayerClassifier.set_record``). :mod:`trainables.probes` turns them into
``probe_<statistic>_s<step>_h<head>`` and ``probe_gate[_open]_s<step>`` per member, over the real (unpadded) tokens.
The LSTM has neither: no columns. A trial without probes never gets here.

Two attention probes are this family's own (:data:`core.probe_names.ROUTE_PROBES`), computed here
(:func:`route_columns`) because they read more than one step's weights or where the task puts its operations; each
row's weights are read as shares p_ij = |w_ij| / sum_j |w_ij|, as every probe reads them (:mod:`trainables.probes`):

* ``drift``: how far a query's attention has moved since step 1: half the L1 distance between its shares at this step
  and at step 1 (total variation: 0 for the same row, 1 for rows on disjoint keys), mean over the real queries that hold
  weight at both steps (0 at step 1);
* ``last_op``: the share of samples whose read-out column (EOS, where the result is read) puts its largest weight on
  the position of the last operation to be performed (:func:`last_operation`: backward the function right after SOS,
  the sequence's second position; forward the one right before EOS);
* ``same_peak``: the share of the real queries (with weight at both steps) whose most-attended key is the one they
  attended most at step 1 (1 at step 1): whether the pattern stays where it was, however it spreads;
* ``blur``: how much blurrier a function's column has become since it was processed, in nats: over the columns whose
  function was applied before this step (the i-th at step i, i < s: :func:`application_order`), the mean of the
  column's attention entropy now minus at step i (NaN at step 1: nothing processed yet).

Two gate probes are its own too (:data:`core.probe_names.TIMING_PROBES`): when each function's column opens against
when its input is ready. The i-th function applied (:func:`application_order`) reads the result of the (i - 1)-th,
which is in its neighbour's column after step i - 1 (the first reads the argument): its input is ready at step i. A
column is open when its gate's mean over channels exceeds 1/2 (as ``gate_open``). At step s:

* ``gate_early``: of the function columns whose input is not ready yet (i > s), the share that is open;
* ``gate_ready``: of the function columns whose input becomes ready at this step (i = s), the share that is open.

Each pools the function columns of every sample (NaN where there are none: ``gate_early`` once every input is ready).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from core.probe_names import ATTENTION_PROBES, GATE_PROBES, ROUTE_PROBES, TIMING_PROBES, asked, column
from trainables.csordas2021.ctl import Encoded
from trainables.csordas2021.members import Members
from trainables.csordas2021.models import SharedLayerClassifier
from trainables.dtypes import at_least_fp32
from trainables.probes import Columns, attention_columns, gate_statistics, member_values

#: The split the probes read (the paper's figures show the deeper test samples) and how many of its samples.
PROBE_SPLIT = "depth_test"
PROBE_SAMPLES = 64


@torch.no_grad()
def probe_columns(members: Members, data: Encoded, request: str | None, limit: int | None,
                  device: str, direction: str) -> list[dict[str, float]]:
    """Each member's probe columns on the first ``min(PROBE_SAMPLES, limit)`` samples of ``data`` (presented in
    ``direction``: where its last operation lies)."""
    names = asked(request)
    module, k = members.module, members.k
    if not names or not isinstance(module, SharedLayerClassifier):
        return [{} for _ in range(k)]
    n = min(PROBE_SAMPLES, len(data) if limit is None else min(limit, len(data)))
    tokens, lengths, _ = data.batch(torch.arange(n))
    b, width = tokens.shape
    lengths = lengths.to(device)
    training = module.training
    module.eval()
    module.set_record(True)
    try:
        members(tokens.to(device).expand(k, b, width), lengths.expand(k, b))
        trace = module.trace or []
    finally:
        module.set_record(False)
        module.layer.attention.last_weights = module.layer.last_gates = None  # nothing kept between probes
        module.train(training)
    real = (torch.arange(width, device=device) < lengths[:, None]).expand(k, b, width)  # (K, B, N)
    return member_values(step_columns(trace, real, names, stacked=k > 1, lengths=lengths, direction=direction), k)


def step_columns(trace: Sequence[dict[str, torch.Tensor | None]], real: torch.Tensor, names: Sequence[str], *,
                 stacked: bool, lengths: torch.Tensor, direction: str) -> Columns:
    """The columns of every step of a recorded trace (one dict per step: ``attention`` (K, B, H, N, N) and
    ``gates`` (K, B, N, d), without the K axis unless ``stacked``; None where the layer has none); ``lengths`` (B,)
    and ``direction``: where each sample's operations lie."""
    attention = [n for n in names if n in ATTENTION_PROBES and n not in ROUTE_PROBES]
    route = [n for n in names if n in ROUTE_PROBES]
    gates = [n for n in names if n in GATE_PROBES and n not in TIMING_PROBES]
    timing = [n for n in names if n in TIMING_PROBES]
    targets = last_operation(lengths, direction)
    order = application_order(lengths, direction, real.shape[-1]) if timing or "blur" in route else None
    entropies: list[torch.Tensor] = []  # blur: each step's per-query entropies so far
    columns: Columns = []
    first: torch.Tensor | None = None
    for step, entry in enumerate(trace, start=1):
        w, g = entry.get("attention"), entry.get("gates")
        if w is not None and not stacked:
            w = w.unsqueeze(0)
        if w is not None and attention:
            columns += attention_columns(w, real, attention, step=step)
        if w is not None and route:
            first = w if first is None else first
            if order is not None:
                entropies.append(_entropies(w))
            columns += route_columns(w, first, real, targets, route, step=step, order=order, entropies=entropies)
        if g is not None and gates:
            gate_stats = gate_statistics(g if stacked else g.unsqueeze(0), real, gates)  # each (K,)
            columns += [(column(name, step=step), gate_stats[name]) for name in gates]
        if g is not None and order is not None:
            columns += timing_columns(g if stacked else g.unsqueeze(0), order, timing, step=step)
    return columns


def last_operation(lengths: torch.Tensor, direction: str) -> torch.Tensor:
    """Per sample (lengths (B,) counting SOS and EOS) the position of the last function applied: backward (argument
    last, functions applied right to left) the first function, right after SOS (position 1, the sequence's second);
    forward (argument first) the last function, right before EOS (position length - 2)."""
    if direction == "backward":
        return torch.ones_like(lengths)
    if direction == "forward":
        return lengths - 2
    raise ValueError(f"invalid direction={direction!r}; allowed: forward, backward")


def application_order(lengths: torch.Tensor, direction: str, width: int) -> torch.Tensor:
    """Per sample and position (B, N): which function is applied there, counted from 1 (the first applied reads the
    argument), and 0 where no function is (SOS, the argument, EOS, padding). Backward (``SOS f_n .. f_1 x EOS``)
    position p in 1..n holds the (n + 1 - p)-th; forward (``SOS x f_1 .. f_n EOS``) position p in 2..n + 1 the
    (p - 1)-th; n = length - 3."""
    p = torch.arange(width, device=lengths.device)[None, :]
    n = (lengths - 3)[:, None]
    if direction == "backward":
        return torch.where((p >= 1) & (p <= n), n + 1 - p, torch.zeros_like(p))
    if direction == "forward":
        return torch.where((p >= 2) & (p <= n + 1), p - 1, torch.zeros_like(p))
    raise ValueError(f"invalid direction={direction!r}; allowed: forward, backward")


def timing_columns(g: torch.Tensor, order: torch.Tensor, names: Sequence[str], *, step: int) -> Columns:
    """``gate_early`` and ``gate_ready`` (module docstring) of gates (K, B, N, d) at ``step``, a value per member;
    ``order`` (B, N): :func:`application_order`."""
    is_open = at_least_fp32(g.detach()).mean(dim=-1) > 0.5  # (K, B, N)
    columns: Columns = []
    for name in names:
        if name == "gate_early":
            counted = order > step
        elif name == "gate_ready":
            counted = order == step
        else:
            raise ValueError(f"invalid gate timing probe {name!r}; allowed: {', '.join(TIMING_PROBES)}")
        counted = counted.to(g.device)[None].expand_as(is_open)
        share = (is_open & counted).sum(dim=(1, 2)).to(torch.float64) / counted.sum(dim=(1, 2)).to(torch.float64)
        columns.append((column(name, step=step), share))
    return columns


def _shares(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Weights (K, B, H, N, N) as shares of their row, and whether the row holds any weight (K, B, H, N)."""
    a = at_least_fp32(w.detach()).abs()
    total = a.sum(dim=-1)
    held = total > 0
    return a / torch.where(held, total, torch.ones_like(total))[..., None], held


def _entropies(w: torch.Tensor) -> torch.Tensor:
    """Each query's attention entropy in nats (K, B, H, N) of weights (K, B, H, N, N), read as shares."""
    p, _ = _shares(w)
    entropy: torch.Tensor = -torch.special.xlogy(p, p).sum(dim=-1)
    return entropy


def route_columns(w: torch.Tensor, first: torch.Tensor, real: torch.Tensor, targets: torch.Tensor,
                  names: Sequence[str], *, step: int, order: torch.Tensor | None = None,
                  entropies: Sequence[torch.Tensor] = ()) -> Columns:
    """``drift``, ``last_op``, ``same_peak`` and ``blur`` (module docstring) of weights (K, B, H, N, N) at ``step``
    against ``first`` (the weights of step 1), per head, a value per member; ``real`` (K, B, N): the real queries;
    ``targets`` (B,); ``blur`` also reads ``order`` (B, N: :func:`application_order`) and ``entropies``, each step's
    per-query entropies up to this one (:func:`_entropies`)."""
    p, held = _shares(w)
    k, b, h, n, _ = p.shape
    out: dict[str, torch.Tensor] = {}
    for name in names:
        if name == "drift":
            p0, held0 = _shares(first)
            valid = held & held0 & real[:, :, None, :]
            moved = 0.5 * (p - p0).abs().sum(dim=-1)
            out[name] = torch.where(valid, moved, torch.zeros_like(moved)).sum(dim=(1, 3)) / valid.sum(dim=(1, 3))
        elif name == "last_op":
            readout = real.sum(dim=-1) - 1  # (K, B): the EOS column of each sample
            index = readout[:, :, None, None, None].expand(k, b, h, 1, n)
            row = p.gather(3, index).squeeze(3)  # (K, B, H, N): the read-out column's shares
            valid = held.gather(3, readout[:, :, None, None].expand(k, b, h, 1)).squeeze(3)  # (K, B, H)
            hit = (row.argmax(dim=-1) == targets.to(row.device)[None, :, None]) & valid
            out[name] = hit.sum(dim=1).to(p.dtype) / valid.sum(dim=1).to(p.dtype)
        elif name == "same_peak":
            p0, held0 = _shares(first)
            valid = held & held0 & real[:, :, None, :]
            kept = (p.argmax(dim=-1) == p0.argmax(dim=-1)) & valid
            out[name] = kept.sum(dim=(1, 3)).to(p.dtype) / valid.sum(dim=(1, 3)).to(p.dtype)
        elif name == "blur":
            if order is None or len(entropies) != step:
                raise ValueError(f"invalid blur at step {step}: it needs the order of the functions and the "
                                 f"entropies of steps 1..{step}; allowed: step_columns' own call")
            done = ((order > 0) & (order < step)).to(p.device)  # (B, N): processed before this step
            history = torch.stack(list(entropies))  # (S, K, B, H, N)
            at = (order.clamp(1, step) - 1).to(p.device)  # a column not processed yet: any step (left out)
            then = history.gather(0, at[None, None, :, None, :].expand(1, k, b, h, n)).squeeze(0)  # at its own step
            valid = done[None, :, None, :] & held & real[:, :, None, :]
            rise = torch.where(valid, entropies[-1] - then, torch.zeros_like(then))
            out[name] = rise.sum(dim=(1, 3)) / valid.sum(dim=(1, 3)).to(p.dtype)
        else:
            raise ValueError(f"invalid route probe {name!r}; allowed: {', '.join(ROUTE_PROBES)}")
    return [(column(name, step=step, head=i + 1), out[name][:, i]) for i in range(h) for name in names]
