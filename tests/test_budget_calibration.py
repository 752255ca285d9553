"""The verdicts' stated confidence, measured (issues 48, 57): studies whose truth is known, built from the authors' own
release cells, replayed through the project's rows, statistics, verdicts and budget (analysis/calibration/). Three
worlds: the release's cells as they are (the file the noise constants were chosen on); the same with hidden splits (a
cell whose seeds agree splits at its neighbours' rate); and a file no constant was chosen on, with hidden splits. Every
statistic and relation sits at bounds on its truth, 0.5 and 2 points inside it and as far outside - on the whole grid,
where seeds split, on single cells, and with one bound per architecture (analysis/calibration/findings.py).

Each finding's wrong-decision count is held to the stated 5% on its own, pooled over two RNG seeds of the replays (a
rate that holds over several draws, not one), and printed with its exact binomial interval when it fails. Two kinds
are measured miscalibrated and held as such (:data:`KNOWN_GAPS`: docs/budget.md says why): their test fails the day
they are calibrated, so the list stays true. The two negative controls - the seed noise understated three times, and
the noise prior this project used before (grouped by each cell's observed G) - are caught; bench/guards.py makes the
changes of issue 57 to a copy of the tree and prints which test catches each."""

from __future__ import annotations

from functools import cache

import polars as pl
import pytest
from scipy import stats

from analysis.calibration.controls import LevelBinnedNoise
from analysis.calibration.findings import calibration_findings, kind_of
from analysis.calibration.simulate import Tally, simulate_seeds
from analysis.calibration.world import WORLDS, study, true_verdicts, world
from analysis.stats.verdicts.status import Status

ALPHA = 0.05
#: The RNG seeds of the replays and the replays under each (fixed budget: two seeds a cell).
RNG = (48, 49)
REPLAYS = 100
#: A finding fails the test when more of its 200 replays are decided wrong than a 5% rate exceeds 1% of the time
#: (18 of 200: a 10% rate is caught 64% of the time, 15% all but always).
CRITICAL = int(stats.binom.ppf(0.99, REPLAYS * len(RNG), ALPHA))
#: The chance a finding wrong 10% of the time is caught: what "tells 5% from 10%" means here.
POWER = float(stats.binom.sf(CRITICAL, REPLAYS * len(RNG), 2 * ALPHA))
#: (world, budget, kind) measured wrong more often than stated, beyond chance (bench/calibration.py, 2 x 100 replays;
#: docs/budget.md, "Known gaps"): a single cell whose seeds split rarely (one in five learns), read on two seeds that
#: both landed on the common side, is decided with an interval its grid neighbours' seed noise cannot widen enough.
KNOWN_GAPS = {
    ("held_out", "fixed", "a split cell's G"): "39.0% [32.2, 46.1] of 200 replays",
    ("held_out", "fixed", "a split cell's G, at most"): "37.0% [30.3, 44.1]",
    ("hidden", "adaptive", "a split cell's G"): "13.0% [8.7, 18.5]",
    ("hidden", "adaptive", "a split cell's G, at most"): "11.5% [7.4, 16.8]",
}


def test_the_test_tells_5_from_10_percent() -> None:
    assert CRITICAL == 18 and POWER > 0.6  # 200 replays: 18 wrong (9%) is the line; a 10% rate is caught 64%


@pytest.mark.parametrize("name", sorted(WORLDS))
def test_every_bound_has_truths_on_both_sides_and_on_it(name: str) -> None:
    w = world(name)
    findings = calibration_findings(w)
    truths = [v.status for v in true_verdicts(study(findings, w), w)]
    kinds: dict[str, set[str]] = {}
    for finding, truth in zip(findings, truths, strict=True):
        kinds.setdefault(kind_of(finding), set()).add(truth)
    assert len(kinds) == 21 and all(seen == {Status.PASS, Status.FAIL} for seen in kinds.values()), kinds
    on_it = [t for f, t in zip(findings, truths, strict=True) if "+0 pp" in f.description]
    assert on_it == [Status.PASS] * 21  # bounds are inclusive: the truth on the bound satisfies it


