"""Richter & Wattenhofer 2020, "Normalized Attention Without Probability Cage" (arXiv:2005.09561).

One study per published figure or table, at the paper's exact scale (3200 steps of batch 32, Adam,
10 learning rates 0.3^k for k = 1..10, 5 seeds), each with a ``cpu`` scale (a meaningful fraction that a
2-core laptop finishes in a few hours: Fig. 7's took 2 h 56 min on one core) and a ``smoke`` scale (seconds,
for tests).
Notes: docs/richter2020.md. Figures that share their runs (Fig. 5 / Fig. 14, Fig. 16 /
Table 5, Fig. 9 / Table 1) are one study with aliases, so the models are trained once.
"""

from __future__ import annotations

from typing import Any

from search_spaces import Finding, Linked, Plot, Study
from search_spaces import richter2020_appendix_findings as appendix
from search_spaces import richter2020_findings as observed
from search_spaces import richter2020_init_findings as at_init

ARCHITECTURES = ("BERT", "MTE", "NAP", "NON", "sum", "max")
HEADED = ("BERT", "MTE", "NAP", "NON")  # sum and max have no heads
LEARNING_RATES = tuple(0.3**k for k in range(1, 11))  # 0.3 ... 5.9e-6, as in the release
POWERS_OF_TWO_D = tuple(2**k for k in range(3, 11))  # d = 8 ... 1024

# The cpu scale keeps every architecture and the paper's lr spacing but trims the grid, the seeds
# and the budget; the numbers below are measured to finish within about an hour on 2 cores.
CPU_LEARNING_RATES = (0.3**2, 0.3**4, 0.3**6, 0.3**8)  # 9e-2, 8.1e-3, 7.3e-4, 6.6e-5
CPU_BUDGET = {"n_steps": 800, "eval_every": 100, "eval_batches": 8, "case_eval_per_case": 200}
SMOKE_BUDGET = {"n_steps": 20, "eval_every": 10, "eval_batches": 2, "case_eval_per_case": 4,
                "batch_size": 4, "seq_len": 8}

COMMON_DEVIATIONS = (
    "Trained with PyTorch instead of the authors' TensorFlow release; initialisation (truncated normal "
    "0.02), Adam (eps 1e-7), LayerNorm eps 1e-3, schedules and per-tensor clipping follow the release, "
    "but random streams differ, so only statistics are comparable.",
    "Choices the paper leaves open, taken from the release: no LayerNorm on the embeddings; dropout on "
    "embeddings, attention weights and sub-module outputs; L2 adds l2_weight * sum(w^2) over dense "
    "kernels (Keras l2, no factor 1/2); the positional embedding and first-token head are sized "
    "max(seq_len, val_seq_len).",
    "Training accuracy and loss are the means over the training batches since the previous evaluation; "
    "a diverged seed (NaN/inf loss) scores 0 accuracy from that evaluation on.",
    "Seeds train one after another inside a trial; results per seed equal separate runs.",
)
CPU_DEVIATION = (
    "cpu scale: 800 steps instead of 3200, 3 seeds instead of 5, 4 of the 10 learning rates, "
    "a subset of the swept axis, 8 validation batches instead of 32 and 200 instead of 1000 "
    "examples per case; expect lower accuracies than the paper, compare shapes of the grids."
)


def _scales(*, cpu: dict[str, Any], smoke: dict[str, Any], cpu_fixed: dict[str, Any] | None = None,
            smoke_fixed: dict[str, Any] | None = None,
            smoke_architectures: tuple[str, ...] | None = ("MTE", "max")) -> dict[str, dict[str, Any]]:
    """The cpu and smoke overrides: trimmed scientific axes (`cpu`, `smoke`), seeds and budget.

    Smoke scale runs two architectures (`smoke_architectures`; None keeps the study's own axes).
    """
    smoke_arch = {"architecture": smoke_architectures} if smoke_architectures else {}
    return {
        "cpu": {
            "scientific": cpu,
            "nuisance": {"learning_rate": CPU_LEARNING_RATES},
            "fixed": {**CPU_BUDGET, **(cpu_fixed or {})},
            "seeds": (0, 1, 2),
            "deviations": COMMON_DEVIATIONS + (CPU_DEVIATION,),
        },
        "smoke": {
            "scientific": {**smoke_arch, **smoke},
            "nuisance": {"learning_rate": (0.3**3, 0.3**6)},
            "fixed": {**SMOKE_BUDGET, **(smoke_fixed or {})},
            "seeds": (0, 1),
            "deviations": COMMON_DEVIATIONS + ("smoke scale: a few steps on tiny inputs; tests only.",),
        },
    }


