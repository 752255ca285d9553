"""The cross-paper robustness atlas: every registered token mixer x every task, over learning rate x size.

Which mixer is not only best but *robust*: how much of the learning-rate x size grid reaches near its best
accuracy, how much its seeds disagree, how wide its learning-rate band is (``analysis/leaderboard.py``
defines the statistics; the report shows them as a table and heatmaps, mixer x task).

Every mixer sits in the same encoder (Richter & Wattenhofer 2020's model with MTE's switches: pre-residual
LayerNorm, GELU before the mixing linear, no warm-up, no clipping) and replaces only the token-mixing
sub-layer (``TrainConfig.mixer``). The mixer list is :data:`ATLAS_MIXERS`; ``tests/test_yun_studies.py`` fails
when a mixer registered in ``trainables.mixers.MIXERS`` is missing from it (the list is written out here so
that importing the studies does not import torch).

Tasks are a ``Linked`` axis: each task label sets its own hyperparameters, so tasks of other families slot
in as one more option as long as their config accepts ``mixer``, ``d_model`` and ``learning_rate`` and
reports ``val_accuracy``. Besides Richter & Wattenhofer's three tasks (validated at training length), the
atlas runs ``ctl`` (Csordás et al.'s plain Transformer with the mixer in place of its attention, forward
direction, IID accuracy as ``val_accuracy``; the shared ``n_layers``, ``n_heads``, ``batch_size``,
``n_steps`` and ``eval_every`` apply) and ``nt`` (Gros' N16T2 at N_con = 32: the bilayer with the mixer in
place of its causal head, width ``d_model`` >= 16, SGD with momentum at the grid's learning rate, one
optimiser step per epoch, ``n_epochs`` = the shared step budget, greedy free-running accuracy as
``val_accuracy``). Fixed settings that another family does not have (e.g. ``architecture``,
``case_eval_per_case``) are recorded as label columns of its rows and do nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from search_spaces.richter2020 import LEARNING_RATES
from search_spaces.study import Linked, Plot, Study

#: Every mixer registered in trainables.mixers.MIXERS (checked by a test), in registration order.
ATLAS_MIXERS: tuple[str, ...] = (
    "softmax", "normalized", "no_norm", "sum", "max", "mean",  # Richter & Wattenhofer 2020
    "expressive",  # Gros 2024
    "average", "bilinear", "sepconv",  # Yun et al. 2020
)

#: The Richter & Wattenhofer tasks (trainables.tasks); other families' tasks are added in ``_tasks``.
RICHTER_TASKS: tuple[str, ...] = ("cases", "cases_first_token", "mode")


def _tasks(seq_len: int, *, n_steps: int, eval_every: int, eval_samples: int, final_eval_series: int,
           extra: Mapping[str, Mapping[str, Any]] | None = None) -> Linked:
    """The task axis: the Richter tasks validated at training length (the bilinear mixer cannot do otherwise),
    CTL and NT with their own families' settings."""
    options: dict[str, dict[str, Any]] = {t: {"seq_len": seq_len, "val_seq_len": seq_len} for t in RICHTER_TASKS}
    options["ctl"] = {"model": "Transformer", "direction": "forward", "eval_every": eval_every,
                      "eval_samples": eval_samples}
    options["nt"] = {"basis": 16, "delay": 2, "n_context": 32, "n_epochs": n_steps, "eval_every": eval_every,
                     "final_eval_series": final_eval_series}
    options.update({k: dict(v) for k, v in (extra or {}).items()})
    return Linked(options=options)


DEVIATIONS = (
    "Not a paper's experiment: a cross-paper comparison. Every mixer replaces only the token-mixing sub-layer "
    "of one encoder (Richter & Wattenhofer 2020's model with MTE's switches: pre-residual LayerNorm with the "
    "hidden LNs, GELU before the mixing linear, no warm-up, no clipping, Adam eps 1e-7, linear decay); "
    "feed-forward width 4d for every mixer (sum / max are not parameter-matched as in richter2020).",
    "Validated at training length (val_seq_len = seq_len) for every mixer and task: the bilinear mixer's N x N "
    "matrix fixes the length, and the leaderboard compares all mixers on the same footing; length "
    "generalisation is richter2020's question.",
    "Yun et al.'s mixers: bilinear = learned N x N token matrix then W_O; sepconv = GLU, H = n_heads softmax-"
    "normalised filters of length 31 shared by d/H channels, centred padding, W_O; average = mean of W_V x, "
    "then W_O (trainables/mixers/*.py state the choices the paper leaves open).",
)

ATLAS = Study(
    name="atlas",
    task="every task",
    goal="Across every registered token mixer and every task of the project, which mixers reach high "
         "accuracy robustly: over how much of the learning-rate x size grid, with how much seed spread, and "
         "over how wide a learning-rate band?",
    # Axis order = run order (the last varies fastest): a partial run has every mixer on the first task and size.
    scientific={"task": _tasks(128, n_steps=3200, eval_every=100, eval_samples=1000, final_eval_series=10_000),
                "d_model": (16, 32, 64, 128, 256), "mixer": ATLAS_MIXERS},
    nuisance={"learning_rate": LEARNING_RATES},
    fixed={"architecture": "MTE", "n_layers": 2, "n_heads": 4, "batch_size": 32, "n_steps": 3200},
    plot=Plot(panel="mixer", x="d_model", y="learning_rate"),
    deviations=DEVIATIONS,
    sections=("leaderboard",),
    scales={
        "cpu": {
            "scientific": {"task": _tasks(32, n_steps=800, eval_every=100, eval_samples=500,
                                          final_eval_series=1000), "d_model": (16, 32)},
            "nuisance": {"learning_rate": tuple(0.3**k for k in (3, 4, 5, 6))},
            "fixed": {"n_steps": 800, "eval_every": 100, "eval_batches": 8, "case_eval_per_case": 200},
            "seeds": (0, 1, 2),
            "deviations": DEVIATIONS + (
                "cpu scale: N = 32, d = 16 and 32, 800 steps instead of 3200, 4 learning rates (0.3^3 .. 0.3^6) "
                "instead of 10, 3 seeds instead of 5, 8 validation batches and 200 examples per case.",
                "cpu scale: CTL and NT get the same 800 steps. That is below CTL's learning transition (every "
                "mixer stays at chance, 12.5%; see docs/csordas2021.md) and within NT's ~55% plateau, so those "
                "two columns rank nothing at this scale.",),
        },
        "smoke": {
            "scientific": {"task": _tasks(8, n_steps=20, eval_every=10, eval_samples=16, final_eval_series=8,
                                          extra={"nt": {"basis": 4, "delay": 1, "n_context": 4, "n_epochs": 20,
                                                        "eval_every": 10, "final_eval_series": 8}}),
                           "d_model": (8,)},
            "nuisance": {"learning_rate": (0.3**3, 0.3**6)},
            "fixed": {"n_steps": 20, "eval_every": 10, "eval_batches": 2, "case_eval_per_case": 4,
                      "batch_size": 4, "n_heads": 2, "conv_width": 5},
            "seeds": (0, 1),
            "deviations": DEVIATIONS + ("smoke scale: a few steps on tiny inputs; tests only.",),
        },
    },
)

STUDIES = (ATLAS,)
