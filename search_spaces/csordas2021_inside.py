"""The csordas2021.table1 findings on what the models do inside (Sec. 3 "Analysis", Fig. 2, App. D Figs. 3-7), read
from the probes (docs/results.md, "Probe columns"; docs/csordas2021.md, "What the models do inside").

:data:`INSIDE_FINDINGS` are the study's findings #13-#17 and :data:`ROUTE_FINDINGS` its #19-#24 (issue 58): the
NDR's attention map over every step, where its read-out column looks, when each function's gate opens against when
its input is ready, and how + abs/rel + gate's attention keeps its place and blurs once a column is processed. All are
checked at the paper scale only (at the cpu budget NDR stays at chance, and an untrained model's routing says nothing
of the trained one's).
"""

from __future__ import annotations

from search_spaces import Finding

PAPER = ("paper",)
BOTH = ("forward", "backward")
#: NDR applies its one layer this many times at the paper's size (trainables.csordas2021.config.VARIANTS)
NDR_STEPS = 14


def by_model(*models: str) -> dict[str, tuple[str, ...]]:
    return {"model": models}


# What the models do inside (Sec. 3 "Analysis", Fig. 2, App. D Figs. 3-7), read from the probes (docs/results.md,
# "Probe columns") of the first 64 depth-9/10 test samples at each cell's checkpoint (its best depth-validation
# evaluation, the one Table 1 reports). The paper shows one example each; a finding reads the mean over 64 samples and
# the real positions of each. The numbers are the project's: "closed until ready" as no step with half of the columns
# updating or more, "attends to the neighbour" as half of the attention or more on the adjacent column, "similar over
# time" as the attended distance at step 7 (half of the 14 steps) within one position of step 1's, "blurry" as an
# entropy 0.5 nats (a factor 1.6 in the number of keys attended) above NDR's, "blurrier after" as more entropy at the
# last step than the first. Step s is the probe's `_s<s>` (the paper counts from t = 0).
GATED = ("NDR", "+ abs/rel + gate")
GATE_OPEN_ANY_STEP = "max(" + ", ".join(f"probe_gate_open_s{s}" for s in range(1, 15)) + ")"
SHARPEST_HEAD_AT_STEP_3 = "min(" + ", ".join(f"probe_entropy_s3_h{h}" for h in range(1, 5)) + ")"
INSIDE_FINDINGS = (
    Finding(description="Fig. 2, App. D Figs. 5 and 7: the copy gates of NDR and + abs/rel + gate stay closed until a "
                        "column's input is ready, so columns update one after another: at no step does half of the "
                        "columns' gates open (the largest share of open gates over the 14 steps < 50%, the project's "
                        "number; the order of opening is not read)",
            quote='Sec. 3: "the gates of different columns open sequentially one after another, when the input is '
                  'available for them." Fig. 2 caption: "The gates remain closed until the data dependencies are '
                  'satisfied." Figs. 5, 7: "The gates are closed until all arguments of the given operations are not '
                  'ready."',
            metric=GATE_OPEN_ANY_STEP, where=by_model(*GATED), below=dict.fromkeys(BOTH, 0.5), scales=PAPER,
            chosen=("50%: 'open sequentially, one after another' read as never half the gates open at one step",)),
    Finding(description="Fig. 2 (backward): each NDR column attends to its neighbour: at step 1 half of a position's "
                        "attention or more lies on the adjacent column (mean over positions >= 50%, the project's "
                        "number; the last column's exception is in that mean)",
            quote='Sec. 3: "Each column attends to the neighboring one, waiting for its computation to be finished." '
                  'Fig. 2 caption: "Each position focuses on the column to the right, except the last one where the '
                  'result is read from"',
            metric="probe_nearest_s1_h1", where=by_model("NDR"), above={"backward": 0.5}, scales=PAPER,
            chosen=("50%: 'attends to the neighboring one' read as half the attention on the adjacent column",
                    "step 1: the first step read for the figure's pattern")),
    Finding(description="Fig. 2 caption (backward): NDR's attention map remains similar over time: the distance a "
                        "position attends over at step 7 lies within one position of step 1's (the project's numbers)",
            quote='Fig. 2 caption: "Attention map for step t = 0 [...] The attention map remains similar over time."',
            metric="probe_distance_s1_h1 - probe_distance_s7_h1", where=by_model("NDR"),
            above={"backward": -1.0}, below={"backward": 1.0}, scales=PAPER,
            chosen=("1 position: 'remains similar' read as the attended distance within one position",
                    "steps 1 and 7: the start and the middle of the 14 steps")),
    Finding(description="App. D Fig. 3: the + rel Transformer's attention gets blurry very quickly: at step 3 even its "
                        "sharpest head's entropy is 0.5 nats above NDR's (the project's margin) in both directions",
            quote='App. D, Fig. 3: "Attention map for every computation step for a baseline Transformer with relative '
                  'positional encoding. The attention pattern gets blurry very quickly and the network does not '
                  'generalize to longer sequences."',
            metric=SHARPEST_HEAD_AT_STEP_3, where=by_model("+ rel"), versus_where=by_model("NDR"),
            ahead={d: (d,) for d in BOTH}, margin=0.5, scales=PAPER,
            chosen=("0.5 nats: 'blurry' read as half a nat more entropy than NDR's",
                    "step 3: 'very quickly' read as by the third step")),
    Finding(description="App. D Fig. 4 (backward): + abs/rel + gate's attention gets blurrier after the columns are "
                        "processed: its entropy at the last step (14) above its entropy at step 1",
            quote='App. D, Fig. 4: "The attention pattern is relatively stable over time, and its gets blurrier after '
                  'the given column is processed and updated."',
            metric="probe_entropy_s14_h1 - probe_entropy_s1_h1", where=by_model("+ abs/rel + gate"),
            above={"backward": 0.0}, scales=PAPER,
            chosen=("margin 0: 'gets blurrier' read as any rise of entropy from step 1 to the last (14)",)),
)