def _budget_axis(name: str, values: tuple[int, ...], n_steps: Any, n_evals: int) -> Linked:
    """A Linked axis whose value also sets the run length (n_steps) and n_evals evaluations per run."""
    return Linked(options={v: {name: v, "n_steps": n_steps(v), "eval_every": n_steps(v) // n_evals}
                           for v in values})


def _d_sweep(name: str, task: str, goal: str, *, reference: str | None = None,
             findings: tuple[Finding, ...] = (), aliases: tuple[str, ...] = ()) -> Study:
    return Study(
        name=name, goal=goal, tasks=(task,),
        scientific={"architecture": ARCHITECTURES, "d_model": POWERS_OF_TWO_D},
        nuisance={"learning_rate": LEARNING_RATES},
        fixed={"n_steps": 3200, "batch_size": 32},
        plot=Plot(panel="architecture", x="d_model", y="learning_rate"),
        reference=reference, findings=findings, aliases=aliases,
        deviations=COMMON_DEVIATIONS,
        scales=_scales(cpu={"d_model": (16, 32, 64)}, smoke={"d_model": (8, 16)}),
    )


FIG3 = _d_sweep(
    "richter2020.fig3", "cases",
    "Which pooling learns argmin-first-argmax case distinction (output at every token) across "
    "model sizes and learning rates, and which generalises to half the training length?",
    reference="richter2020/cases__var_dim", findings=observed.FIG3,
)

FIG5 = _d_sweep(
    "richter2020.fig5", "cases_first_token",
    "Can the case distinction be aggregated into the first token? Case accuracies (Fig. 5) and "
    "min/mean/max accuracy (Fig. 14) across model sizes and learning rates.",
    reference="richter2020/cases__first_token_output__var_dim", aliases=("richter2020.fig14",),
    findings=observed.FIG5,
)

FIG7 = _d_sweep(
    "richter2020.fig7", "mode",
    "Which pooling can find the mode of a sequence (no positions) across model sizes and learning rates?",
    reference="richter2020/mode__var_dim",
    findings=observed.FIG7,
)

# Fig. 9 / Table 1: BERT -> MTE one modification at a time; each label sets the four switches.
ABLATION = Linked(options={
    "BERT": {"architecture": "BERT"},
    "- warm up": {"architecture": "BERT", "warmup": False},
    "- grad. clip": {"architecture": "BERT", "warmup": False, "grad_clip": False},
    "+ normalize": {"architecture": "BERT", "warmup": False, "grad_clip": False,
                    "ln_placement": "pre_residual"},
    "+ GELU": {"architecture": "BERT", "warmup": False, "grad_clip": False,
               "ln_placement": "pre_residual", "attention_gelu": True},
})
FIG9 = Study(
    name="richter2020.fig9", aliases=("richter2020.table1",), tasks=("cases",),
    goal="Which of the four changes from BERT to MTE (warm-up, clipping, LayerNorm placement, GELU "
         "in attention) moves the learning-rate x size landscape on case distinction?",
    scientific={"ablation": ABLATION, "d_model": POWERS_OF_TWO_D},
    nuisance={"learning_rate": LEARNING_RATES},
    fixed={"n_steps": 3200, "batch_size": 32},
    plot=Plot(panel="ablation", x="d_model", y="learning_rate"),
    reference="richter2020/ablation__cases", findings=appendix.FIG9,
    deviations=COMMON_DEVIATIONS + (
        "'+ GELU' is BERT with all four switches flipped; it equals MTE by construction.",),
    scales=_scales(cpu={"d_model": (16, 32, 64)}, smoke={"d_model": (8,)}, smoke_architectures=None),
)

FIG4 = Study(
    name="richter2020.fig4", tasks=("cases",),
    goal="How does the case bias (shifted by the sequence length N) change what each pooling learns?",
    scientific={"architecture": ARCHITECTURES, "seq_len": tuple(2**k for k in range(2, 10))},
    nuisance={"learning_rate": LEARNING_RATES},
    fixed={"n_steps": 3200, "batch_size": 32, "d_model": 128},
    plot=Plot(panel="architecture", x="seq_len", y="learning_rate"),
    findings=observed.FIG4,
    deviations=COMMON_DEVIATIONS,
    scales=_scales(cpu={"seq_len": (16, 64, 256)}, smoke={"seq_len": (4, 8)}, cpu_fixed={"d_model": 32},
                   smoke_fixed={"d_model": 8}),
)

FIG6 = Study(
    name="richter2020.fig6", tasks=("cases_first_token",),
    goal="How does the number of attention heads change first-token case distinction?",
    scientific={"architecture": HEADED, "n_heads": tuple(2**k for k in range(0, 8))},
    nuisance={"learning_rate": LEARNING_RATES},
    fixed={"n_steps": 3200, "batch_size": 32, "d_model": 128},
    plot=Plot(panel="architecture", x="n_heads", y="learning_rate"),
    findings=observed.FIG6,
    deviations=COMMON_DEVIATIONS + ("sum and max have no heads and are left out, as in the paper.",),
    scales=_scales(cpu={"n_heads": (1, 4, 16)}, smoke={"n_heads": (1, 2)},
                   cpu_fixed={"d_model": 32}, smoke_fixed={"d_model": 8}, smoke_architectures=("MTE", "NAP")),
)

FIG15 = Study(
    name="richter2020.fig15", tasks=("cases_first_token",),
    goal="How does depth change first-token case distinction?",
    scientific={"architecture": ARCHITECTURES, "n_layers": tuple(2**k for k in range(0, 7))},
    nuisance={"learning_rate": LEARNING_RATES},
    fixed={"n_steps": 3200, "batch_size": 32, "d_model": 128},
    plot=Plot(panel="architecture", x="n_layers", y="learning_rate"),
    reference="richter2020/cases__first_token_output__var_layers", findings=appendix.FIG15,
    deviations=COMMON_DEVIATIONS,
    scales=_scales(cpu={"n_layers": (1, 2, 4)}, smoke={"n_layers": (1, 2)}, cpu_fixed={"d_model": 32},
                   smoke_fixed={"d_model": 8}),
)

EXAMPLES_SEEN = 3200 * 32
FIG13 = Study(
    name="richter2020.fig13", tasks=("cases",),
    goal="Does the batch size (at a constant number of examples seen) change which cases are learned?",
    scientific={"architecture": ARCHITECTURES,
                "batch_size": _budget_axis("batch_size", tuple(2**k for k in range(8)),
                                           lambda b: EXAMPLES_SEEN // b, 32)},
    nuisance={"learning_rate": LEARNING_RATES},
    fixed={"d_model": 128},
    plot=Plot(panel="architecture", x="batch_size", y="learning_rate"),
    findings=appendix.FIG13,
    deviations=COMMON_DEVIATIONS + (
        "Evaluation every n_steps/32 steps (32 evaluations per run at every batch size).",),
    scales=_scales(cpu={"batch_size": _budget_axis("batch_size", (8, 32, 128), lambda b: 800 * 32 // b, 8)},
                   smoke={"batch_size": _budget_axis("batch_size", (2, 4), lambda b: 80 // b, 2)},
                   cpu_fixed={"d_model": 32}, smoke_fixed={"d_model": 8}),
)

FIG16 = Study(
    name="richter2020.fig16", aliases=("richter2020.table5",), tasks=("mode",),
    goal="How does the vocabulary size S change mode finding (steps = 400 * S, as in the paper)?",
    scientific={"architecture": ARCHITECTURES,
                "vocab_size": _budget_axis("vocab_size", tuple(2**k for k in range(1, 9)),
                                           lambda s: 400 * s, 32)},
    nuisance={"learning_rate": LEARNING_RATES},
    fixed={"d_model": 128, "batch_size": 32},
    plot=Plot(panel="architecture", x="vocab_size", y="learning_rate"),
    metric="train_accuracy", table_by=("vocab_size",),
    deviations=COMMON_DEVIATIONS + (
        "Evaluation every n_steps/32 steps (32 evaluations per run at every vocabulary size).",),
    reference="richter2020/mode__var_vocab", findings=appendix.FIG16,
    scales=_scales(cpu={"vocab_size": _budget_axis("vocab_size", (4, 8, 16), lambda s: 100 * s, 8)},
                   smoke={"vocab_size": _budget_axis("vocab_size", (2, 4), lambda s: 10 * s, 2)},
                   cpu_fixed={"d_model": 32}, smoke_fixed={"d_model": 8}),
)

FIG16_BIAS = Study(
    name="richter2020.fig16_bias", tasks=("mode",),
    goal="Does NAP revert to sum pooling at S = 2 by learning to use its bias b (App. H, obs. 2), and less at S = 4 "
         "and 8?",
    scientific={"architecture": ("NAP",),
                "vocab_size": _budget_axis("vocab_size", (2, 4, 8), lambda s: 400 * s, 32)},
    nuisance={"learning_rate": LEARNING_RATES},
    fixed={"d_model": 128, "batch_size": 32, "probes": "bias"},
    plot=Plot(panel="architecture", x="vocab_size", y="learning_rate"),
    metric="train_accuracy", findings=appendix.FIG16_BIAS,
    deviations=COMMON_DEVIATIONS + (
        "Not a figure of the paper: Fig. 16's NAP at S = 2, 4 and 8 again, each evaluation also reading NAP's bias "
        "share |b| / (|g| + |b|) per layer and head (the probe `bias`); the paper states the mechanism without a "
        "number.",),
    scales=_scales(cpu={"vocab_size": _budget_axis("vocab_size", (2, 4, 8), lambda s: 100 * s, 8)},
                   smoke={"vocab_size": _budget_axis("vocab_size", (2, 4), lambda s: 10 * s, 2)},
                   cpu_fixed={"d_model": 32}, smoke_fixed={"d_model": 8}, smoke_architectures=None),
)

REGULARIZATION = Linked(options={
    "none": {"dropout": 0.0, "l2_weight": 0.0},
    **{f"dropout {p}": {"dropout": p, "l2_weight": 0.0} for p in (0.0625, 0.125, 0.25, 0.5)},
    **{f"L2 {w:g}": {"dropout": 0.0, "l2_weight": w} for w in (1e-4, 1e-3, 1e-2, 1e-1)},
})


def _regularization_subset(*labels: str) -> Linked:
    return Linked(options={k: REGULARIZATION.options[k] for k in labels})


def _regularization_table(number: int, task: str, reference: str) -> Study:
    return Study(
        name=f"richter2020.table{number}", tasks=(task,),
        goal=f"Does dropout or L2 regularisation help on {task} in the infinite-data regime (App. E)?",
        scientific={"architecture": ARCHITECTURES, "regularization": REGULARIZATION},
        nuisance={"learning_rate": LEARNING_RATES},
        fixed={"n_steps": 3200, "batch_size": 32, "d_model": 128},
        plot=Plot(panel="architecture", x="regularization", y="learning_rate"),
        deviations=COMMON_DEVIATIONS, findings=appendix.regularization_findings(number),
        reference=reference,
        scales=_scales(cpu={"regularization": _regularization_subset("none", "dropout 0.125", "L2 0.001")},
                       smoke={"regularization": _regularization_subset("none", "dropout 0.5")},
                       cpu_fixed={"d_model": 32}, smoke_fixed={"d_model": 8}),
    )


# Tables 2 and 3 check on their printed means (cells files): the release's regularised cases runs are missing from
# the copy converted here. Table 4 checks on the release's per-seed runs (regularised and unregularised, d = 128).
TABLE2 = _regularization_table(2, "cases", "richter2020/nap_table2")
TABLE3 = _regularization_table(3, "cases_first_token", "richter2020/nap_table3")
TABLE4 = _regularization_table(4, "mode", "richter2020/mode__regularization")

# Sec. 5.2's comparison of the two case tasks: output at every token against output from the first token, the task an
# axis; it checks on Tables 2 and 3's unregularised rows, each the release's d = 128 column of its task (cells).
TASKS = Study(
    name="richter2020.tasks",
    goal="Is the case distinction harder with the output from the first token than at every token (Sec. 5.2)?",
    scientific={"architecture": ARCHITECTURES, "task": ("cases", "cases_first_token")},
    nuisance={"learning_rate": LEARNING_RATES},
    fixed={"n_steps": 3200, "batch_size": 32, "d_model": 128},
    plot=Plot(panel="architecture", x="task", y="learning_rate"),
    deviations=COMMON_DEVIATIONS, findings=observed.TASKS, reference="richter2020/nap_tasks",
    scales=_scales(cpu={}, smoke={}, cpu_fixed={"d_model": 32}, smoke_fixed={"d_model": 8}),
)

FIG1 = Study(
    name="richter2020.fig1", tasks=("pooling_scale",),
    goal="How do the standard deviation and norm of a pooling's output depend on the sequence "
         "length N at initialisation (no training; App. B)?",
    scientific={"pooling": ("softmax", "mean", "sum", "max", "normalized", "non", "normalized_mean", "normalized_max",
                            "normalized_softmax"),
                "seq_len": (1, 2, 4, 8, 16, 32, 64, 128, 512, 1024, 2048)},
    fixed={"d_head": 128, "n_vectors": 16384},
    # 5 seeds (independent draws): a finding's interval needs seed variation (with one seed nothing is decided)
    seeds=(0, 1, 2, 3, 4), metric="output_std",
    plot=Plot(panel="pooling", x="seq_len", y="seq_len"), findings=at_init.FIG1,
    deviations=("Random draws differ from the paper's; the curves, not the digits, are comparable.",),
    scales={"smoke": {"scientific": {"seq_len": (1, 8, 64)}, "fixed": {"n_vectors": 1024}}},
)

CONTEXT_SHARE = Study(
    name="richter2020.context_share", tasks=("context_share",),
    goal="What share of a layer's e^i = x^i + (attention sub-module)^i comes from the context at initialisation, "
         "and how does it depend on the sequence length N (Sec. 3; the MTE's and NON's answers, Sec. 4, App. D)?",
    scientific={"pooling": ("BERT", "MTE", "NAP", "NON"),
                "seq_len": (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)},
    fixed={"d_head": 128, "n_vectors": 16384},
    seeds=(0, 1, 2, 3, 4), metric="context_share",
    plot=Plot(panel="pooling", x="seq_len", y="seq_len"), findings=at_init.CONTEXT_SHARE,
    deviations=("Not a figure of the paper: Sec. 3 argues the claim without a measurement; the project measures its "
                "own first layer of each architecture (d = 128, 4 heads, the release's init and LayerNorm eps 1e-3) "
                "on inputs drawn from N(0, I).",),
    scales={"smoke": {"scientific": {"seq_len": (2, 16, 128)}, "fixed": {"n_vectors": 512}}},
)

STUDIES = (FIG1, CONTEXT_SHARE, FIG3, FIG4, FIG5, FIG6, FIG7, FIG9, FIG13, FIG15, FIG16, FIG16_BIAS, TABLE2, TABLE3,
           TABLE4, TASKS)
