"""Worst seed against best seed (a finding's ``worst_beats_best``): the NAP paper's own criterion of a significant
difference, read as a statistical claim (:func:`worst_beats_best`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from analysis.stats.finding_cells import lower_is_better
from analysis.stats.finding_check import Check, check_state, subject_text
from analysis.stats.finding_intervals import Estimate
from analysis.stats.verdict_text import percent_text, point_text, span_text
from search_spaces.finding import Finding


def separation_chance(n_a: int, n_b: int) -> float:
    """The chance that every one of ``n_a`` seeds lands above every one of ``n_b`` seeds when the two sides do not
    differ (the seeds exchangeable): ``1 / C(n_a + n_b, n_a)`` - 1/20 at three seeds each, 1/252 at five. The exact
    one-sided p-value of a Mann-Whitney test with no overlap, what a worst-seed-beats-best-seed observation says."""
    return 1.0 / math.comb(n_a + n_b, n_a) if n_a >= 1 and n_b >= 1 else 1.0


def _extreme_seeds(cells: pl.DataFrame, metric: str) -> tuple[float | None, float | None, int]:
    """The worst and the best seed (each seed's best over training) of the cell with the best G of ``cells``, and its
    seeds (None where the data has no per-seed extremes: a combination of columns, a loss, published means)."""
    run = cells.filter(pl.col("n") >= 1)
    if run.is_empty():
        return None, None, 0
    lower = lower_is_better(metric)
    top = run.sort("g", descending=not lower).row(0, named=True)
    worst, best = (top["best_seed"], top["worst_seed"]) if lower else (top["worst_seed"], top["best_seed"])
    finite = [None if v is None or not math.isfinite(v) else float(v) for v in (worst, best)]
    return finite[0], finite[1], int(top["n"])


def worst_beats_best(finding: Finding, pair: tuple[str, str], numbers: tuple[Estimate, Estimate],
                      cells: tuple[pl.DataFrame, pl.DataFrame], context: tuple[Any, int, bool, str]) -> Check:
    """A's worst seed beats B's best seed (each at its panel value's best cell; a loss: A's highest below B's lowest).

    The paper's criterion is a statement about the seeds run; what it says of the architectures is read from two
    numbers: the chance :func:`separation_chance` that seeds of no real difference separate so completely, and the
    interval of the lead of A's G over B's (the ``ahead`` interval, the seed-noise model's). It **holds** when the
    seeds separate, that chance is at most the end's error (three seeds a side at 5%, more with several bounds) and
    the lead's lower end is above zero: then both "A's worst beats B's best" on the runs and "A is better" at the
    finding's confidence. It **fails** when the lead's upper end is at most zero (A not better, at the finding's
    confidence), or when both cells have every seed the study runs and they overlap (the criterion read on all the
    runs: a fact of those seeds, no inference, so it carries no error bound of its own). Else undecided - fewer seeds
    never make a PASS likelier (the chance grows, the interval widens)."""
    (a, b), (mine, theirs) = pair, numbers
    errors, max_seeds, percent, metric = context
    worst, _, n_a = _extreme_seeds(cells[0], metric)
    _, best, n_b = _extreme_seeds(cells[1], metric)
    lead = mine.minus(theirs)
    sign = -1.0 if lower_is_better(metric) else 1.0
    against = f"{subject_text(finding, b, finding.versus_where or finding.where)}"
    made: dict[str, Any] = {"subject": subject_text(finding, a, finding.where), "versus": b, "mine": mine, "bound": 0.0,
                            "percent": percent, "against": against}
    if mine.cells == 0 or theirs.cells == 0:
        return Check(a, "worst_beats_best", None, lead, "fails", **made, detail=f"no cell to compare with {b}")
    chance = separation_chance(n_a, n_b)
    unit = " pp" if percent else ""
    shown = "" if lead.value is None else \
        f"; lead of G {point_text(lead.value, percent)}{unit} {span_text(lead, points=True, percent=percent)}"
    lead_low, lead_high = (lead.low, lead.high) if sign > 0 else (-lead.high, -lead.low)  # A's lead, better > 0
    if worst is None or best is None:
        state = "fails" if lead.value is not None and lead_high <= 0 else "undecided"
        detail = f"worst seed against the best seed of {against}: no per-seed values (a cell not run yet, or the " \
                 f"data has none for this metric){shown}"
        return Check(a, "worst_beats_best", None, lead, state, **made, detail=detail)
    separation = sign * (worst - best)
    overlap_at_all_seeds = n_a >= max_seeds and n_b >= max_seeds and separation <= 0
    allowed = errors.low * float(errors.share(np.array([min(n_a, n_b)]))[0])  # an adaptive budget's share
    holds = separation > 0 and chance <= allowed and lead_low > 0
    fails = lead_high <= 0 or overlap_at_all_seeds
    chance_text = f"chance of it without a difference 1/{round(1 / chance)} (allowed {100 * allowed:.2g}%)" \
        if separation > 0 else "the seeds overlap"
    detail = (f"worst seed {percent_text(worst, percent)} ({n_a} seeds) against the best seed of {against} "
              f"{percent_text(best, percent)} ({n_b} seeds): separation {point_text(separation, percent)}{unit}, "
              f"{chance_text}{shown}")
    return Check(a, "worst_beats_best", None, lead, check_state(holds, fails), **made, detail=detail)
