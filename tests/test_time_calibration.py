"""The stated confidence of the finding kinds issue 50 added, measured (analysis/stats/calibration_time.py): the time
axis (best cell and cell="any"), two-sided levels and worst seed against best seed, each at bounds around its truth
in the calibration world of tests/test_budget_calibration.py, replayed on two seeds a cell (a fixed budget). Each
finding's wrong-decision count is held to the stated 5% on its own (a binomial critical count); the negative control
(seed noise understated three times) is caught on a time-axis finding; the kinds measured wrong more often than
stated are held by a strict xfail (docs/budget.md, Calibration of the time axis): when they are fixed it fails."""

from __future__ import annotations

from functools import cache

import polars as pl
import pytest
from scipy import stats

from analysis.stats.calibration import Tally, World, simulate, study, true_verdicts
from analysis.stats.calibration_time import PAIRS, overlap_fact, time_calibration_findings
from analysis.stats.findings import FAIL, PASS
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
#: Measured wrong more often than stated on two seeds (bench/calibration_time.py, 300 replays): a best-cell time bound
#: reads the cell of the best *observed* G as if it were known (cells within 2 points of NON's best G, 0.1 of NAP's,
#: reach the level 5 to 12 evaluations later: 11-15% wrong at the true first time, 10% at NAP's true last value;
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
HELD = ("NON reaches 80% before NAP", "BERT at d 512", "NAP's best between", "NON's best where seeds split between",
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
    assert len(kinds) == 13 and all(seen == {PASS, FAIL} for seen in kinds.values()), kinds
    on_it = [t for d, t in truths.items() if "+0 pp" in d or "+0 evaluations" in d]
    assert on_it == [PASS] * 13  # on the bound (a hair inside): the truth satisfies it
    leads = {d: t for d, t in truths.items() if "worst seed" in d}  # the sign of the true lead; a tie is no lead
    assert [t for d, t in leads.items() if "lead +" in d and "+0.0" not in d] == [PASS] * 3
    assert [t for d, t in leads.items() if "lead -" in d or "+0.0" in d] == [FAIL] * 4


@cache
def _tally(prefixes: tuple[str, ...], sd_scale: float = 1.0, seeds: int = 2) -> Tally:
    findings = _picked(prefixes)
    return simulate(study(findings, WORLD, "fixed", seeds=seeds), WORLD, REPLAYS, seed=50, sd_scale=sd_scale,
                    fact=overlap_fact)


def _over(tally: Tally) -> pl.DataFrame:
    """The findings decided wrong more often than the critical count allows."""
    return tally.rates().filter(pl.col("wrong") * tally.replays > CRITICAL)


@pytest.mark.slow  # a long simulation: some 1.5 minutes
def test_each_new_finding_is_wrong_no_more_often_than_stated() -> None:
    tally = _tally(HELD + HELD_ANY)
    assert _over(tally).is_empty(), _over(tally)
    rates = tally.rates()
    # and they decide: a time bound and a worst seed against best seed are decided in some replays, the latter's
    # FAILs on two seeds nearly all facts of the seeds run (they overlap), no inference
    timed = rates.filter(pl.col("finding").str.contains("reaches|learned"))
    assert timed.filter(pl.col("decided") > 0).height >= 8 and timed.get_column("decided").max() > 0.1, timed
    worst = rates.filter(pl.col("finding").str.contains("worst seed"))
    assert worst.filter(pl.col("decided") > 0.5).height >= 5 and worst.get_column("wrong").max() == 0.0, worst


@pytest.mark.slow
@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="a best-cell time bound reads the cell of the best observed G as if known; a curve's seed "
                          "noise comes from the same seeds (docs/budget.md)")
def test_the_best_cells_time_bounds_are_wrong_no_more_often_than_stated() -> None:
    over = pl.concat([_over(_tally(DEFECTS)), _over(_tally(("NON reaches 80% before NAP by a margin (truth -1",),
                                                           seeds=5))])
    assert over.is_empty(), over


@pytest.mark.slow
def test_the_negative_control_is_caught_on_the_time_axis() -> None:
    """Seed noise understated three times (each evaluation's seeds drawn towards their mean): a time-axis finding
    measured calibrated above is decided wrong far more often than 5%."""
    tally = _tally(("NON reaches 80% before NAP", "BERT at d 512"), 1 / 3)
    assert not _over(tally).is_empty(), tally.rates().sort("wrong").tail(3)
