"""The CTL models' probe columns (docs/csordas2021.md, "Probes"): what the shared layer does at each step.

At every evaluation, when the trial asks for probes (``CTLConfig.probes``), every member's model runs once more, in
evaluation mode, on the first :data:`PROBE_SAMPLES` samples of the deeper test set (depth 9-10, within
``eval_samples``), recording what its layer already computes at each of the ``n_layers`` steps (the NDR applies
one layer again and again, so a step is what a layer is in other models): the attention weights of every head and
the copy gate's values (``SharedLayerClassifier.set_record``). :mod:`trainables.probes` turns them into
``probe_<statistic>_s<step>_h<head>`` and ``probe_gate[_open]_s<step>`` per member, over the real (unpadded) tokens.
The LSTM has neither: no columns. A trial without probes never gets here.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from core.probe_names import ATTENTION_PROBES, GATE_PROBES, asked, column
from trainables.csordas2021.ctl import Encoded
from trainables.csordas2021.members import Members
from trainables.csordas2021.models import SharedLayerClassifier
from trainables.probes import Columns, attention_columns, gate_statistics, member_values

#: The split the probes read (the paper's figures show the deeper test samples) and how many of its samples.
PROBE_SPLIT = "depth_test"
PROBE_SAMPLES = 64


@torch.no_grad()
def probe_columns(members: Members, data: Encoded, request: str | None, limit: int | None,
                  device: str) -> list[dict[str, float]]:
    """Each member's probe columns on the first ``min(PROBE_SAMPLES, limit)`` samples of ``data``."""
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
    return member_values(step_columns(trace, real, names, stacked=k > 1), k)


def step_columns(trace: Sequence[dict[str, torch.Tensor | None]], real: torch.Tensor, names: Sequence[str], *,
                 stacked: bool) -> Columns:
    """The columns of every step of a recorded trace (one dict per step: ``attention`` (K, B, H, N, N) and
    ``gates`` (K, B, N, d), without the K axis unless ``stacked``; None where the layer has none)."""
    attention = [n for n in names if n in ATTENTION_PROBES]
    gates = [n for n in names if n in GATE_PROBES]
    columns: Columns = []
    for step, entry in enumerate(trace, start=1):
        w, g = entry.get("attention"), entry.get("gates")
        if w is not None and attention:
            columns += attention_columns(w if stacked else w.unsqueeze(0), real, attention, step=step)
        if g is not None and gates:
            gate_stats = gate_statistics(g if stacked else g.unsqueeze(0), real, gates)  # each (K,)
            columns += [(column(name, step=step), gate_stats[name]) for name in gates]
    return columns
