"""``worst_beats_best``: the NAP paper's own criterion of a significant difference - A's worst seed beats B's best
seed, each at its panel value's best cell - read as a statistical claim."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from analysis.stats.kinds.base import KINDS, Check, Kind, Reading, Relation, State, check_state
from analysis.stats.kinds.comparison import lead_text, sides
from analysis.stats.kinds.text import percent_text, point_text, unit
from analysis.stats.metric import lower_is_better
from analysis.stats.table import CellTable, Column
from search_spaces.finding import Finding


def separation_chance(n_a: int, n_b: int) -> float:
    """The chance that every one of ``n_a`` seeds lands above every one of ``n_b`` seeds when the two sides do not
    differ (the seeds exchangeable): ``1 / C(n_a + n_b, n_a)`` - 1/20 at three seeds each, 1/252 at five. The exact
    one-sided p-value of a Mann-Whitney test with no overlap, what a worst-seed-beats-best-seed observation says."""
    return 1.0 / math.comb(n_a + n_b, n_a) if n_a >= 1 and n_b >= 1 else 1.0


def extreme_seeds(cells: CellTable, metric: str) -> tuple[float | None, float | None, int]:
    """The worst and the best seed (each seed's best over training) of the cell with the best G of ``cells``, and its
    seeds (None where the data has no per-seed extremes: a combination of columns, published means)."""
    run = cells.run().frame
    if run.is_empty():
        return None, None, 0
    lower = lower_is_better(metric)
    top = run.sort(Column.G, descending=not lower).row(0, named=True)
    worst, best = (top[Column.BEST_SEED], top[Column.WORST_SEED]) if lower else \
        (top[Column.WORST_SEED], top[Column.BEST_SEED])
    finite = [None if v is None or not math.isfinite(v) else float(v) for v in (worst, best)]
    return finite[0], finite[1], int(top[Column.N])


@KINDS.register("worst_beats_best")
@dataclass(frozen=True)
class WorstBeatsBest(Kind):
    """A's worst seed beats B's best seed (each at its panel value's best cell; a loss: A's highest below B's lowest).

    The paper's criterion is a statement about the seeds run; what it says of the architectures is read from two
    numbers: the chance :func:`separation_chance` that seeds of no real difference separate so completely, and the
    interval of the lead of A's G over B's (as ``ahead``'s, each side at half the error). It **holds** when the seeds
    separate, that chance is at most the end's error (three seeds a side at 5%, more with several bounds) and the
    lead's lower end is above zero: then both "A's worst beats B's best" on the runs and "A is better" at the
    finding's confidence. It **fails** when the lead's upper end is at most zero (A not better, at the finding's
    confidence), or when both cells have every seed the study runs and they overlap (the criterion read on all the
    runs: a fact of those seeds, no inference, so it carries no error bound of its own). Else undecided - fewer seeds
    never make a PASS likelier (the chance grows, the interval widens)."""

    name: ClassVar[str] = "worst_beats_best"
    panel_value: str
    versus: str

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        return [cls(a, b) for a, bs in finding.worst_beats_best.items() for b in bs]

    @property
    def compared_with(self) -> str:
        return self.versus

    @property
    def relation(self) -> Relation:
        return "worst_beats_best"

    def ends(self) -> int:
        return 1

    def judge(self, reading: Reading) -> Check:
        a, b, percent, metric = self.panel_value, self.versus, reading.percent, reading.metric
        two = sides(reading, a, b)
        lead = two.lead

        def made(state: State, detail: str) -> Check:
            return Check(self, lead, state, bound=0.0, mine=two.mine, subject=two.subject,
                         against=two.versus_subject, percent=percent, detail=detail)

        if two.empty:
            return made(State.FAILS, f"no cell to compare with {b}")
        worst, _, n_a = extreme_seeds(reading.cells(a, reading.finding.where), metric)
        _, best, n_b = extreme_seeds(reading.cells(b, reading.versus_region), metric)
        shown = lead_text(lead, percent)
        shown = f"; lead of G {shown}" if shown else ""
        lead_low, lead_high = (-lead.high, -lead.low) if lower_is_better(metric) else (lead.low, lead.high)
        if worst is None or best is None:
            state = State.FAILS if lead.value is not None and lead_high <= 0 else State.UNDECIDED
            detail = (f"worst seed against the best seed of {two.versus_subject}: no per-seed values (a cell not run "
                      f"yet, or the data has none for this metric){shown}")
            return made(state, detail)
        separation = (-1.0 if lower_is_better(metric) else 1.0) * (worst - best)
        chance = separation_chance(n_a, n_b)
        overlap_at_all_seeds = n_a >= reading.max_seeds and n_b >= reading.max_seeds and separation <= 0
        errors = reading.errors
        allowed = errors.low * float(errors.share(np.array([min(n_a, n_b)], dtype=float))[0])  # adaptive share
        holds = separation > 0 and chance <= allowed and lead_low > 0
        fails = lead_high <= 0 or overlap_at_all_seeds
        chance_text = f"chance of it without a difference 1/{round(1 / chance)} (allowed {100 * allowed:.2g}%)" \
            if separation > 0 else "the seeds overlap"
        detail = (f"worst seed {percent_text(worst, percent)} ({n_a} seeds) against the best seed of "
                  f"{two.versus_subject} {percent_text(best, percent)} ({n_b} seeds): separation "
                  f"{point_text(separation, percent)}{unit(percent)}, {chance_text}{shown}")
        return made(check_state(holds, fails), detail)

    def text(self, check: Check) -> str:
        return f"{check.subject or self.panel_value}: {check.detail}: {check.state}"
