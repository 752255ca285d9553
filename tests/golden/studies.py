"""Fixed-seed tiny studies of every model family whose rows must never change by accident.

Each entry is (study, packing): the study runs in-process through the Tune adapter (``run_trial``, no Ray) in
float64 (``precision="fp64"``), so the check covers the whole path from a search-space point to a Parquet row
and holds on any CPU (tests/test_rows_unchanged.py). Together they touch every
architecture, task, registered mixer (solo and packed), packed learning rates, dropout + L2, divergence, the
Gros bilayer (paper heads and registry mixers, stacked and one seed at a time) and the CTL models.
"""

from __future__ import annotations

from search_spaces import Linked, Study

_RICHTER = {"d_model": 8, "n_heads": 2, "seq_len": 8, "n_steps": 20, "eval_every": 10, "eval_batches": 2,
            "case_eval_per_case": 10, "batch_size": 8, "learning_rate": 0.003}
_MIXERS = ("softmax", "normalized", "no_norm", "sum", "max", "mean", "expressive", "average", "bilinear", "sepconv")
_GROS = {"basis": 4, "delay": 1, "n_context": 6, "n_epochs": 20, "eval_every": 10, "eval_series": 8,
         "eval_predictions": 6, "final_eval_series": 16}
_CTL = {"d_model": 8, "d_ff": 16, "n_heads": 2, "n_layers": 3, "n_steps": 4, "eval_every": 2, "eval_samples": 32,
        "batch_size": 16}

ARCHITECTURES = Study(
    name="golden.architectures", goal="every Richter architecture on every task",
    scientific={"architecture": ("BERT", "MTE", "NAP", "NON", "sum", "max", "EA"),
                "task": ("cases", "cases_first_token", "mode")},
    fixed=_RICHTER, seeds=(0, 1),
)
MIXERS = Study(
    name="golden.mixers", goal="every registered mixer in the Richter encoder", tasks=("cases",),
    scientific={"mixer": _MIXERS}, fixed={**_RICHTER, "architecture": "MTE", "val_seq_len": 8, "conv_width": 3},
    seeds=(0, 1),
)
RATES = Study(
    name="golden.rates", goal="packed learning rates, one of them diverging", tasks=("mode",),
    scientific={"architecture": ("NAP",)}, nuisance={"learning_rate": (0.01, 0.003, 1e6, 0.001)},
    fixed={k: v for k, v in _RICHTER.items() if k != "learning_rate"}, seeds=(0, 1), learning_rates_per_trial=2,
)
REGULARISED = Study(
    name="golden.regularised", goal="dropout, L2, warm-up and clipping", tasks=("cases",),
    # 1e200 diverges (NaN) at once in float64; 1e6 left weights of ~1e6 that train chaotically without a NaN,
    # where the last bit of one SIMD path grows into other predictions (no golden value can hold there).
    scientific={"architecture": ("BERT", "NAP")}, nuisance={"learning_rate": (0.003, 1e200)},
    fixed={**{k: v for k, v in _RICHTER.items() if k != "learning_rate"}, "dropout": 0.1, "l2_weight": 0.001},
    seeds=(0, 1),
)
GROS = Study(
    name="golden.gros", goal="the Gros bilayer: heads, weight sharing, tasks",
    scientific={"attention": ("dpa", "ea"), "weights": ("per_token", "shared"), "task": ("nt", "nt_mix")},
    fixed=_GROS, seeds=(0, 1),
)
GROS_EXTRA = Study(
    name="golden.gros_extra", goal="the Gros bilayer: registry mixers, readout rate, divergence", tasks=("nt",),
    scientific={"mixer": ("softmax", "normalized", "bilinear", "sepconv", None)},
    nuisance={"learning_rate": (0.02, 1e30)},
    fixed={**_GROS, "n_heads": 2, "readout_lr_context": 3}, seeds=(0, 1),
)
GROS_ABLATION = Study(
    name="golden.gros_ablation", goal="the Gros bilayer's unstated choices as hyperparameters", tasks=("nt",),
    scientific={"variant": Linked(options={"init x0.5": {"init_scale": 0.5}, "no qkv bias": {"qkv_bias": False},
                                           "no LN affine": {"ln_affine": False}})},
    fixed=_GROS, seeds=(0, 1),
)
CTL = Study(
    name="golden.ctl", goal="the CTL models and registry mixers in the Transformer", tasks=("ctl",),
    scientific={"model": ("Transformer", "NDR", "LSTM", "+ rel + gate", "+ abs/rel + gate", "+ geom. att.")},
    fixed=_CTL, seeds=(0,),
)
CTL_MIXERS = Study(
    name="golden.ctl_mixers", goal="registry mixers in the CTL Transformer", tasks=("ctl",),
    scientific={"mixer": ("softmax", "sepconv", "bilinear", "average")},
    fixed={**_CTL, "model": "Transformer", "direction": "backward"}, seeds=(0,),
)

#: (study, packing) pairs; packing None is the family's default on this CPU.
RUNS: tuple[tuple[Study, bool | None], ...] = (
    (ARCHITECTURES, None),
    (MIXERS, False),
    (MIXERS, True),
    (RATES, None),
    (REGULARISED, False),
    (REGULARISED, True),
    (GROS, None),
    (GROS, False),
    (GROS_EXTRA, None),
    (GROS_EXTRA, False),
    (GROS_ABLATION, None),
    (CTL, None),
    (CTL_MIXERS, None),
)
