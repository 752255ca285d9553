"""The stated confidence of the finding kinds issue 50 added, measured (analysis/calibration/time_findings.py): the time
axis (best cell and cell="any"), two-sided levels and worst seed against best seed, each at bounds around its truth
in the calibration world of tests/test_budget_calibration.py, replayed on two seeds a cell (a fixed budget). Each
finding's wrong-decision count is held to the stated 5% on its own (a binomial critical count). The best-cell time
bounds, measured wrong 11-26% of the time before they read every cell that may be the best and took their cells'
noise in the grid as a floor, are held on five seeds (docs/budget.md, Calibration of the time axis). No negative
control here: with that floor, seed noise understated three times in the curves changes no time-axis decision
(measured: none wrong of 60 replays), and the G-level controls of tests/test_budget_calibration.py catch a wrong
noise model."""

from __future__ import annotations

from functools import cache

import polars as pl
import pytest
from scipy import stats

from analysis.calibration.simulate import Tally, simulate
from analysis.calibration.time_findings import PAIRS, overlap_fact, time_calibration_findings
from analysis.calibration.world import World, study, true_verdicts
from analysis.stats.verdicts.status import Status
from search_spaces import Finding

#: 300 replays of these findings take some 5 minutes on one core (cell="any" judges every cell of its region twice),
#: so 150: a finding wrong more than 14 times of 150 (9.3%) fails (a 5% rate does so 1% of the time); a 10% rate is
#: caught 54% of the time, 15% 97% of the time.
REPLAYS = 150
ALPHA = 0.05
CRITICAL = int(stats.binom.ppf(0.99, REPLAYS, ALPHA))
POWER = (float(stats.binom.sf(CRITICAL, REPLAYS, 2 * ALPHA)), float(stats.binom.sf(CRITICAL, REPLAYS, 3 * ALPHA)))
WORLD = World.of_release()
FINDINGS = time_calibration_findings(WORLD)
#: Measured wrong more often than stated on two seeds before the fix (bench/calibration_time.py, 300 replays): a
#: best-cell time bound read the cell of the best *observed* G as if it were known (cells within 2 points of NON's best
#: G, 0.1 of NAP's, reach the level 5 to 12 evaluations later: 11-15% wrong at the true first time, 10% at NAP's
#: true last value;
#: on the one true best cell 0-4%), and a curve's seed noise comes from the same seeds' neighbouring evaluations, so
#: two seeds that agree in a cell whose seeds split are trusted too far (where NON's seeds split: 26% wrong for the
#: best cell, 15% for cell="any" despite its 1/C share of the error). On five seeds the first stays where cells tie
#: (NAP 18%) and reaches faster_than, whose other side is NAP's picked cell (21%; on the true best cells 0%).
DEFECTS = ("NON first reaches 80% by (truth +0", "NAP first reaches 90% by (truth +0",
           "NAP still holds its last value (truth +0 pp",
           "NON still holds its last value where seeds split (truth -0.5",
           "some NON cell where seeds split still holds its last value (truth -0.5")
#: Held: every offset of the kinds measured calibrated; cell="any" (its cost: each of its region's cells' curves
#: judged twice a replay) at the offsets on either side of its truth, a first time only (learned then unlearned at
#: some cell is never decided on two seeds: bench/calibration_time.py).
HELD = ("BERT at d 512", "NAP's best between", "NON's best where seeds split between",
        *(f"{a}'s worst seed beats {b}'s best" for a, b in PAIRS))
HELD_ANY = ("some NON cell where seeds split first reaches 30% by (truth -1",
            "some NON cell where seeds split first reaches 30% by (truth +0")


def _kind(finding: Finding) -> str:
    return finding.description.split(" (truth")[0]


def _picked(prefixes: tuple[str, ...]) -> list[Finding]:
    return [f for f in FINDINGS if f.description.startswith(prefixes)]


def test_the_test_tells_5_from_15_percent() -> None:
    assert CRITICAL == 14 and POWER[0] > 0.5 and POWER[1] > 0.95


def test_every_new_bound_has_truths_on_both_sides_and_on_it() -> None:
    truths = {f.description: v.status for f, v in zip(FINDINGS, true_verdicts(study(FINDINGS, WORLD), WORLD),
                                                      strict=True)}
    kinds: dict[str, set[str]] = {}
    for finding in FINDINGS:
        if "worst seed" not in finding.description:
            kinds.setdefault(_kind(finding), set()).add(truths[finding.description])
    assert len(kinds) == 13 and all(seen == {Status.PASS, Status.FAIL} for seen in kinds.values()), kinds
    on_it = [t for d, t in truths.items() if "+0 pp" in d or "+0 evaluations" in d]
    assert on_it == [Status.PASS] * 13  # on the bound (a hair inside): the truth satisfies it
    leads = {d: t for d, t in truths.items() if "worst seed" in d}  # the sign of the true lead; a tie is no lead
    assert [t for d, t in leads.items() if "lead +" in d and "+0.0" not in d] == [Status.PASS] * 3
    assert [t for d, t in leads.items() if "lead -" in d or "+0.0" in d] == [Status.FAIL] * 4


