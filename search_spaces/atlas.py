"""The cross-paper robustness atlas: every registered token mixer x every task, over learning rate x size.

Which mixer is not only best but *robust*: how much of the learning-rate x size grid reaches near its best
accuracy, how much its seeds disagree, how wide its learning-rate band is (``analysis/papers/leaderboard.py``
defines the statistics; the report shows them as a table and heatmaps, mixer x task).

Every mixer sits in the same encoder (Richter & Wattenhofer 2020's model with MTE's switches: pre-residual
LayerNorm, GELU before the mixing linear, no warm-up, no clipping) and replaces only the token-mixing
sub-layer (``TrainConfig.mixer``). The mixer axis is every file in ``trainables/mixers/``
(:func:`trainables.mixers.mixer_names`, read without importing torch), so a new mixer file joins the atlas
with no other edit.

Tasks are a ``Linked`` axis: each task sets its own family's hyperparameters (and only those: a name its
family's config lacks would be refused), so tasks of other families slot in as one more option as long as
their config accepts ``mixer``, ``d_model``, ``n_heads`` and ``learning_rate`` and reports ``val_accuracy``.
Besides Richter & Wattenhofer's three tasks (MTE's encoder, validated at training length), the atlas runs
``ctl`` (Csordás et al.'s plain Transformer with the mixer in place of its attention, forward direction, IID
accuracy as ``val_accuracy``, with the Richter tasks' ``n_layers``, ``batch_size``, ``n_steps`` and
``eval_every``; the mixer gets the batch's key-padding mask, which before issue 25 it did not: registry mixers
then attended to padding, docs/mixers.md) and ``nt`` (Gros' N16T2 at N_con = 32: the bilayer with the mixer in
place of its causal head and called causal, which before issue 25 it was not, width ``d_model`` >= 16, SGD
with momentum at the grid's learning rate, one optimiser step per epoch, ``n_epochs`` = the same step budget,
greedy free-running accuracy as ``val_accuracy``). The convolution's
filter length (``conv_width``) is a setting of the Richter encoder only: in ``ctl`` and ``nt`` the sepconv
mixer keeps its default length 31.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from search_spaces.richter2020 import LEARNING_RATES
from search_spaces.study import Linked, Plot, Study
from trainables.mixers import mixer_names

#: Every mixer of trainables/mixers/ (one file each), sorted by name.
ATLAS_MIXERS: tuple[str, ...] = mixer_names()

#: The Richter & Wattenhofer tasks (trainables.richter2020.tasks); other families' tasks are added in ``_tasks``.
RICHTER_TASKS: tuple[str, ...] = ("cases", "cases_first_token", "mode")


def _tasks(seq_len: int, *, n_steps: int, eval_every: int, richter: Mapping[str, Any], eval_samples: int,
           final_eval_series: int, batch_size: int = 32, nt: Mapping[str, Any] | None = None) -> Linked:
    """The task axis: each task with its own family's settings. The Richter tasks are validated at training
    length (the bilinear mixer cannot do otherwise) and take ``richter`` (their encoder's settings); CTL shares
    their depth, batch and step budget; NT runs the same budget in epochs (``nt`` overrides its task)."""
    budget = {"n_layers": 2, "batch_size": batch_size, "n_steps": n_steps, "eval_every": eval_every}
    options: dict[str, dict[str, Any]] = {
        t: {"architecture": "MTE", "seq_len": seq_len, "val_seq_len": seq_len, **budget, **richter}
        for t in RICHTER_TASKS}
    options["ctl"] = {"model": "Transformer", "direction": "forward", **budget, "eval_samples": eval_samples}
    options["nt"] = {"basis": 16, "delay": 2, "n_context": 32, "n_epochs": n_steps, "eval_every": eval_every,
                     "final_eval_series": final_eval_series, **(nt or {})}
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
    goal="Across every registered token mixer and every task of the project, which mixers reach high "
         "accuracy robustly: over how much of the learning-rate x size grid, with how much seed spread, and "
         "over how wide a learning-rate band?",
    # Axis order = run order (the last varies fastest): a partial run has every mixer on the first task and size.
    scientific={"task": _tasks(128, n_steps=3200, eval_every=100, richter={}, eval_samples=1000,
                               final_eval_series=10_000),
                "d_model": (16, 32, 64, 128, 256), "mixer": ATLAS_MIXERS},
    nuisance={"learning_rate": LEARNING_RATES},
    fixed={"n_heads": 4},
    plot=Plot(panel="mixer", x="d_model", y="learning_rate"),
    deviations=DEVIATIONS,
    sections=("leaderboard",),
    scales={
        "cpu": {
            "scientific": {"task": _tasks(32, n_steps=800, eval_every=100,
                                          richter={"eval_batches": 8, "case_eval_per_case": 200},
                                          eval_samples=500, final_eval_series=1000), "d_model": (16, 32)},
            "nuisance": {"learning_rate": tuple(0.3**k for k in (3, 4, 5, 6))},
            "seeds": (0, 1, 2),
            "deviations": DEVIATIONS + (
                "cpu scale: N = 32, d = 16 and 32, 800 steps instead of 3200, 4 learning rates (0.3^3 .. 0.3^6) "
                "instead of 10, 3 seeds instead of 5, 8 validation batches and 200 examples per case.",
                "cpu scale: CTL and NT get the same 800 steps. That is below CTL's learning transition (every "
                "mixer stays at chance, 12.5%; see docs/csordas2021.md) and within NT's ~55% plateau, so those "
                "two columns rank nothing at this scale.",),
        },
        "smoke": {
            "scientific": {"task": _tasks(8, n_steps=20, eval_every=10,
                                          richter={"eval_batches": 2, "case_eval_per_case": 4, "conv_width": 5},
                                          eval_samples=16, final_eval_series=8, batch_size=4,
                                          nt={"basis": 4, "delay": 1, "n_context": 4}),
                           "d_model": (8,)},
            "nuisance": {"learning_rate": (0.3**3, 0.3**6)},
            "fixed": {"n_heads": 2},
            "seeds": (0, 1),
            "deviations": DEVIATIONS + ("smoke scale: a few steps on tiny inputs; tests only.",),
        },
    },
)

STUDIES = (ATLAS,)
