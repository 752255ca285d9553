"""Training loop of the CTL family (docs/csordas2021.md): AdamW, clipping, constant LR, evaluation every eval_every.

Rows (one per seed and evaluation): ``train_loss``/``train_accuracy`` (means over the batches since the
previous evaluation), ``iid_accuracy``/``iid_loss`` (valid/iid, depth 2-5), ``depth_val_accuracy``/
``depth_val_loss`` (valid/deeper_val, depth 6-8), ``test_accuracy``/``test_loss`` (test/deeper, depth 9-10,
the "longer" columns) and ``val_accuracy`` (= iid_accuracy, for the generic report). Table 1's statistic
(IID at the end, longer at the best depth-valid step) is computed from these rows in ``analysis.papers.csordas2021``.

Artifacts (the probe figures): the final model of every seed runs on one fixed probe input, the first
depth-test sample (depth 9) in the trial's direction; ``attention`` holds every step's attention map
(step, head, query, key, weight) and ``gates`` every step's mean gate activation per column.
"""

from __future__ import annotations

import math
import time
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from trainables.csordas2021.config import CTLConfig
from trainables.csordas2021.ctl import TABLE_NAMES, Encoded, encoded_splits, length_bucketed_batches, uniform_batches
from trainables.csordas2021.geometric import GeometricAttention
from trainables.csordas2021.models import (
    GatedLayer,
    LSTMClassifier,
    PostLNLayer,
    RegistryMixer,
    RelativeAttention,
    SharedLayerClassifier,
)
from trainables.dtypes import at_least_fp32
from trainables.rows import OnEval, Row, SeedRows, stream_seed
from trainables.stacked import count_parameters

EVAL_SETS = {"iid": "iid_valid", "depth_val": "depth_valid", "test": "depth_test"}
EVAL_BATCH = 1024
STREAM_SALT = 17  # the batch order's stream (changing it changes every result)
#: The metrics of an evaluation point a diverged seed did not reach.
EMPTY_METRICS: dict[str, Any] = {"train_loss": math.nan, "train_accuracy": 0.0,
                                 **{f"{p}_{m}": (0.0 if m == "accuracy" else math.nan)
                                    for p in (*EVAL_SETS, "val") for m in ("accuracy", "loss")}}


def build_model(cfg: CTLConfig) -> nn.Module:
    """The model of ``cfg.model`` with the resolved hyperparameters."""
    r = cfg.resolved()
    d, h = r["d_model"], r["n_heads"]
    if r["layer"] == "lstm":
        return LSTMClassifier(d, r["dropout"])
    attention: nn.Module
    if r["mixer"] is not None:
        attention = RegistryMixer(r["mixer"], d, h, dropout=r["att_dropout"])
    elif r["attention"] == "masked_softmax":
        attention = RegistryMixer("softmax", d, h, dropout=r["att_dropout"], torch_mha_init=True)
    elif r["attention"] in ("relative", "abs_relative"):
        attention = RelativeAttention(d, h, dropout=r["att_dropout"], abs_gate=r["attention"] == "abs_relative")
    elif r["attention"] in ("geometric", "geometric_normalized"):
        attention = GeometricAttention(d, h, dropout=r["att_dropout"],
                                       normalize=r["attention"] == "geometric_normalized")
    else:
        raise ValueError(f"invalid attention={r['attention']!r}; allowed: masked_softmax, relative, abs_relative, "
                         "geometric, geometric_normalized")
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
        logits = at_least_fp32(model(tokens.to(device), lengths.to(device)))
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

    A non-finite training loss stops the seed: the row writer fills its remaining evaluation points (accuracy 0,
    NaN losses) and marks it ``diverged``; a diverged seed has no probe rows.
    """
    start = time.perf_counter()
    r = cfg.resolved()
    splits = encoded_splits(cfg.direction, cfg.holdout_seed)
    train = splits["train"]
    torch.manual_seed(seed)
    model = build_model(cfg).to(device)
    writer = SeedRows(seed, n_params=count_parameters(model), device=device, on_eval=on_eval, start=start)
    optimizer = _optimizer(model, r)
    generator = torch.Generator().manual_seed(stream_seed(seed, 0, STREAM_SALT))
    batches = (length_bucketed_batches(train.lengths, r["batch_size"], generator) if r["length_bucketed"]
               else uniform_batches(len(train), r["batch_size"], generator))
    loss_sum, correct_sum, seen = 0.0, 0.0, 0
    model.train()
    step = 0
    while step < r["n_steps"]:
        tokens, lengths, labels = (t.to(device) for t in train.batch(next(batches)))
        logits = model(tokens, lengths)
        loss = F.cross_entropy(logits, labels)
        loss_value = float(loss.detach())
        if not math.isfinite(loss_value):
            writer.stop(step, cfg.eval_every, r["n_steps"], EMPTY_METRICS)
            return writer.finish(), [], []
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), r["grad_clip_norm"])
        optimizer.step()
        step += 1
        loss_sum += loss_value
        correct_sum += float((logits.detach().argmax(-1) == labels).float().mean())
        seen += 1
        if step % cfg.eval_every == 0:
            writer.emit(step, step // cfg.eval_every, _evaluate_all(model, splits, cfg, device,
                                                                    loss_sum / seen, correct_sum / seen))
            loss_sum, correct_sum, seen = 0.0, 0.0, 0
    attention_rows, gate_rows = probe(model, splits["depth_test"], seed, device)
    return writer.finish(), attention_rows, gate_rows


def _optimizer(model: nn.Module, r: dict[str, Any]) -> torch.optim.Optimizer:
    """Adam for the LSTM, AdamW (the model's weight decay) for every Transformer variant."""
    if r["optimizer"] == "adam":
        return torch.optim.Adam(model.parameters(), lr=r["learning_rate"])
    return torch.optim.AdamW(model.parameters(), lr=r["learning_rate"], betas=(0.9, 0.999), eps=1e-8,
                             weight_decay=r["weight_decay"])


def _evaluate_all(model: nn.Module, splits: dict[str, Encoded], cfg: CTLConfig, device: str, train_loss: float,
                  train_accuracy: float) -> dict[str, Any]:
    """The metrics of one evaluation: training means since the last one, then every evaluation set."""
    model.eval()
    metrics: dict[str, Any] = {"train_loss": train_loss, "train_accuracy": train_accuracy}
    for prefix, split in EVAL_SETS.items():
        acc, lss = evaluate(model, splits[split], cfg.eval_samples, device)
        metrics[f"{prefix}_accuracy"], metrics[f"{prefix}_loss"] = acc, lss
    metrics["val_accuracy"], metrics["val_loss"] = metrics["iid_accuracy"], metrics["iid_loss"]
    model.train()
    return metrics
