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
with momentum at the grid's learning rate and Gros' own recipe (:data:`GROS_RECIPE`, since issue 37), one optimiser
step per epoch, ``n_epochs`` = the same step budget, greedy free-running accuracy as ``val_accuracy``). The
convolution's filter length (``conv_width``) is a setting of the Richter encoder only: in ``ctl`` and ``nt`` the
sepconv mixer keeps its default length 31.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from search_spaces import Finding, Linked, Plot, Study, StudyError
from search_spaces.richter2020 import LEARNING_RATES
from trainables.mixers import mixer_names

#: Every mixer of trainables/mixers/ (one file each), sorted by name.
ATLAS_MIXERS: tuple[str, ...] = mixer_names()

#: Gros 2024's own training recipe for NT where it differs from the bilayer's defaults (search_spaces.gros2024's
#: PAPER_FIXED): the squared error summed over the N outputs (N times the gradient of the mean) and the read-out's
#: learning rate scaled by min(1, 32 / N_con).
GROS_RECIPE = {"loss_reduction": "sum_outputs", "readout_lr_context": 32}

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
                     "final_eval_series": final_eval_series, **GROS_RECIPE, **(nt or {})}
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
    "NT trains with Gros 2024's own recipe (issue 37; before, the bilayer's defaults): the squared error summed "
    "over the N outputs and the read-out's learning rate scaled by 32 / N_con, with the atlas' learning-rate grid "
    "(SGD with momentum 0.8). Under it the grid's largest rate (0.027) diverges for every mixer (16 times the "
    "gradient of the mean loss).",
)

#: Mode finding's majority-class base rate at S = 10 per sequence length N (the most frequent label, token 0: ties go
#: to the smallest token), from 200,000 draws of the task's own sampler (tests/test_finding_strength.py recomputes it).
MODE_BASE_RATE_S10 = {8: 0.1731, 32: 0.1419, 128: 0.1215}
#: "cannot learn": within 10 points of the base rate. The cpu atlas validates on 256 examples x 3 seeds (a mean's
#: standard error ~1.3 points), and the best of its 64 means (8 cells x 8 evaluations) lies ~3 points above the
#: true level by selection alone; 10 points keep clear of that and far below "learned" (50%).
CANNOT_LEARN_MARGIN = 0.10


def atlas_findings(seq_len: int) -> tuple[Finding, ...]:
    """What the atlas shows that the papers also state, on the atlas' own columns (the task axis as the region)."""
    base = MODE_BASE_RATE_S10[seq_len]
    return (
        Finding(description=f"Richter & Wattenhofer 2020 (Sec. 5.3, obs. 1-2; NAP: Sec. 6) on the atlas' mode "
                            f"column: max pooling cannot find the mode (best G within {100 * CANNOT_LEARN_MARGIN:g} "
                            f"points of the majority-class rate {100 * base:.1f}% at N = {seq_len}) while sum pooling "
                            "and normalized attention (NAP) can (>= 50%)",
                quote='Richter & Wattenhofer 2020, Sec. 5.3: "(1) sum pooling works well on this task ... (2) max '
                      'pooling cannot learn the task"; Sec. 6: "NAP ... performs well in all tasks and setups"',
                where={"task": ("mode",)}, below={"max": base + CANNOT_LEARN_MARGIN},
                above={"sum": 0.5, "normalized": 0.5},
                chosen=(f"{100 * CANNOT_LEARN_MARGIN:g} points over the base rate: 'cannot learn' read as near chance",
                        "50%: 'works well' / 'performs well' read as at least half the examples")),
        Finding(description="Richter & Wattenhofer 2020 (Sec. 5.2, obs. 2) on the atlas' first-token column: sum "
                            "pooling learns neither the argmin nor the argmax case (<= 10%; chance is 2-4%)",
                quote='Richter & Wattenhofer 2020, Sec. 5.2: "(2) The sum pooling architecture does not learn any of '
                      'the other cases."',
                metric="max(val_argmin_accuracy, val_argmax_accuracy)", where={"task": ("cases_first_token",)},
                below={"sum": 0.1}, chosen=("10%: 'does not learn' read as at most 10% (chance 2-4%)",)),
        Finding(description="Gros 2024 (Fig. 3, N_con = 32) on the atlas' NT column: expressive attention escapes "
                            "the ~55% plateau (best G >= 65%) and leads softmax (DPA) by more than 5 points and "
                            "twice the seed noise",
                quote='Gros 2024, Results: "Both attention mechanism rapidly improve their performance, reaching a '
                      'plateau of about 55% ... At this point the DPA loss function stops improving, with progress '
                      'slowing down for EA. The phenomenology seen indicates that the enhanced expressivity of EA '
                      'allows the system to escape the local trap"',
                # cpu only: 800 epochs, where the budget probe (atlas.budget_nt) shows EA out of the plateau and DPA in
                # it; with the paper scale's 3200 epochs DPA may escape too (docs/gros2024.md: at init x1 DPA climbs)
                where={"task": ("nt",)}, above={"expressive": 0.65}, ahead={"expressive": ("softmax",)}, margin=0.05,
                scales=("cpu",), chosen=("65%: 'escape' read as 10 points above the ~55% plateau",
                                         "5 points: the lead read as beyond a 5-point margin")),
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
    findings=atlas_findings(128),
    sections=("leaderboard",),
    scales={
        "cpu": {
            "scientific": {"task": _tasks(32, n_steps=800, eval_every=100,
                                          richter={"eval_batches": 8, "case_eval_per_case": 200},
                                          eval_samples=500, final_eval_series=1000), "d_model": (16, 32)},
            "nuisance": {"learning_rate": tuple(0.3**k for k in (3, 4, 5, 6))},
            "seeds": (0, 1, 2),
            "findings": atlas_findings(32),
            "deviations": DEVIATIONS + (
                "cpu scale: N = 32, d = 16 and 32, 800 steps instead of 3200, 4 learning rates (0.3^3 .. 0.3^6) "
                "instead of 10, 3 seeds instead of 5, 8 validation batches and 200 examples per case.",
                "cpu scale: NT trains 800 epochs with Gros' recipe: the budget probe atlas.budget_nt (docs/yun2020.md) "
                "found it the cheapest setting at which a reference mechanism leaves NT's ~55% plateau while another "
                "does not (expressive 68.7% at d = 32, lr 8.1e-3, seeds 68.1-69.2%; softmax 56.0%, seeds 55.3-56.7%); "
                "under the bilayer's default recipe neither leaves it before 3200 epochs.",
                "cpu scale: CTL trains 800 steps at batch 32. The budget probe atlas.budget_ctl found no cpu-feasible "
                "budget at which a mixer leaves chance (12.5%): at batch 256 x 3200 steps (819,200 samples) the best "
                "IID accuracy is 15.5% and the lowest training loss 2.047 (ln 8 = 2.079); so this column does not rank "
                "at this scale, and the report says so.",),
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
            "findings": atlas_findings(8),
            "deviations": DEVIATIONS + ("smoke scale: a few steps on tiny inputs; tests only.",),
        },
    },
)


