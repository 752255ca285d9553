"""Csordás, Irie & Schmidhuber 2021, "The Neural Data Router" (arXiv:2110.07732), on compositional table lookup.

``csordas2021.table1`` is the paper's Table 1: seven models (the DNC row is not implemented) x two
presentation orders x 5 seeds, each model with its own hyperparameters (spec 1.6.2, ``trainables.ndr.config``).
``csordas2021.ndr_tpe`` tunes NDR's learning rate, weight decay, dropout and depth with Optuna's TPE on the
depth-validation accuracy (the authors used Weights & Biases' Bayesian sweeps for this). Spec:
shared/specs/csordas2021.md; implementation: ``trainables.ndr``; report sections: ``analysis.ndr``.
"""

from __future__ import annotations

from search_spaces.study import IntRange, Linked, LogUniform, Plot, Study, Uniform
from trainables.ndr.config import DIRECTIONS, VARIANTS

# NDR and the two gated rows first: a grid runs in this order, so a partial run has the headline rows.
MODELS = ("NDR", "+ abs/rel + gate", "+ rel + gate", "LSTM", "Transformer", "+ rel", "+ geom. att.")

COMMON_DEVIATIONS = (
    "The DNC row of Table 1 is not implemented (no DNC in this project).",
    "The IID valid/test hold-out is drawn with RandomState(0) (the release uses numpy's unseeded global RNG, "
    "fixed only by its disk cache); both directions therefore share one split. All other draws follow the "
    "release's order on RandomState(0x12345678): 608 reserved compositions, 53,704 training samples, "
    "depth-valid 6-8 (330/327/343), depth test 9-10 (514/486).",
    "Every Transformer baseline uses depth-valid 6-8 / depth test 9-10 (the release's vanilla, +rel and "
    "+geom. att. sweeps used 6-7 / 8-10, spec 1.1.4): one test set for all rows.",
    "Trained in fp32 (the release uses fp16 AMP for NDR and the gate variants); seeds are explicit "
    "(torch.manual_seed(seed) for the init, a per-seed generator for the batches) where the release left "
    "them unset.",
    "The LSTM's 0.5 dropout is applied to the embeddings and to the final state before the classifier; "
    "the '+ rel + gate' layers' gate FFN has hidden width d, as NDR's (the spec does not say).",
    "Plain Transformer: torch's nn.MultiheadAttention (in-projection biases, Xavier init) with a key "
    "padding mask.",
)
PAPER_FIXED = {"eval_every": 1000}


def _shrunk(width: dict[str, dict[str, int]], lr_factor: dict[str, float]) -> Linked:
    """The model axis at a reduced scale: every model with its own width overrides and learning rate x factor."""
    return Linked(options={m: {"model": m, **width.get(m, {}),
                               "learning_rate": VARIANTS[m]["learning_rate"] * lr_factor.get(m, 1.0)}
                           for m in MODELS})


# cpu scale, measured on this 2-core machine while two other studies ran (load 5-6): a d=32 Transformer
# variant takes 56-147 ms per step at batch 64 with one thread, the LSTM 19 ms (about 0.3 s per step for the
# seven models together on a quiet core). Seventy runs (7 models x 2 directions x 5 seeds) should fit in about
# an hour on 2 cores, so: the paper's depth (11 / 14 shared layers) at a quarter of the width, batch 64,
# CPU_STEPS steps, learning rates x4 (LSTM x2), evaluation every CPU_EVAL_EVERY steps on the first 1,000
# samples of each evaluation set. Measured afterwards in the (shared, loaded) cpu run: an NDR seed took
# ~170 CPU-seconds, which extrapolates to ~1.5 h on 2 cores for the whole table (docs/csordas2021.md).
CPU_STEPS = 1500
CPU_EVAL_EVERY = 250
CPU_LR_FACTOR = {**{m: 4.0 for m in MODELS}, "LSTM": 2.0}
CPU_WIDTH = {
    "LSTM": {"d_model": 100},
    **{m: {"d_model": 32, "d_ff": 64} for m in ("Transformer", "+ rel", "+ geom. att.", "NDR")},
    **{m: {"d_model": 32, "d_ff": 128} for m in ("+ rel + gate", "+ abs/rel + gate")},
}
CPU_DEVIATION = (
    f"cpu scale: {CPU_STEPS} steps of batch 64 (paper: 20k-30k steps of batch 256-512), a quarter of the width "
    f"(d=32; LSTM hidden 100), learning rates x4 (LSTM x2), evaluation every {CPU_EVAL_EVERY} steps on the "
    "first 1,000 samples of each evaluation set; the paper's depth, dropout and all 5 seeds x 2 directions. "
    "Expect far lower accuracies: this budget shows which models start to learn, not where they converge."
)
SMOKE_WIDTH = {m: ({"d_model": 8} if m == "LSTM" else {"d_model": 8, "d_ff": 16, "n_heads": 1, "n_layers": 2})
               for m in MODELS}

