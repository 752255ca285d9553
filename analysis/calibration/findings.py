"""The calibration's findings: every statistic and relation at bounds set around its true value in the world
(:mod:`analysis.calibration.world`) - on it, inside by 0.5 to 2 points and outside by as much - so that a PASS is wrong
for half of them and a FAIL for the others. A decided verdict is wrong when it differs from the verdict on the truth;
each finding's wrong rate is counted on its own, never pooled. The time axis, two-sided levels and worst seed against
best seed: :mod:`analysis.calibration.time_findings`.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analysis.calibration.world import World
from search_spaces import Finding

OFFSETS = (-0.02, -0.005, 0.0, 0.005, 0.02)
#: Where NON's seeds split (learning rates >= 0.09: of its 16 cells there, 11 have seeds that learn and seeds that do
#: not, five-seed sd 5 to 30 points): a best there rests on cells whose first seeds may all have learned, or none.
MIXED = {"learning_rate": {"min": 0.09}}

def calibration_findings(world: World, offsets: Sequence[float] = OFFSETS) -> list[Finding]:
    """Every statistic and relation at bounds around its true value on ``world`` (module docstring): NAP's best above,
    max's best below, NON's best above and below where its seeds split, BERT's share of cells at 90% or more, NON's
    mean and seed spread, NON ahead of NAP, NON level with NAP and not ahead of it. An offset > 0 puts the truth on
    the bound's true side, < 0 on its false side, 0 on the bound itself (a hair inside: the bounds are inclusive, the
    truth's float sums are not exact)."""
    truth = world.truth()

    def of(arch: str, expr: pl.Expr) -> float:
        return float(truth.filter(pl.col("architecture") == arch).select(expr).item())

    best = {a: of(a, pl.col("g").max()) for a in ("NAP", "max", "NON")}
    mixed = float(truth.filter(pl.col("architecture") == "NON", pl.col("learning_rate") >= 0.09 * (1 - 1e-6))
                  .select(pl.col("g").max()).item())
    cells = truth.filter(pl.col("architecture") == "BERT").height
    share = of("BERT", (pl.col("g") >= 0.9).mean())
    spread = of("NON", pl.col("gmd").filter(pl.col("g") >= 0.5).mean())
    lead = best["NON"] - best["NAP"]
    found = []
    for o in offsets:
        inside = o + 1e-9  # on the bound: a hair inside
        tag = f" (truth {'+' if o >= 0 else '-'}{abs(100 * o):g} pp inside)"
        found += [
            Finding(description=f"NAP's best{tag}", above={"NAP": best["NAP"] - inside}),
            Finding(description=f"max's best{tag}", below={"max": best["max"] + inside}),
            Finding(description=f"NON's best where seeds split{tag}", where=MIXED, above={"NON": mixed - inside}),
            Finding(description=f"NON's best where seeds split, at most{tag}", where=MIXED,
                    below={"NON": mixed + inside}),
            Finding(description=f"BERT's share{tag}", statistic="share", level=0.9,
                    above={"BERT": share - round(100 * o) / cells - 1e-9}),
            Finding(description=f"NON's mean{tag}", statistic="mean",
                    above={"NON": of("NON", pl.col("g").mean()) - inside}),
            Finding(description=f"NON's spread{tag}", statistic="spread", level=0.5, above={"NON": spread - inside}),
            Finding(description=f"NON ahead of NAP{tag}", ahead={"NON": ("NAP",)}, margin=lead - inside),
            Finding(description=f"NON level with NAP{tag}", level_with={"NON": ("NAP",)},
                    equivalence_margin=max(abs(lead) + inside, 0.0)),
            Finding(description=f"NON not ahead of NAP{tag}", not_ahead={"NON": ("NAP",)},
                    equivalence_margin=max(lead + inside, 0.0)),
        ]
    return found
