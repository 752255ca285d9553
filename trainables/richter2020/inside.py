"""The Richter family's probe columns (docs/richter2020.md, "Probes"): how each layer's mixer weighs the tokens.

At every evaluation, when the trial asks for probes (``TrainConfig.probes``), the members run once more, in
evaluation mode, on the first :data:`PROBE_EXAMPLES` (8) sequences of their first validation batch (a function of the
member's seed, at ``val_seq_len``: the same sequences at every evaluation, and no random stream moves). A forward
pre-hook on each layer's mixer, there for this one pass only, keeps its input; the mixer's own attention weights on
it (:func:`trainables.probes.mixer_weights`: every multi-head mixer; uniform for average attention and mean
pooling; none for sum, max, convolution and bilinear layers) become ``probe_<statistic>_l<layer>_h<head>`` per
member, layers bottom first. ``bias`` reads no input: NAP's share of its bias b in the token weights per head
(:meth:`trainables.mixers.normalized.NormalizedAttention.bias_share`; no column for a mixer without b). A trial
without probes never gets here.
"""

from __future__ import annotations

import torch

from core.probe_names import PARAMETER_PROBES, asked, column
from trainables.probes import Columns, attention_columns, inputs_of, member_values, mixer_weights
from trainables.richter2020.model import Layer, Model

#: Sequences the probes read: at the cpu scale's val_seq_len of 256, 8 keep them under 5% of a trial (bench/README.md).
PROBE_EXAMPLES = 8


@torch.no_grad()
def probe_columns(module: Model, tokens: torch.Tensor, request: str | None, k: int) -> list[dict[str, float]]:
    """Each member's probe columns on tokens (K, B, N); ``module``: the K members stacked (one model at K = 1)."""
    names = asked(request)
    weight_names = [n for n in names if n not in PARAMETER_PROBES]
    mixers = [layer.mixer for layer in module.layers if isinstance(layer, Layer)]
    columns: Columns = []
    if weight_names:
        with inputs_of(mixers) as seen:
            module(tokens) if k > 1 else module(tokens[0])
        for layer, (mixer, x) in enumerate(zip(mixers, seen, strict=True), start=1):
            w = None if x is None else mixer_weights(mixer, x)  # (K, B, H, N, N), or (B, H, N, N) at K = 1
            if w is not None:
                columns += attention_columns(w if k > 1 else w.unsqueeze(0), None, weight_names, layer=layer)
    if "bias" in names:
        for layer, mixer in enumerate(mixers, start=1):
            share = getattr(mixer, "bias_share", None)
            if share is not None:
                values = share().reshape(k, -1)  # (K, H)
                columns += [(column("bias", layer=layer, head=h + 1), values[:, h]) for h in range(values.shape[1])]
    return member_values(columns, k)