TABLE1 = Study(
    name="csordas2021.table1", task="ctl",
    goal="Which of the Transformer modifications (relative positions, copy gate, abs/rel switch, geometric "
         "attention) generalise compositional table lookup to deeper compositions (9-10 functions) in "
         "both presentation orders, and does NDR (geometric attention + copy gate) solve it (Table 1)?",
    scientific={"model": MODELS, "direction": DIRECTIONS},
    fixed=PAPER_FIXED,
    seeds=(0, 1, 2, 3, 4),
    metric="depth_val_accuracy", mode="max",
    plot=Plot(panel="direction", x="model", y="learning_rate"),
    deviations=COMMON_DEVIATIONS,
    sections=("csordas2021.table1", "csordas2021.probe"),
    scales={
        "cpu": {"scientific": {"model": _shrunk(CPU_WIDTH, CPU_LR_FACTOR)},
                "fixed": {"n_steps": CPU_STEPS, "eval_every": CPU_EVAL_EVERY, "eval_samples": 1000,
                          "batch_size": 64},
                "deviations": COMMON_DEVIATIONS + (CPU_DEVIATION,)},
        "smoke": {"scientific": {"model": _shrunk(SMOKE_WIDTH, {})},
                  "fixed": {"n_steps": 4, "eval_every": 2, "eval_samples": 16, "batch_size": 8},
                  "seeds": (0, 1),
                  "deviations": COMMON_DEVIATIONS + ("smoke scale: 4 steps of tiny models; tests only.",)},
    },
)

NDR_TPE = Study(
    name="csordas2021.ndr_tpe", task="ctl",
    goal="Which learning rate, weight decay, dropout and depth give NDR the best depth-validation (6-8) "
         "accuracy on CTL? (The authors tuned with Weights & Biases' Bayesian search; here Optuna's TPE.)",
    scientific={"model": ("NDR",), "direction": ("backward",)},
    nuisance={"learning_rate": LogUniform(low=5e-5, high=2e-3), "weight_decay": LogUniform(low=1e-4, high=0.1),
              "dropout": Uniform(low=0.0, high=0.6), "n_layers": IntRange(low=8, high=16)},
    fixed=PAPER_FIXED,
    seeds=(0, 1),
    sampler="tpe", n_trials=40,
    metric="depth_val_accuracy", mode="max",
    plot=Plot(panel="model", x="n_layers", y="learning_rate"),
    deviations=COMMON_DEVIATIONS + (
        "The backward direction (the harder one for every baseline) is tuned; 2 seeds per trial, 40 trials.",),
    scales={
        "cpu": {"fixed": {"n_steps": CPU_STEPS, "eval_every": CPU_EVAL_EVERY, "eval_samples": 1000,
                          "batch_size": 64, "d_model": 32, "d_ff": 64},
                "nuisance": {"learning_rate": LogUniform(low=2e-4, high=5e-3), "n_layers": IntRange(low=6, high=14)},
                "seeds": (0,), "n_trials": 8,
                "deviations": COMMON_DEVIATIONS + (CPU_DEVIATION, "cpu scale: 8 trials of one seed.")},
        "smoke": {"fixed": {"n_steps": 4, "eval_every": 2, "eval_samples": 16, "batch_size": 8, "d_model": 8,
                            "d_ff": 16},
                  "nuisance": {"n_layers": IntRange(low=1, high=3)},
                  "seeds": (0,), "n_trials": 2,
                  "deviations": COMMON_DEVIATIONS + ("smoke scale: 2 trials of 4 steps; tests only.",)},
    },
)

STUDIES = (TABLE1, NDR_TPE)
