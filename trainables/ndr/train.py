"""Training loop of the CTL family (spec 1.6): AdamW, clipping, constant LR, evaluation every eval_every steps.

Rows (one per seed and evaluation): ``train_loss``/``train_accuracy`` (means over the batches since the
previous evaluation), ``iid_accuracy``/``iid_loss`` (valid/iid, depth 2-5), ``depth_val_accuracy``/
``depth_val_loss`` (valid/deeper_val, depth 6-8), ``test_accuracy``/``test_loss`` (test/deeper, depth 9-10,
the "longer" columns) and ``val_accuracy`` (= iid_accuracy, for the generic report). Table 1's statistic
(IID at the end, longer at the best depth-valid step) is computed from these rows in ``analysis.ndr``.

Artifacts (the probe figures): the final model of every seed runs on one fixed probe input, the first
depth-test sample (depth 9) in the trial's direction; ``attention`` holds every step's attention map
(step, head, query, key, weight) and ``gates`` every step's mean gate activation per column.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from trainables.families import FAMILIES, Family, OnEval, Row, TrialResult
from trainables.model import count_parameters
from trainables.ndr.config import TASKS, CTLConfig
from trainables.ndr.ctl import TABLE_NAMES, Encoded, encoded_splits, length_bucketed_batches, uniform_batches
from trainables.ndr.geometric import GeometricAttention
from trainables.ndr.models import (
    GatedLayer,
    LSTMClassifier,
    PostLNLayer,
    RegistryMixer,
    RelativeAttention,
    SharedLayerClassifier,
    SoftmaxAttention,
)

EVAL_SETS = {"iid": "iid_valid", "depth_val": "depth_valid", "test": "depth_test"}
EVAL_BATCH = 1024


def build_model(cfg: CTLConfig) -> nn.Module:
    """The model of ``cfg.model`` with the resolved hyperparameters."""
    r = cfg.resolved()
    d, h = r["d_model"], r["n_heads"]
    if r["layer"] == "lstm":
        return LSTMClassifier(d, r["dropout"])
    attention: nn.Module
    if r["attention"] == "masked_softmax":
        attention = SoftmaxAttention(d, h, dropout=r["att_dropout"])
    elif r["attention"] in ("relative", "abs_relative"):
        attention = RelativeAttention(d, h, dropout=r["att_dropout"], abs_gate=r["attention"] == "abs_relative")
    elif r["attention"] in ("geometric", "geometric_normalized"):
        attention = GeometricAttention(d, h, dropout=r["att_dropout"],
                                       normalize=r["attention"] == "geometric_normalized")
    else:
        attention = RegistryMixer(r["attention"], d, h, dropout=r["att_dropout"])
    layer: nn.Module
    if r["layer"] == "post_ln":
        layer = PostLNLayer(attention, d, r["d_ff"], r["dropout"])
    else:
        layer = GatedLayer(attention, d, r["d_ff"], r["dropout"], update="ln" if r["layer"] == "gate_ln" else "tanh",
                           gate_dropout=r["gate_dropout"])
    # Sinusoidal positions for the plain Transformer and the registry mixers (which have no positions).
    absolute = r["attention"] not in ("relative", "abs_relative", "geometric", "geometric_normalized")
    return SharedLayerClassifier(layer, d, r["n_layers"], absolute_positions=absolute,
                                 embedding_init=r["embedding_init"])


@torch.no_grad()
def evaluate(model: nn.Module, data: Encoded, limit: int | None, device: str) -> tuple[float, float]:
    """(accuracy, mean loss) over the first ``limit`` samples (all if None), in length-sorted batches."""
    n = len(data) if limit is None else min(limit, len(data))
    order = torch.sort(data.lengths[:n], descending=True, stable=True).indices
    correct, loss = 0.0, 0.0
    for start in range(0, n, EVAL_BATCH):
        tokens, lengths, labels = data.batch(order[start:start + EVAL_BATCH])
        logits = model(tokens.to(device), lengths.to(device)).float()
        labels = labels.to(device)
        correct += float((logits.argmax(-1) == labels).sum())
        loss += float(F.cross_entropy(logits, labels, reduction="sum"))
    return correct / n, loss / n


@torch.no_grad()
def probe(model: nn.Module, data: Encoded, seed: int, device: str) -> tuple[list[Row], list[Row]]:
    """Attention maps and gate activations of every step on the probe input (the first depth-test sample)."""
    if not hasattr(model, "layer"):
        return [], []
    tokens, lengths, labels = data.batch(torch.tensor([0]))
    words = [_word(int(t)) for t in tokens[0]]
    model.eval()
    model.set_record(True)
    try:
        prediction = int(model(tokens.to(device), lengths.to(device)).argmax(-1)[0])
        trace = model.trace or []
    finally:
        model.set_record(False)
    attention_rows: list[Row] = []
    gate_rows: list[Row] = []
    n = len(words)
    for step, entry in enumerate(trace, start=1):
        weights = entry["attention"]
        if weights is not None:
            w = weights[0].float().cpu()  # (H, N, N)
            for head in range(w.shape[0]):
                for q in range(n):
                    for k in range(n):
                        attention_rows.append({"seed": seed, "layer_step": step, "head": head, "query": q, "key": k,
                                               "query_token": words[q], "key_token": words[k],
                                               "weight": float(w[head, q, k])})
        gates = entry["gates"]
        if gates is not None:
            g = gates[0].float().mean(-1).cpu()  # (N,), mean over channels
            for col in range(n):
                gate_rows.append({"seed": seed, "layer_step": step, "column": col, "token": words[col],
                                  "gate": float(g[col]), "label": int(labels[0]), "prediction": prediction})
    return attention_rows, gate_rows


def _word(token: int) -> str:
    if token < 8:
        return f"{token:03b}"
    if token < 19:
        return TABLE_NAMES[token - 8]
    return "EOS" if token == 19 else "SOS"


def train_seed(cfg: CTLConfig, seed: int, *, device: str = "cpu", on_eval: OnEval | None = None
               ) -> tuple[list[Row], list[Row], list[Row]]:
    """Train one seed; returns (rows, attention probe rows, gate probe rows).

    A non-finite training loss stops the seed: its rows are marked ``diverged`` and the remaining evaluation
    points get accuracy 0 and NaN losses.
    """
    start = time.perf_counter()
    r = cfg.resolved()
    splits = encoded_splits(cfg.direction, cfg.holdout_seed)
    train = splits["train"]
    torch.manual_seed(seed)
    model = build_model(cfg).to(device)
    n_params = count_parameters(model)
    if r["optimizer"] == "adam":
        optimizer: torch.optim.Optimizer = torch.optim.Adam(model.parameters(), lr=r["learning_rate"])
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=r["learning_rate"], betas=(0.9, 0.999), eps=1e-8,
                                      weight_decay=r["weight_decay"])
    generator = torch.Generator().manual_seed(1_000_003 * seed + 17)
    batches = (length_bucketed_batches(train.lengths, r["batch_size"], generator) if r["length_bucketed"]
               else uniform_batches(len(train), r["batch_size"], generator))
    rows: list[Row] = []
    diverged = False
    loss_sum, correct_sum, seen = 0.0, 0.0, 0

    def emit(step: int, metrics: dict[str, Any]) -> None:
        row: Row = {"seed": seed, "step": step, "epoch": step // cfg.eval_every, **metrics,
                    "status": "diverged" if diverged else "ok", "wall_time_s": time.perf_counter() - start,
                    "n_params": n_params, "device": str(device)}
        rows.append(row)
        if on_eval is not None:
            on_eval(row)

    model.train()
    step = 0
    while step < r["n_steps"]:
        tokens, lengths, labels = train.batch(next(batches))
        tokens, lengths, labels = tokens.to(device), lengths.to(device), labels.to(device)
        logits = model(tokens, lengths)
        loss = F.cross_entropy(logits, labels)
        loss_value = float(loss.detach())
        if not math.isfinite(loss_value):
            diverged = True
            break
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), r["grad_clip"])
        optimizer.step()
        step += 1
        loss_sum += loss_value
        correct_sum += float((logits.detach().argmax(-1) == labels).float().mean())
        seen += 1
        if step % cfg.eval_every == 0:
            model.eval()
            metrics: dict[str, Any] = {"train_loss": loss_sum / seen, "train_accuracy": correct_sum / seen}
            for prefix, split in EVAL_SETS.items():
                acc, lss = evaluate(model, splits[split], cfg.eval_samples, device)
                metrics[f"{prefix}_accuracy"], metrics[f"{prefix}_loss"] = acc, lss
            metrics["val_accuracy"], metrics["val_loss"] = metrics["iid_accuracy"], metrics["iid_loss"]
            model.train()
            emit(step, metrics)
            loss_sum, correct_sum, seen = 0.0, 0.0, 0
    if diverged:
        first_missing = (step // cfg.eval_every + 1) * cfg.eval_every
        for missing in range(first_missing, r["n_steps"] + 1, cfg.eval_every):
            emit(missing, {"train_loss": math.nan, "train_accuracy": 0.0,
                           **{f"{p}_{m}": (0.0 if m == "accuracy" else math.nan)
                              for p in (*EVAL_SETS, "val") for m in ("accuracy", "loss")}})
        for row in rows:
            row["status"] = "diverged"
        return rows, [], []
    attention_rows, gate_rows = probe(model, splits["depth_test"], seed, device)
    return rows, attention_rows, gate_rows


def train(configs: Sequence[CTLConfig], seeds: Sequence[int], *, device: str = "cpu",
          on_eval: OnEval | None = None, packed: bool | None = None) -> TrialResult:
    """All seeds of one configuration, one after another (``packed`` is not supported and ignored)."""
    if len(configs) != 1:
        raise ValueError(f"invalid number of configs={len(configs)}; allowed: 1 (ctl does not pack learning rates)")
    rows: list[Row] = []
    attention: list[Row] = []
    gates: list[Row] = []
    for seed in seeds:
        r, a, g = train_seed(configs[0], seed, device=device, on_eval=on_eval)
        rows.extend(r)
        attention.extend(a)
        gates.extend(g)
    artifacts = {k: v for k, v in (("attention", attention), ("gates", gates)) if v}
    return TrialResult(rows, artifacts)


FAMILIES.add("csordas2021", Family(name="csordas2021", tasks=lambda: TASKS, config=CTLConfig, train=train))