# The NDR's routing over its 14 steps (issue 58): the same probe input, read at every step. "Remains similar over time"
# as at most a quarter of each position's attention moved from where it was at step 1, at every step (the largest over
# steps 2-14 of the mean total-variation distance from step 1's map); "always attends to the second position" as the
# read-out column's largest weight on the last operation in at least 95% of the samples, at every step 1-14. The i-th
# function applied has its input at step i (trainables/csordas2021/inside.py): "closed until the dependencies are
# satisfied" as at most 10% of the columns not yet ready open, at every step 1-8 (depth 9-10: some column is not ready
# at each), "open one after another, when the input is available" as at least 90% of the columns whose input arrives at
# step s open at s, at every step 1-9 (every probe sample has a 9th function). + abs/rel + gate's (Fig. 4) "relatively
# stable" as at least half of the positions still attending most to the key they did at step 1, at every step 2-14, and
# "blurrier after the given column is processed" as each processed function column's entropy above its entropy at the
# step it was processed (the mean over those columns > 0 nats), at every step 2-14.
#: "remains similar": the largest share of attention moved from step 1's map, at any step (the project's number)
SIMILAR_DRIFT = 0.25
#: "always": the smallest share of samples, at any step, whose read-out column looks hardest at the last operation
ALWAYS_SHARE = 0.95
#: "closed until ready": the largest share, at any step, of the function columns not yet ready that are open
CLOSED_SHARE = 0.1
#: "open when the input is available": the smallest share, at any step, of the columns ready then that are open
READY_SHARE = 0.9
EARLY_ANY_STEP = "max(" + ", ".join(f"probe_gate_early_s{s}" for s in range(1, 9)) + ")"
READY_EVERY_STEP = "min(" + ", ".join(f"probe_gate_ready_s{s}" for s in range(1, 10)) + ")"
#: "relatively stable": the smallest share, at any step, of the positions still peaking on their step-1 key
STABLE_SHARE = 0.5
SAME_PEAK_EVERY_STEP = "min(" + ", ".join(f"probe_same_peak_s{s}_h1" for s in range(2, NDR_STEPS + 1)) + ")"
BLUR_EVERY_STEP = "min(" + ", ".join(f"probe_blur_s{s}_h1" for s in range(2, NDR_STEPS + 1)) + ")"
DRIFT_ANY_STEP = "max(" + ", ".join(f"probe_drift_s{s}_h1" for s in range(2, NDR_STEPS + 1)) + ")"
LAST_OP_EVERY_STEP = "min(" + ", ".join(f"probe_last_op_s{s}_h1" for s in range(1, NDR_STEPS + 1)) + ")"
ROUTE_FINDINGS = (
    Finding(description="Fig. 2 caption (backward): NDR's attention map remains similar over time: at every step "
                        f"(2-14) at most {SIMILAR_DRIFT:.0%} of a position's attention has moved from where it was "
                        "at step 1 (the largest over the steps of the mean total-variation distance from step 1's "
                        "map, the project's number)",
            quote='Fig. 2 caption: "Left: Attention map for step t = 0. [...] The attention map remains similar over '
                  'time."',
            metric=DRIFT_ANY_STEP, where=by_model("NDR"), below={"backward": SIMILAR_DRIFT}, scales=PAPER,
            chosen=(f"{SIMILAR_DRIFT:.0%}: 'remains similar' read as at most a quarter of each position's attention "
                    "moved (total variation from step 1's map, mean over positions)",
                    "every step 2-14: 'over time' read as the whole computation, not one step")),
    Finding(description="Sec. 3 (backward, Fig. 2): NDR's read-out column (EOS, where the result is read) always "
                        "attends to the second position, the last operation to be performed: at every step (1-14) its "
                        f"largest attention weight lies there in at least {ALWAYS_SHARE:.0%} of the samples (the "
                        "smallest over the steps of that share; the level is the project's reading of 'always')",
            quote='Sec. 3: "The behavior of the last column is different: it always attends to the second position of '
                  'the sequence, which corresponds to the last operation to be performed." Fig. 2 caption: "except '
                  'the last one where the result is read from, which focuses on the last operation."',
            metric=LAST_OP_EVERY_STEP, where=by_model("NDR"), above={"backward": ALWAYS_SHARE}, scales=PAPER,
            chosen=(f"{ALWAYS_SHARE:.0%}: 'always' read as the largest weight on the last operation in at least that "
                    "share of the 64 probe samples (a seed mean), at every step",
                    "every step 1-14: 'always' read over the whole computation")),
    Finding(description="Fig. 2 caption, App. D Figs. 5 and 7 (backward): the gates of NDR and + abs/rel + gate remain "
                        "closed until a function's input is ready: at every step (1-8) at most "
                        f"{CLOSED_SHARE:.0%} of the function columns whose input is not ready yet are open (the "
                        "largest over the steps of that share; the level is the project's)",
            quote='Fig. 2 caption: "The gates remain closed until the data dependencies are satisfied." App. D, '
                  'Figs. 5 and 7: "The gates are closed until all arguments of the given operations are not ready."',
            metric=EARLY_ANY_STEP, where=by_model(*GATED), below={"backward": CLOSED_SHARE}, scales=PAPER,
            chosen=(f"{CLOSED_SHARE:.0%}: 'closed' read as at most that share of the columns not yet ready open (a "
                    "gate open: its mean over channels above 1/2)",
                    "steps 1-8: every step at which a depth-9/10 sample has a function not yet ready")),
    Finding(description="Sec. 3 (backward, Fig. 2): NDR's gates open one after another, when the input is available: "
                        f"at every step s (1-9) at least {READY_SHARE:.0%} of the function columns whose input arrives "
                        "at s (the s-th function applied) are open at s (the smallest over the steps of that share; "
                        "the level is the project's)",
            quote='Sec. 3: "As shown in Fig. 2/Right, the gates of different columns open sequentially one after '
                  'another, when the input is available for them."',
            metric=READY_EVERY_STEP, where=by_model("NDR"), above={"backward": READY_SHARE}, scales=PAPER,
            chosen=(f"{READY_SHARE:.0%}: 'open when the input is available' read as at least that share of the "
                    "columns open at the step their input arrives",
                    "steps 1-9: every function of a depth-9/10 sample but the 10th (depth 9 has none)")),
    Finding(description="App. D Fig. 4 (backward): + abs/rel + gate's attention pattern is relatively stable over "
                        f"time: at every step (2-14) at least {STABLE_SHARE:.0%} of the positions attend most to the "
                        "key they attended most at step 1 (the smallest over the steps of that share; the level is the "
                        "project's)",
            quote='App. D, Fig. 4: "The attention pattern is relatively stable over time, and its gets blurrier after '
                  'the given column is processed and updated."',
            metric=SAME_PEAK_EVERY_STEP, where=by_model("+ abs/rel + gate"), above={"backward": STABLE_SHARE},
            scales=PAPER,
            chosen=(f"{STABLE_SHARE:.0%}: 'relatively stable' read as at least that share of the positions keeping "
                    "their most-attended key of step 1 (the pattern's place, however it spreads)",
                    "every step 2-14: 'over time' read as the whole computation")),
    Finding(description="App. D Fig. 4 (backward): + abs/rel + gate's attention gets blurrier after the given column "
                        "is processed: at every step (2-14) the function columns already processed attend with more "
                        "entropy than at the step each was processed (the smallest over the steps of the mean rise "
                        "> 0 nats)",
            quote='App. D, Fig. 4: "The attention pattern is relatively stable over time, and its gets blurrier after '
                  'the given column is processed and updated."',
            metric=BLUR_EVERY_STEP, where=by_model("+ abs/rel + gate"), above={"backward": 0.0}, scales=PAPER,
            chosen=("0 nats: 'gets blurrier' read as any rise of entropy (as #17)",
                    "the i-th function's column processed at step i (one step per function, as #21-#22)",
                    "every step 2-14: each step after a column is processed")),
)
