"""``gain``: a learning curve's gain from a stated time to its last evaluation within a band
(analysis/stats/kinds/gain.py): by hand, how often it is wrong by simulation, per seed, and its refusals."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

from analysis.stats.intervals.curves import Curve, curve
from analysis.stats.intervals.errors import Errors
from analysis.stats.kinds.gain import Gain, gain_of, value_at
from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.evaluate import evaluate_findings
from analysis.stats.verdicts.status import Status
from search_spaces import Finding, StudyError
from tests.test_findings import _meta

#: A bound's error at 95% confidence with two ends (the band's): 2.5% each.
END = Errors(0.025, 0.025)
BAND = Gain("ea", 0.0, 0.015)


def _curve(values: np.ndarray) -> Curve:
    """One cell's curve from per-seed values (seeds x evaluations), an evaluation every 100 epochs."""
    seeds, evaluations = values.shape
    return curve(pl.DataFrame({"seed": np.repeat(np.arange(seeds), evaluations),
                               "epoch": np.tile(100 * np.arange(1, evaluations + 1), seeds),
                               "val_accuracy": values.ravel()}), "val_accuracy", "epoch")


def test_the_gain_by_hand_where_every_seed_agrees() -> None:
    """The value at 250 is the evaluation at 200 (the last at or before it); the gain runs to the last one."""
    points = _curve(np.array([[0.5, 0.9, 0.95, 0.96]] * 4))
    assert value_at(points, 250, "val_accuracy", END).value == pytest.approx(0.9)
    assert value_at(points, 50, "val_accuracy", END).value is None  # no evaluation that early
    gained = gain_of(points, 250, "val_accuracy", END)
    assert (gained.value, gained.low, gained.high) == pytest.approx((0.06, 0.06, 0.06))
    assert Gain("ea", 0.0, 0.1).decide(gained) == (True, False)
    assert BAND.decide(gained) == (False, True)  # 6 points: more than 1.5
    assert Gain("ea", 0.06, 0.1).decide(gained) == (False, True)  # "more than 6": a tie is no gain beyond it


def _world(rng: np.random.Generator, gain: float, seeds: int = 16, sd: float = 0.01) -> Curve:
    """A curve at 90% until epoch 600 (6 evaluations), then ``gain`` higher to epoch 1000; seeds scattered by ``sd``
    independently at each evaluation."""
    truth = np.r_[np.full(6, 0.9), np.full(4, 0.9 + gain)]
    return _curve(truth + rng.normal(0, sd, (seeds, truth.size)))


WORLDS = 150


def test_no_gain_passes_and_a_gain_at_the_bound_fails_no_more_often_than_stated() -> None:
    """A wrong PASS at the band's lower edge (truly no gain: "increases" is false) needs the lower end wrong, at 2.5%;
    a wrong FAIL at its upper edge (truly 1.5 points, inside the band) needs it wholly above 1.5, at 2.5% too. Each at
    most 2.5% of the worlds plus the binomial slack. A gain of 5 points FAILs in most worlds, 0.7 points PASSes in
    most (16 seeds, 0.2-point noise)."""
    rng = np.random.default_rng(58)
    slack = stats.binom.ppf(0.99, WORLDS, 0.025)
    wrong_pass = sum(BAND.decide(gain_of(_world(rng, 0.0), 600, "val_accuracy", END))[0] for _ in range(WORLDS))
    wrong_fail = sum(BAND.decide(gain_of(_world(rng, 0.015), 600, "val_accuracy", END))[1] for _ in range(WORLDS))
    assert wrong_pass <= slack and wrong_fail <= slack, (wrong_pass, wrong_fail)
    far = sum(BAND.decide(gain_of(_world(rng, 0.05), 600, "val_accuracy", END))[1] for _ in range(20))
    near = sum(BAND.decide(gain_of(_world(rng, 0.007, sd=0.002), 600, "val_accuracy", END))[0] for _ in range(20))
    assert far >= 18 and near >= 18, (far, near)


def _verdict(curves: list[tuple[float, ...]], **fields: object) -> object:
    """The verdict of "NAP gains 0 to 1.5 points after epoch 2" on 5 seeds with the given curves (one per seed)."""
    rows = pl.DataFrame([{"architecture": "NAP", "d_model": 16, "learning_rate": 0.09, "seed": seed, "epoch": e + 1,
                          "step": 100 * (e + 1), "val_accuracy": v}
                         for seed, values in enumerate(curves) for e, v in enumerate(values)])
    keys = ["architecture", "d_model", "learning_rate"]
    cells = rows.group_by(*keys, "epoch").agg(g=pl.col("val_accuracy").mean(), sd=pl.col("val_accuracy").std(),
                                              n_seeds=pl.len()).sort("g", descending=True).group_by(keys).first()
    data = FindingData(cells={"val_accuracy": cells.drop("epoch")}, panel="architecture",
                       select_metric="val_accuracy", max_seeds=5, evaluations=rows)
    finding = {"description": "d", "gain": {"NAP": (0.0, 0.015)}, "gain_since": 2, **fields}
    (verdict,) = evaluate_findings(_meta([finding]), data)
    return verdict


def test_a_verdict_on_the_mean_curve_and_per_seed() -> None:
    """Every seed gains 0.5 points after epoch 2: PASS with its words; per seed (seeds_show 5), one seed gaining 3
    points: it does not show it, so "all 5" FAILs, "4 of 5" is open (6/32 by chance)."""
    same = _verdict([(0.5, 0.98, 0.985, 0.985)] * 5)
    assert same.status == Status.PASS, same.lines()
    assert same.checks[0].text() == ("NAP: gains +0.5 pp [+0.5, +0.5] pp (5 seeds) from epoch 2 to its last "
                                     "evaluation, required above +0.0 and at most +1.5 pp: holds")
    seeds = [(0.5, 0.98, 0.985, 0.985)] * 4 + [(0.5, 0.96, 0.99, 0.99)]
    assert _verdict(seeds, seeds_show=5).status == Status.FAIL
    assert _verdict(seeds, seeds_show=4).status == Status.UNDECIDED


@pytest.mark.parametrize(("fields", "message"), [
    ({"gain_since": None}, "gain_since of finding 'd' None; allowed: a epoch >= 0 with gain"),
    ({"gain": {}, "gain_since": 5, "above": {"NAP": 0.5}}, "gain_since of finding 'd' 5"),
    ({"gain": {"NAP": (0.02, 0.01)}}, "invalid gain {'NAP': (0.02, 0.01)}; allowed: a mapping panel value -> "
                                      "(least, most), two finite numbers, least < most"),
    ({"gain": {"NAP": 0.01}}, "invalid gain {'NAP': 0.01}"),
])
def test_a_bad_gain_is_refused_in_one_line(fields: dict, message: str) -> None:
    with pytest.raises(StudyError) as raised:
        Finding(**{"description": "d", "gain": {"NAP": (0.0, 0.015)}, "gain_since": 2500, **fields})
    assert message in str(raised.value) and "\n" not in str(raised.value)
