"""Calibration of the finding kinds issue 50 added, in the world of :mod:`analysis.calibration.world`: the time
axis (``reached_by``, ``still_holds``, ``learned_then_unlearned``, ``faster_than``; the best cell and ``cell="any"``),
two-sided levels and ``worst_beats_best`` (tests/test_time_calibration.py, docs/budget.md).

**Their truth** is the verdict each gets on the truth (:func:`analysis.calibration.world.true_verdicts`): a cell's
learning curve there is its population mean curve (per evaluation the mean of its five curves: the curve whose best is
the world's G), with no seed noise, and a time bound reads the cell of the best *true* G (``cell="any"``: every cell of
its region, the truth holding where one cell does). So a replay whose data picks another best cell, whose curve
crosses the level at another time, counts wrong when its decided verdict differs: the verdict claims the best cell's
curve, and the cell it reads is picked by the same seeds.

**Their bounds**, each around its truth (:func:`time_calibration_findings`): a first time at the true first evaluation
that reaches the level and one or two evaluations either side; a last value, a drop and a two-sided level at it and
0.5 and 2 points either side (as :data:`~analysis.calibration.findings.OFFSETS`); a lead in first times at the true lead
and one or two evaluations either side.

**worst_beats_best** is a claim about the seeds run ("A's worst seed beats B's best") and, at the finding's confidence,
about the architectures ("A is better": seeds of no difference would not separate as far at their best cells, the
permutation chance of :func:`analysis.stats.kinds.worst_beats_best.separation_chance`). Only the second is an
inference, so its truth is the sign of the true lead (the truth gives every seed its cell's G): a PASS is wrong where
A is not better, a FAIL where A is; but a FAIL on the seeds run overlapping with every seed the study runs is a fact
of those seeds, not a claim of confidence (:class:`analysis.stats.kinds.worst_beats_best.WorstBeatsBest`):
:func:`overlap_fact` counts it apart, never wrong. It has no margin, so its bounds are pairs of panel values at true
leads near zero (both ways), at an exact tie, and far apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from analysis.calibration.findings import MIXED, OFFSETS
from analysis.calibration.world import World
from analysis.stats.region import in_region
from analysis.stats.verdicts.evaluate import Verdict
from analysis.stats.verdicts.status import Status
from search_spaces import Finding

#: Offsets of a time bound from its truth, in evaluations (> 0: the truth on the bound's true side).
STEPS = (-2, -1, 0, 1, 2)
#: The learning rate at which BERT's cells of d 256 and 512 learn the first evaluations' share and lose it again
#: (mean curve 27-28% at step 100, 11-17% at the end): the release's cells that unlearn.
UNLEARN = {"learning_rate": [0.0081]}
#: Pairs for worst_beats_best: near-ties both ways (true leads of 0.8 and 0.2 points), an exact tie, far apart.
PAIRS = (("NON", "MTE"), ("MTE", "NON"), ("BERT", "NAP"), ("NAP", "BERT"), ("sum", "BERT"), ("NON", "max"),
         ("max", "NON"))


def time_calibration_findings(world: World, offsets: Sequence[float] = OFFSETS,
                              steps: Sequence[int] = STEPS) -> list[Finding]:
    """The new kinds' findings at bounds around their truth on ``world`` (module docstring): the first time NON's
    best cell reaches 80% and NAP's 90%; NAP's last value, and NON's where its seeds split; BERT's drop at d 512 and
    learning rate 0.0081 from 20%; NON ahead of NAP in first reaching 80%; by some cell (``cell="any"``) where NON's
    seeds split, 30% first reached and the last value, and where BERT unlearns, the drop from 20%; two-sided levels
    at NAP's best and at NON's where its seeds split, each side in turn; worst seed against best seed."""
    truth = world.truth().with_row_index("_i")
    mean = world.curves.mean(axis=1)
    every = float(world.steps[1] - world.steps[0])

    def cells(arch: str, region: dict[str, Any]) -> list[int]:
        return in_region(truth.filter(pl.col("architecture") == arch), region, world.keys).get_column("_i").to_list()

    def best(arch: str, region: dict[str, Any]) -> int:
        return max(cells(arch, region), key=lambda i: float(truth["g"][i]))

    def first(i: int, level: float) -> float:
        reached = np.nonzero(mean[i] >= level)[0]
        return float(world.steps[reached[0]]) if reached.size else math.inf

    def drop(i: int, level: float) -> float:  # from ``level`` to the last evaluation, where the curve reaches it
        return level - float(mean[i, -1]) if math.isfinite(first(i, level)) else -math.inf

    one = {"d_model": [512], **UNLEARN}
    reach = {"NON": first(best("NON", {}), 0.8), "NAP": first(best("NAP", {}), 0.9)}
    gap = first(best("NAP", {}), 0.8) - reach["NON"]
    some_reach = min(first(i, 0.3) for i in cells("NON", MIXED))
    last = {"NAP": float(mean[best("NAP", {}), -1]), "split": float(mean[best("NON", MIXED), -1]),
            "some split": max(float(mean[i, -1]) for i in cells("NON", MIXED))}
    drops = {"one": drop(best("BERT", one), 0.2), "some": max(drop(i, 0.2) for i in cells("BERT", UNLEARN))}
    g = {"NAP": float(truth["g"][best("NAP", {})]), "split": float(truth["g"][best("NON", MIXED)])}
    timed: dict[str, Any] = {"time": "step"}
    found = []
    for k in steps:
        tag = f" (truth {'+' if k >= 0 else '-'}{abs(k)} evaluations inside)"
        found += [
            Finding(description=f"NON first reaches 80% by{tag}", level=0.8,
                    reached_by={"NON": reach["NON"] + k * every}, **timed),
            Finding(description=f"NAP first reaches 90% by{tag}", level=0.9,
                    reached_by={"NAP": reach["NAP"] + k * every}, **timed),
            Finding(description=f"NON reaches 80% before NAP by a margin{tag}", level=0.8,
                    faster_than={"NON": ("NAP",)}, time_margin=gap - (k + 0.5) * every, **timed),
            Finding(description=f"some NON cell where seeds split first reaches 30% by{tag}", where=MIXED, cell="any",
                    level=0.3, reached_by={"NON": some_reach + k * every}, **timed),
        ]
    for o in offsets:
        inside = o + 1e-9  # on the bound: a hair inside
        tag = f" (truth {'+' if o >= 0 else '-'}{abs(100 * o):g} pp inside)"
        found += [
            Finding(description=f"NAP still holds its last value{tag}", still_holds=("NAP",),
                    level=last["NAP"] - inside, **timed),
            Finding(description=f"NON still holds its last value where seeds split{tag}", where=MIXED,
                    still_holds=("NON",), level=last["split"] - inside, **timed),
            Finding(description=f"some NON cell where seeds split still holds its last value{tag}", where=MIXED,
                    cell="any", still_holds=("NON",), level=last["some split"] - inside, **timed),
            Finding(description=f"BERT at d 512 learned 20% then unlearned it{tag}", where=one, level=0.2,
                    learned_then_unlearned={"BERT": drops["one"] - inside}, **timed),
            Finding(description=f"some BERT cell learned 20% then unlearned it{tag}", where=UNLEARN, cell="any",
                    level=0.2, learned_then_unlearned={"BERT": drops["some"] - inside}, **timed),
            Finding(description=f"NAP's best between, lower bound{tag}", above={"NAP": g["NAP"] - inside},
                    below={"NAP": g["NAP"] + 0.03}),
            Finding(description=f"NAP's best between, upper bound{tag}", above={"NAP": g["NAP"] - 0.03},
                    below={"NAP": g["NAP"] + inside}),
            Finding(description=f"NON's best where seeds split between, lower bound{tag}", where=MIXED,
                    above={"NON": g["split"] - inside}, below={"NON": g["split"] + 0.03}),
            Finding(description=f"NON's best where seeds split between, upper bound{tag}", where=MIXED,
                    above={"NON": g["split"] - 0.03}, below={"NON": g["split"] + inside}),
        ]
    for a, b in PAIRS:
        lead = float(truth["g"][best(a, {})]) - float(truth["g"][best(b, {})])
        found.append(Finding(description=f"{a}'s worst seed beats {b}'s best (truth lead {100 * lead:+.1f} pp)",
                             worst_beats_best={a: (b,)}))
    return found


def overlap_fact(verdict: Verdict) -> bool:
    """Whether ``verdict`` is a worst_beats_best FAIL on its seeds overlapping at every seed the study runs while the
    lead's interval leaves "A is better" open (a fact of the seeds run, not a claim of confidence: module docstring);
    an accuracy's lead, higher better."""
    return verdict.status == Status.FAIL and any(c.relation == "worst_beats_best" and c.state == "fails"
                                          and c.estimate.high > 0 for c in verdict.checks)


def on_true_best_cells(findings: Sequence[Finding], world: World) -> list[Finding]:
    """Each best-cell time-axis finding of ``findings`` read on the one cell of the best true G of its region (and of
    its ``faster_than`` other side's): the same bounds with no cell to pick, the diagnostic that tells a wrong pick
    from a wrong interval (docs/budget.md); descriptions start ``one cell:``."""
    truth = world.truth()

    def cell(value: str, region: dict[str, Any]) -> dict[str, Any]:
        mine = in_region(truth.filter(pl.col("architecture") == value), region, world.keys)
        top = mine.sort("g", descending=True).row(0, named=True)
        return {"d_model": [top["d_model"]], "learning_rate": [top["learning_rate"]]}

    found = []
    for f in findings:
        if f.timed() and f.cell == "best":
            value = next(iter([*f.reached_by, *f.still_holds, *f.learned_then_unlearned, *f.faster_than]))
            update = {"where": cell(value, f.where), "description": f"one cell: {f.description}"}
            if f.faster_than:
                update["versus_where"] = cell(f.faster_than[value][0], f.versus_where or f.where)
            found.append(Finding.model_validate({**f.model_dump(), **update}))
    return found
