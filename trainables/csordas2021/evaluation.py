"""Evaluating the members of a CTL stack (one model is K = 1): the evaluation sets and the probe figures' artifacts.

Every member sees the same evaluation samples in the same length-sorted batches, as one stacked forward pass per
batch; its loss is summed per member with the reduction a one-seed run uses, so a member's numbers are seed k's
alone up to float rounding (bit for bit at K = 1). The counts and sums stay on the device until one read per
evaluation.

Probe (the figures): the final model of every member that did not diverge runs on one fixed input, the first
depth-test sample (depth 9) in the trial's direction; ``attention`` holds every step's attention map (step, head,
query, key, weight) and ``gates`` every step's mean gate activation per column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from trainables.csordas2021.config import CTLConfig
from trainables.csordas2021.ctl import TABLE_NAMES, Encoded
from trainables.csordas2021.members import Members
from trainables.csordas2021.models import SharedLayerClassifier
from trainables.dtypes import at_least_fp32
from trainables.rows import Row

#: Metric prefix -> evaluation split: valid/iid (depth 2-5), valid/deeper_val (6-8), test/deeper (9-10).
EVAL_SETS = {"iid": "iid_valid", "depth_val": "depth_valid", "test": "depth_test"}
EVAL_BATCH = 1024


def _size(data: Encoded, limit: int | None) -> int:
    """How many samples of ``data`` an evaluation reads (the first ``limit``; all if None)."""
    return len(data) if limit is None else min(limit, len(data))


@torch.no_grad()
def evaluate(members: Members, data: Encoded, limit: int | None, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(right answers, summed loss) per member, each (K,) float64 on ``device``, over the first ``limit`` samples (all
    if None) in length-sorted batches."""
    n, k = _size(data, limit), members.k
    order = torch.sort(data.lengths[:n], descending=True, stable=True).indices
    correct = torch.zeros(k, dtype=torch.float64, device=device)
    loss = torch.zeros(k, dtype=torch.float64, device=device)
    for start in range(0, n, EVAL_BATCH):
        tokens, lengths, labels = data.batch(order[start:start + EVAL_BATCH])
        b, width = tokens.shape
        logits = at_least_fp32(members(tokens.to(device).expand(k, b, width), lengths.to(device).expand(k, b)))
        labels = labels.to(device)
        correct += (logits.argmax(-1) == labels).sum(-1)
        loss += torch.stack([F.cross_entropy(logits[i], labels, reduction="sum") for i in range(k)]).double()
    return correct, loss


def evaluate_all(members: Members, splits: dict[str, Encoded], cfg: CTLConfig, device: str) -> list[dict[str, Any]]:
    """Each member's metrics on every evaluation set (``{prefix}_accuracy``, ``{prefix}_loss``, and ``val_*`` =
    IID's): one read from the device for all of them."""
    members.module.eval()
    columns: list[torch.Tensor] = []
    for split in EVAL_SETS.values():
        columns += evaluate(members, splits[split], cfg.eval_samples, device)
    values = torch.stack(columns, dim=1).cpu().tolist()  # (K, 2 per set): the host sync of this evaluation
    members.module.train()
    out = []
    for v in values:
        metrics: dict[str, Any] = {}
        for i, (prefix, split) in enumerate(EVAL_SETS.items()):
            n = _size(splits[split], cfg.eval_samples)
            metrics[f"{prefix}_accuracy"], metrics[f"{prefix}_loss"] = v[2 * i] / n, v[2 * i + 1] / n
        metrics["val_accuracy"], metrics["val_loss"] = metrics["iid_accuracy"], metrics["iid_loss"]
        out.append(metrics)
    return out


def _word(token: int) -> str:
    if token < 8:
        return f"{token:03b}"
    if token < 19:
        return TABLE_NAMES[token - 8]
    return "EOS" if token == 19 else "SOS"


@torch.no_grad()
def probe(members: Members, data: Encoded, seeds: Sequence[int], alive: Sequence[bool],
          device: str) -> tuple[list[Row], list[Row]]:
    """Attention maps and gate activations of every step on the probe input (the first depth-test sample), for the
    members in ``alive`` (rows member by member)."""
    module = members.module
    if not isinstance(module, SharedLayerClassifier):
        return [], []
    tokens, lengths, labels = data.batch(torch.tensor([0]))
    words = [_word(int(t)) for t in tokens[0]]
    k = members.k
    module.eval()
    module.set_record(True)
    try:
        logits = members(tokens.to(device).expand(k, 1, -1), lengths.to(device).expand(k, 1))  # (K, 1, 8)
        predictions = logits.argmax(-1)[:, 0].tolist()
        trace = module.trace or []
    finally:
        module.set_record(False)
    attention_rows: list[Row] = []
    gate_rows: list[Row] = []
    for i in (i for i in range(k) if alive[i]):
        for step, entry in enumerate(trace, start=1):
            own = {name: (t if k == 1 else t[i]) for name, t in entry.items() if t is not None}  # (1, ...) each
            if "attention" in own:
                attention_rows += _attention_rows(own["attention"][0].float().cpu(), words, seeds[i], step)
            if "gates" in own:
                g = own["gates"][0].float().mean(-1).cpu()  # (N,), mean over channels
                gate_rows += [{"seed": seeds[i], "layer_step": step, "column": col, "token": words[col],
                               "gate": float(g[col]), "label": int(labels[0]), "prediction": predictions[i]}
                              for col in range(len(words))]
    return attention_rows, gate_rows


def _attention_rows(w: torch.Tensor, words: Sequence[str], seed: int, step: int) -> list[Row]:
    """One step's attention map (H, N, N) of one member as rows."""
    n = len(words)
    return [{"seed": seed, "layer_step": step, "head": head, "query": q, "key": key, "query_token": words[q],
             "key_token": words[key], "weight": float(w[head, q, key])}
            for head in range(w.shape[0]) for q in range(n) for key in range(n)]
