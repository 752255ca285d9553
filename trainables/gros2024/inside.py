"""The Gros family's probe columns (docs/gros2024.md, "Probes"): how its one attention layer weighs the context.

At every evaluation, when the trial asks for probes (``GrosConfig.probes``), every member's mixer (the paper's DPA or
EA head, or a registry mixer in its place) computes its causal attention weights on :data:`PROBE_SERIES` fixed probe
contexts: true series of the trial's task (the mixture: half of each component), drawn once from their own
generator (:data:`PROBE_SEED`), so no training or evaluation stream moves and every member and evaluation reads the
same contexts. :mod:`trainables.probes` turns the weights into ``probe_<statistic>_l1_h<head>`` per member; a mixer
without weights gives no column. A trial without probes never gets here.
"""

from __future__ import annotations

import torch

from core.probe_names import asked
from trainables.gros2024.model import StackedBilayer
from trainables.gros2024.tasks import COMPONENTS, continue_series, initial_symbols
from trainables.probes import attention_columns, member_values, mixer_weights

PROBE_SERIES = 32
PROBE_SEED = 0x9E0B


def probe_contexts(model: StackedBilayer) -> torch.Tensor:
    """The probe contexts (K, PROBE_SERIES, n_context), the same for every member."""
    cfg = model.cfg
    gen = torch.Generator(device=model.device).manual_seed(PROBE_SEED)
    components = COMPONENTS[cfg.task]
    parts = []
    for i, task in enumerate(components):
        n = PROBE_SERIES // len(components) + (i < PROBE_SERIES % len(components))
        start, rules = initial_symbols(task, cfg.basis, cfg.delay, n, gen)
        parts.append(continue_series(start, rules, cfg.basis, cfg.delay, cfg.n_context))  # (n, T)
    return torch.cat(parts).expand(model.k, -1, -1).contiguous()


@torch.no_grad()
def probe_columns(model: StackedBilayer, contexts: torch.Tensor, request: str | None) -> list[dict[str, float]]:
    """Each member's probe columns on ``contexts`` (K, S, T)."""
    names = asked(request)
    w = mixer_weights(model.mixer, model.mixer_input(contexts), causal=True) if names else None  # (K, S, H, T, T)
    if w is None:
        return [{} for _ in range(model.k)]
    return member_values(attention_columns(w, None, names, layer=1), model.k)