@cache
def _tally(name: str, budget: str = "fixed", seeds: int = 2, replays: int = REPLAYS) -> Tally:
    w = world(name)
    return simulate_seeds(study(calibration_findings(w), w, budget, seeds), w, replays, RNG)


def _held(tally: Tally, name: str, budget: str, critical: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the findings over the critical count that are no known gap, the known gaps' rates)."""
    rates = tally.rates().with_columns(kind=pl.col("finding").str.split(" (truth").list.first())
    gap = pl.col("kind").is_in([k for w, b, k in KNOWN_GAPS if (w, b) == (name, budget)])
    return rates.filter(~gap, pl.col("wrong_count") > critical), rates.filter(gap)


@pytest.mark.slow  # a long simulation: a minute a world
@pytest.mark.parametrize("name", sorted(WORLDS))
def test_each_finding_is_wrong_no_more_often_than_stated_on_two_seeds(name: str) -> None:
    tally = _tally(name)
    over, gaps = _held(tally, name, "fixed", CRITICAL)
    shown = ("finding", "truth", "decided", "wrong", "wrong_low", "wrong_high")
    assert over.is_empty(), over.select(shown)
    # the known gaps still are: each kind's worst offset wrong beyond chance (else it is calibrated now: update)
    for kind, rows in gaps.group_by("kind"):
        assert rows.get_column("wrong_count").max() > CRITICAL, (kind, rows.select(shown))
    # and they decide: bounds 2 points from their truth get decided in some replays
    far = tally.rates().filter(pl.col("finding").str.contains(r"[+-]2 pp"))
    assert far.filter(pl.col("decided") > 0).height >= 10, far
    assert set(tally.wrong_by_seed) == set(RNG)


#: The adaptive budget (two seeds to start, up to five, four looks) in the hidden-split world: 2 x 50 replays.
ADAPTIVE_REPLAYS = 50
ADAPTIVE_CRITICAL = int(stats.binom.ppf(0.99, ADAPTIVE_REPLAYS * len(RNG), ALPHA))


@pytest.mark.slow  # a long simulation: minutes
def test_the_adaptive_budget_is_wrong_no_more_often_than_stated() -> None:
    tally = _tally("hidden", "adaptive", 5, ADAPTIVE_REPLAYS)
    over, gaps = _held(tally, "hidden", "adaptive", ADAPTIVE_CRITICAL)
    assert ADAPTIVE_CRITICAL == 11 and over.is_empty(), over
    for kind, rows in gaps.group_by("kind"):  # the known gaps still are over 5% (else they are calibrated now: update)
        assert rows.get_column("wrong").max() > ALPHA, (kind, rows)
    assert tally.models < 0.7  # with less than 70% of the models (two of five seeds to start: 40% at least)


@pytest.mark.slow  # a long simulation
@pytest.mark.parametrize(("control", "options"), [("seed noise understated 3x", {"sd_scale": 1 / 3}),
                                                  ("the prior grouped by observed G", {"noise": LevelBinnedNoise.fit})])
def test_the_negative_controls_are_caught(control: str, options: dict) -> None:
    """The findings where seeds split (the splitter's band, the cell that splits most), in the release's cells as they
    are, on two seeds: a wrong noise model decides them wrong far more often than 5% (measured 2 x 50 replays: 30 and
    29 of 100 against a critical 11)."""
    w = world("release")
    mixed = [f for f in calibration_findings(w) if "split" in f.description]
    tally = simulate_seeds(study(mixed, w, "fixed", seeds=2), w, 50, RNG, **options)
    worst = tally.rates().sort("wrong").tail(1)
    assert worst.get_column("wrong_count").item() > stats.binom.ppf(0.99, tally.replays, ALPHA), worst