@cache
def _tally(prefixes: tuple[str, ...], sd_scale: float = 1.0, seeds: int = 2) -> Tally:
    findings = _picked(prefixes)
    return simulate(study(findings, WORLD, "fixed", seeds=seeds), WORLD, REPLAYS, seed=50, sd_scale=sd_scale,
                    fact=overlap_fact)


def _over(tally: Tally) -> pl.DataFrame:
    """The findings decided wrong more often than the critical count allows."""
    return tally.rates().filter(pl.col("wrong") * tally.replays > CRITICAL)


@pytest.mark.slow  # a long simulation: some 70 s
def test_each_new_finding_is_wrong_no_more_often_than_stated() -> None:
    tally = _tally(HELD + HELD_ANY)
    assert _over(tally).is_empty(), _over(tally)
    rates = tally.rates()
    # and they decide: the two-sided levels at their bounds now and then, a worst seed against best seed mostly, its
    # FAILs on two seeds nearly all facts of the seeds run (they overlap), no inference; the time bounds read with their
    # cells' noise in the grid decide nothing on two seeds here (measured, 2026-11-27), and are never wrong
    sided = rates.filter(pl.col("finding").str.contains("between"))
    assert sided.filter(pl.col("decided") > 0).height >= 4, sided
    worst = rates.filter(pl.col("finding").str.contains("worst seed"))
    assert worst.filter(pl.col("decided") > 0.5).height >= 5 and worst.get_column("wrong").max() == 0.0, worst


@pytest.mark.slow  # a long simulation: some 90 s
def test_worst_seed_against_best_seed_passes_on_three_seeds_wrong_no_more_often_than_stated() -> None:
    """The paper's criterion decides alone from three seeds a side (one cell a side: 1/20, the 5% of one bound): at
    the exact tie and the leads a hair below zero it is wrong no more often than stated (measured 2-6% at RNG seeds 50
    and 51, 150 replays each: docs/budget.md; its permutation chance alone, without the fixed cells' floor, was wrong
    5-10% on two seeds), and far apart it passes in every replay."""
    findings = _picked(("sum's worst seed beats BERT's", "MTE's worst seed beats NON's",
                        "NAP's worst seed beats BERT's", "NON's worst seed beats max's"))
    tally = simulate(study(findings, WORLD, "fixed", seeds=3), WORLD, REPLAYS, seed=51, fact=overlap_fact)
    assert _over(tally).is_empty(), _over(tally)
    rates = tally.rates()
    far = rates.filter(pl.col("finding").str.starts_with("NON's worst seed beats max's best"))
    assert far.select("truth", "decided", "wrong").row(0) == ("PASS", 1.0, 0.0), far
    assert rates.get_column("decided").min() > 0.9, rates  # near ties too: mostly FAILs on seeds that overlap


#: The best-cell time bounds on five seeds (60 replays: each reads every cell that may be the best, slow): a finding
#: wrong more than 7 times of 60 (11.7%) fails; a 5% rate does so 1% of the time, a 20% rate is caught 85% of the time.
BEST_REPLAYS = 60
BEST_CRITICAL = int(stats.binom.ppf(0.99, BEST_REPLAYS, ALPHA))


@pytest.mark.slow  # a long simulation: some 70 s
def test_the_best_cells_time_bounds_are_wrong_no_more_often_than_stated() -> None:
    """Measured wrong 11-26% where 5% is stated while the best cell was read as if known and a curve's noise came from
    its own seeds (docs/budget.md); read on every cell that may be the best, each curve's noise at least its cell's in
    the grid, none is wrong more often than stated, and a bound two evaluations past the truth is still decided."""
    findings = _picked((*DEFECTS[:4], "NON first reaches 80% by (truth -2",
                        "NON reaches 80% before NAP by a margin (truth -1"))
    tally = simulate(study(findings, WORLD, "fixed", seeds=5), WORLD, BEST_REPLAYS, seed=50, fact=overlap_fact)
    rates = tally.rates()
    assert BEST_CRITICAL == 7 and float(stats.binom.sf(BEST_CRITICAL, BEST_REPLAYS, 0.2)) > 0.8
    assert rates.filter(pl.col("wrong") * BEST_REPLAYS > BEST_CRITICAL).is_empty(), rates
    far = rates.filter(pl.col("finding").str.starts_with("NON first reaches 80% by (truth -2"))
    assert far.get_column("decided").item() > 0.9, far