def atlas_with(*mixers: str) -> Study:
    """The atlas with mixers of yours beside every one of this project's: the same tasks, grid, scales, findings and
    name, so it shares the atlas' results directory and the trial keys of the project's mixers. Where the atlas ran
    before, ``study run`` finds those trials done and trains only yours; the report ranks them together.

    Register each mixer in the study file that calls this or in a module that file imports (docs/extending.md): a
    study's ``plugins`` would enter every trial key and re-run the project's mixers too, so this takes none."""
    if not mixers or set(mixers) & set(ATLAS_MIXERS) or len(set(mixers)) != len(mixers):
        raise StudyError(f"invalid mixers={mixers!r} of atlas_with; allowed: one or more distinct names of mixers "
                         f"of yours, none of the atlas' own ({', '.join(ATLAS_MIXERS)})")
    return ATLAS.replace(scientific={**ATLAS.scientific, "mixer": ATLAS_MIXERS + tuple(mixers)})


BUDGET_LEARNING_RATES = tuple(0.3**k for k in (3, 4, 5, 6))  # the atlas' cpu grid
BUDGET_GOAL = ("At which cpu-feasible budget and recipe (within the paper's task definition) does at least one "
               "reference mechanism leave {what} while another does not, so that the atlas' {column} column ranks "
               "mixers at cpu scale?")


