"""The CTL trial configuration and the per-model hyperparameters of the paper (docs/csordas2021.md).

Every field left at ``None`` takes the value of the model's row in the spec's hyperparameter table;
:meth:`CTLConfig.resolved` returns the concrete values, which are the Parquet hyperparameter columns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from core.probe_names import ATTENTION_PROBES, GATE_PROBES
from trainables.config_fields import ConfigFields

TASKS = ("ctl",)
DIRECTIONS = ("forward", "backward")  # forward: argument first; backward: argument last (torch-free here)

_TRANSFORMER = {"d_model": 128, "d_ff": 256, "n_heads": 4, "n_layers": 11, "batch_size": 512,
                "learning_rate": 1.5e-4, "weight_decay": 0.0025, "dropout": 0.1, "att_dropout": 0.0,
                "gate_dropout": 0.0, "n_steps": 30000, "length_bucketed": False, "optimizer": "adamw"}
_GATED = {"d_model": 256, "d_ff": 1024, "n_heads": 1, "n_layers": 14, "batch_size": 512,
          "learning_rate": 2e-4, "weight_decay": 0.01, "dropout": 0.5, "att_dropout": 0.1,
          "gate_dropout": 0.0, "n_steps": 30000, "length_bucketed": False, "optimizer": "adamw"}

#: Table 1 rows -> (attention, layer, embedding init) and their hyperparameters (docs/csordas2021.md).
VARIANTS: dict[str, dict[str, Any]] = {
    "LSTM": {"attention": "none", "layer": "lstm", "embedding_init": "default", "d_model": 200, "d_ff": 0,
             "n_heads": 1, "n_layers": 1, "batch_size": 256, "learning_rate": 1e-3, "weight_decay": 0.0,
             "dropout": 0.5, "att_dropout": 0.0, "gate_dropout": 0.0, "n_steps": 20000,
             "length_bucketed": False, "optimizer": "adam"},
    "Transformer": {"attention": "masked_softmax", "layer": "post_ln", "embedding_init": "default",
                    **_TRANSFORMER},
    "+ rel": {"attention": "relative", "layer": "post_ln", "embedding_init": "kaiming", **_TRANSFORMER},
    "+ rel + gate": {"attention": "relative", "layer": "gate_tanh", "embedding_init": "default", **_GATED},
    "+ abs/rel + gate": {"attention": "abs_relative", "layer": "gate_tanh", "embedding_init": "default",
                         **_GATED},
    "+ geom. att.": {"attention": "geometric_normalized", "layer": "post_ln", "embedding_init": "kaiming",
                     **_TRANSFORMER},
    "NDR": {"attention": "geometric", "layer": "gate_ln", "embedding_init": "default",
            **{**_GATED, "d_ff": 512, "learning_rate": 1.5e-4, "gate_dropout": 0.1, "length_bucketed": True}},
}
MODELS = tuple(VARIANTS)
#: The paper's values of the two ablation fields (App. B, App. C.2): a row writes the field only when it differs.
PAPER_DIRECTIONAL = True
PAPER_GATE_BIAS = -3.0
#: The attentions with the directional term (geometric attention) and the layers with a copy gate.
DIRECTIONAL_ATTENTIONS = ("geometric", "geometric_normalized")
GATED_LAYERS = ("gate_ln", "gate_tanh")
#: What a CTL trial may probe (trainables.probes): its attention per step and head, its copy gate per step.
CTL_PROBES = (*ATTENTION_PROBES, *GATE_PROBES)


@dataclass(frozen=True, kw_only=True)
class CTLConfig(ConfigFields):
    """Hyperparameters of one CTL trial (names identical to the Parquet columns); None = the model's default.

    Attributes:
        model: Table 1 row: LSTM, Transformer, + rel, + rel + gate, + abs/rel + gate, + geom. att., NDR.
        task: ``ctl``.
        direction: ``forward`` (argument first, "→") or ``backward`` (argument last, "←").
        mixer: None (the model's own attention) or a name of ``trainables.mixers.MIXERS`` replacing the plain
            Transformer's attention (Transformer only; it gets the batch's key-padding mask).
        d_model: width d (LSTM: hidden size).
        d_ff: feed-forward hidden width (gated tanh rows: 4d as in the release).
        n_heads: attention heads.
        n_layers: times the one shared layer is applied (LSTM: 1).
        batch_size: training batch size.
        learning_rate: constant learning rate (no warm-up, no decay).
        weight_decay: AdamW weight decay on all parameters (LSTM: Adam, 0).
        dropout: dropout on sublayer outputs and FFN hidden layers.
        att_dropout: attention dropout (on the key vectors).
        gate_dropout: probability of forcing a (sample, position) gate to 0 (copy) while training.
        n_steps: optimiser steps.
        eval_every: steps between evaluations (the paper: 1000).
        eval_samples: evaluate on the first this many samples of each eval set; None = all.
        length_bucketed: length-bucketed batches (NDR) instead of uniform sampling with replacement.
        grad_clip_norm: clip the global gradient norm (over all parameters) to this value.
        holdout_seed: seed of the IID valid/test hold-out (the release's is unseeded).
        probes: None (nothing probed, no column), True / ``"all"``, or some of entropy, peak, distance, nearest, range,
            gate, gate_open (comma-separated or a list): statistics of the attention and copy gate per step at
            every evaluation, as ``probe_*`` columns (docs/csordas2021.md, "Probes").
        directional: True (the paper's geometric attention, App. B) or False: geometric attention without the
            directional term (logits alpha * (q_i + u)^T k_j + gamma from content alone; the direction layer and beta
            are not part of the model: the layer is drawn and discarded, so every other parameter starts as the
            paper model's of the same seed). False only for models with geometric attention (NDR, + geom. att.).
            A column only when False (a row without it ran the paper's attention).
        gate_bias: the initial bias of the copy gate's output layer (the paper's -3, App. C.2: sigmoid(-3) ~ 0.047,
            layers start close to copying). Another value only for models with the copy gate (NDR, + rel + gate,
            + abs/rel + gate). A column only when not -3 (a row without it ran the paper's init).
    """

    REQUIRED = ("model",)
    model: str
    task: str = "ctl"
    direction: str = "forward"
    mixer: str | None = None
    d_model: int | None = None
    d_ff: int | None = None
    n_heads: int | None = None
    n_layers: int | None = None
    batch_size: int | None = None
    learning_rate: float | None = None
    weight_decay: float | None = None
    dropout: float | None = None
    att_dropout: float | None = None
    gate_dropout: float | None = None
    n_steps: int | None = None
    eval_every: int = 1000
    eval_samples: int | None = None
    length_bucketed: bool | None = None
    grad_clip_norm: float = 5.0
    holdout_seed: int = 0
    probes: str | None = None
    directional: bool = PAPER_DIRECTIONAL
    gate_bias: float = PAPER_GATE_BIAS

    def __post_init__(self) -> None:
        self.require_choice("model", MODELS)
        self.require_choice("task", TASKS)
        self.require_choice("direction", DIRECTIONS)
        self._check_mixer()
        self.require_ints(["d_model", "n_heads", "n_layers", "batch_size", "n_steps", "eval_every", "eval_samples"],
                          optional=True, allowed="None (model default) or a positive integer")
        self.require_ints(["d_ff"], minimum=0, optional=True, allowed="None (model default) or an integer >= 0")
        self.require_ints(["holdout_seed"], minimum=0, allowed="an integer >= 0")
        for name in ("learning_rate", "grad_clip_norm"):
            self.require_real(name, low=0, optional=True, allowed="None (model default) or a number > 0")
        self.require_real("weight_decay", low=0, low_open=False, optional=True,
                          allowed="None (model default) or a number >= 0")
        for name in ("dropout", "att_dropout", "gate_dropout"):
            self.require_real(name, low=0, high=1, low_open=False, optional=True,
                              allowed="None (model default) or a number in [0, 1)")
        self.require_bools(["length_bucketed"], allowed="None (model default), True or False")
        self.require_probes(CTL_PROBES)
        self.require_bools(["directional"], allowed="True or False", optional=False)
        self.require_real("gate_bias", low=-math.inf, high=math.inf, allowed="a finite number")
        r = self.resolved()
        if not self.directional and r["attention"] not in DIRECTIONAL_ATTENTIONS:
            raise self.invalid("directional", f"True for model {self.model!r} (only geometric attention, NDR and "
                                              "+ geom. att., has the directional term)")
        if self.gate_bias != PAPER_GATE_BIAS and r["layer"] not in GATED_LAYERS:
            raise self.invalid("gate_bias", f"{PAPER_GATE_BIAS} for model {self.model!r} (only the copy-gated models, "
                                            "NDR, + rel + gate and + abs/rel + gate, have a gate bias)")
        if r["layer"] != "lstm" and r["d_model"] % r["n_heads"]:
            raise self.invalid("d_model", f"a multiple of n_heads={r['n_heads']}")
        if r["n_steps"] % self.eval_every:
            raise self.invalid("n_steps", f"a multiple of eval_every={self.eval_every}")

    def _check_mixer(self) -> None:
        """A registry mixer replaces the plain Transformer's attention only."""
        if self.mixer is None:
            return
        from trainables.mixers import MIXERS

        self.require_choice("mixer", (None, *MIXERS.names()))
        if not MIXERS.get(self.mixer).supports_mask:
            raise self.invalid("mixer", "a mixer that supports a key-padding mask (CTL batches are padded)"
                               + MIXERS.get(self.mixer).interface_hint())
        if self.model != "Transformer":
            raise self.invalid("mixer", f"None for model {self.model!r} (registry mixers replace the "
                                        "Transformer's attention only)")

    def resolved(self) -> dict[str, Any]:
        """Every hyperparameter as the concrete value used (None -> the model's default), plus the model's
        attention (null where a registry ``mixer`` replaces it), layer, embedding init and optimiser; without
        ``directional`` and ``gate_bias`` at the paper's values and without unasked ``probes``."""
        variant = VARIANTS[self.model]
        out: dict[str, Any] = {}
        for name in self.field_names():
            value = getattr(self, name)
            out[name] = variant[name] if value is None and name in variant else value
        for name in ("attention", "layer", "embedding_init", "optimizer"):
            out[name] = variant[name]
        if self.mixer is not None:
            out["attention"] = None
        for name in ("learning_rate", "weight_decay", "dropout", "att_dropout", "gate_dropout", "grad_clip_norm"):
            out[name] = float(out[name])
        # the ablation fields at the paper's values write no column: a row written before they existed stays as it was
        if out["directional"] == PAPER_DIRECTIONAL:
            del out["directional"]
        if out["gate_bias"] == PAPER_GATE_BIAS:
            del out["gate_bias"]
        return self.without_unasked_probes(out)