def _nt_probe(epochs: int, recipe: Mapping[str, Any]) -> dict[str, Any]:
    return {"n_epochs": epochs, "eval_every": epochs // 8, **recipe}


#: The NT column's candidates: the bilayer's default recipe (what the atlas ran) and Gros', at several budgets.
NT_PROBES = Linked(options={"atlas 800": _nt_probe(800, {}), "atlas 3200": _nt_probe(3200, {}),
                            "Gros 800": _nt_probe(800, GROS_RECIPE), "Gros 1600": _nt_probe(1600, GROS_RECIPE),
                            "Gros 3200": _nt_probe(3200, GROS_RECIPE)})

BUDGET_NT = Study(
    name="atlas.budget_nt",
    tasks=("nt",),
    goal=BUDGET_GOAL.format(what="NT's ~55% plateau", column="NT"),
    scientific={"probe": NT_PROBES, "mixer": ("softmax", "expressive", "mean"), "d_model": (16, 32)},
    nuisance={"learning_rate": BUDGET_LEARNING_RATES},
    fixed={"n_heads": 4, "basis": 16, "delay": 2, "n_context": 32, "final_eval_series": 1000},
    seeds=(0, 1, 2),
    plot=Plot(panel="probe", x="mixer", y="learning_rate"),
    # The answer the atlas' cpu NT column rests on (800 epochs with Gros' recipe); a rerun that breaks it says so.
    # Leaving the ~55% plateau: >= 65% (10 points above it); staying on it: <= 60%.
    findings=(
        Finding(description="with Gros' recipe, 800 epochs take expressive attention off NT's ~55% plateau (best G "
                            ">= 65%)", where={"mixer": ("expressive",)}, above={"Gros 800": 0.65},
                chosen=("65%: off the plateau read as 10 points above ~55%", "800 epochs: the budget probed")),
        Finding(description="... while softmax (dot-product) attention stays on it (<= 60%)",
                where={"mixer": ("softmax",)}, below={"Gros 800": 0.6},
                chosen=("60%: 'on the plateau' read as at most 5 points above ~55%",)),
        Finding(description="with the bilayer's default recipe no mixer leaves the plateau in 800 epochs (<= 60%)",
                below={"atlas 800": 0.6}, chosen=("60%: 'on the plateau' read as at most 5 points above ~55%",)),
    ),
    deviations=(
        "Not a paper experiment: the budget probe behind the atlas' cpu scale (docs/yun2020.md). Gros' N16T2 at "
        "N_con = 32 with a registry mixer in place of his causal head (called causal); 'atlas' is the bilayer's "
        "default recipe (mean squared error over the outputs, one read-out learning rate), 'Gros' the paper's "
        "(summed over the N outputs, read-out rate scaled by 32 / N_con); 8 evaluations per run, the final one on "
        "1000 series.",),
    scales={"smoke": {"scientific": {"probe": Linked(options={"Gros 16": _nt_probe(16, GROS_RECIPE)}),
                                     "mixer": ("softmax", "mean"), "d_model": (8,)},
                      "fixed": {"n_heads": 2, "basis": 4, "delay": 1, "n_context": 4, "final_eval_series": 8,
                                "eval_series": 4, "eval_predictions": 4},
                      "nuisance": {"learning_rate": (0.3**3,)}, "seeds": (0,)}},
)


def _ctl_probe(batch_size: int, steps: int) -> dict[str, Any]:
    return {"batch_size": batch_size, "n_steps": steps, "eval_every": steps // 8}


BUDGET_CTL = Study(
    name="atlas.budget_ctl",
    tasks=("ctl",),
    goal=BUDGET_GOAL.format(what="CTL's chance level (12.5%)", column="CTL"),
    scientific={"probe": Linked(options={"batch 32": _ctl_probe(32, 3200), "batch 256": _ctl_probe(256, 3200)}),
                "mixer": ("softmax", "mean"), "d_model": (32,)},
    nuisance={"learning_rate": BUDGET_LEARNING_RATES},
    fixed={"model": "Transformer", "direction": "forward", "n_layers": 2, "n_heads": 4, "eval_samples": 500},
    seeds=(0, 1, 2),
    plot=Plot(panel="probe", x="mixer", y="learning_rate"),
    # Why the atlas' CTL column does not rank at cpu scale: nothing leaves chance (12.5%) by 5 points at any probe.
    findings=(Finding(description="no mixer leaves CTL's chance level (12.5%) by 5 points at either batch within 3200 "
                                  "steps (best IID G <= 17.5%)", below={"batch 32": 0.175, "batch 256": 0.175},
                      chosen=("5 points over chance (12.5%): 'leaves chance' read as more than 5 points",
                              "3200 steps, batches 32 and 256: the budgets probed")),),
    deviations=(
        "Not a paper experiment: the budget probe behind the atlas' cpu scale (docs/yun2020.md). The plain "
        "Transformer with the mixer as its attention (2 layer applications as in the atlas, forward direction, IID "
        "accuracy on 500 samples), at batch 32 (the atlas' cpu scale) and 256 (the paper: 256-512), 3200 steps at a "
        "constant learning rate (so each run's first evaluations are the shorter budgets), 8 evaluations.",),
    scales={"smoke": {"scientific": {"probe": Linked(options={"batch 4": _ctl_probe(4, 16)}),
                                     "mixer": ("softmax", "mean"), "d_model": (8,)},
                      "fixed": {"model": "Transformer", "n_layers": 2, "n_heads": 2, "eval_samples": 8},
                      "nuisance": {"learning_rate": (0.3**3,)}, "seeds": (0,)}},
)

STUDIES = (ATLAS, BUDGET_NT, BUDGET_CTL)
