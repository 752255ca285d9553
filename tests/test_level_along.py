"""``level_along``: two panel values' learning curves within a margin of each other at every shared evaluation
(analysis/stats/kinds/level_along.py): the gaps by hand, how often it is wrong by simulation, its verdicts through a
study, and its refusals."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

from analysis.stats.intervals.curves import Curve, curve
from analysis.stats.intervals.errors import Errors
from analysis.stats.kinds.level_along import gaps
from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.evaluate import evaluate_findings
from analysis.stats.verdicts.status import Status
from search_spaces import Finding, StudyError
from tests.test_findings import _meta

#: Each side's error at 95% confidence: two ends (2.5% each), each shared by the difference's two sides.
SIDE = Errors(0.0125, 0.0125)
EVERY = 10


def _curve(values: np.ndarray) -> Curve:
    """One cell's curve from per-seed values (seeds x evaluations), an evaluation every ``EVERY`` epochs."""
    seeds, evaluations = values.shape
    rows = pl.DataFrame({"seed": np.repeat(np.arange(seeds), evaluations),
                         "epoch": np.tile(EVERY * np.arange(1, evaluations + 1), seeds),
                         "val_accuracy": values.ravel()})
    return curve(rows, "val_accuracy", "epoch")


def test_the_gaps_by_hand_where_every_seed_agrees() -> None:
    """Seeds that agree exactly decide on the number alone: the gaps are the means' differences, at the evaluations
    both curves have (B has no evaluation at epoch 40)."""
    a = _curve(np.array([[0.5, 0.9, 1.0, 1.0]] * 4))
    b = _curve(np.array([[0.5, 0.8, 1.0]] * 4))
    found = gaps(a, b, "val_accuracy", (SIDE, SIDE))
    assert list(found.times) == [10.0, 20.0, 30.0]
    assert found.gap == pytest.approx([0.0, 0.1, 0.0])
    assert found.low == pytest.approx([0.0, 0.1, 0.0]) and found.sure_high == pytest.approx([0.0, 0.1, 0.0])
    assert found.widest() == 1 and found.seeds == (4, 4)
    assert found.holds(0.1 + 1e-12) and not found.fails(0.1 + 1e-12)  # within 10 points at every evaluation
    assert found.fails(0.05) and not found.holds(0.05)  # 10 points apart at epoch 20: outside 5


def test_the_intervals_come_from_each_curves_seed_noise() -> None:
    """With seed noise each gap's interval holds its observed gap, the FAIL's (shared over the evaluations) wider
    than the PASS's (each evaluation at the whole error)."""
    rng = np.random.default_rng(1)
    base = np.array([0.5, 0.7, 0.9, 0.95, 0.95])
    a, b = (_curve(np.clip(base + rng.normal(0, 0.02, (8, 5)), 0, 1)) for _ in range(2))
    found = gaps(a, b, "val_accuracy", (SIDE, SIDE))
    assert np.all(found.low <= found.gap) and np.all(found.gap <= found.high)
    assert np.all(found.sure_low <= found.low) and np.all(found.high <= found.sure_high)
    assert np.all(found.high - found.low > 0.01)


def _world(rng: np.random.Generator, shift: np.ndarray, seeds: int = 8, sd: float = 0.02) -> tuple[Curve, Curve]:
    """B's true curve a rise to 80%, A's B's plus ``shift`` per evaluation (all within 0-100%); each seed scattered by
    ``sd``."""
    truth = np.array([0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.8, 0.8, 0.8, 0.8])
    b = truth + rng.normal(0, sd, (seeds, truth.size))
    a = truth + shift + rng.normal(0, sd, (seeds, truth.size))
    return _curve(a), _curve(b)


MARGIN = 0.05
WORLDS = 80


def test_curves_apart_by_the_margin_at_one_evaluation_pass_no_more_often_than_stated() -> None:
    """The edge of "not level": the curves equal except at one evaluation, where A is exactly the margin above B. A
    PASS there is wrong; the end that can make it so is read at 2.5% (each side at 1.25%), so it may happen in at most
    2.5% of the worlds plus the binomial slack. And where they are apart by three margins there, it FAILs."""
    rng = np.random.default_rng(58)
    at_edge = np.zeros(10)
    at_edge[4] = MARGIN
    passes = sum(gaps(*_world(rng, at_edge), "val_accuracy", (SIDE, SIDE)).holds(MARGIN) for _ in range(WORLDS))
    assert passes <= stats.binom.ppf(0.99, WORLDS, 0.025), passes
    far = 3 * at_edge
    fails = sum(gaps(*_world(rng, far), "val_accuracy", (SIDE, SIDE)).fails(MARGIN) for _ in range(WORLDS // 5))
    assert fails >= 0.9 * (WORLDS // 5), fails


def test_curves_within_the_margin_everywhere_fail_no_more_often_than_stated() -> None:
    """The edge of "level": A exactly the margin above B at every evaluation. A FAIL there is wrong; it needs some
    evaluation's interval, shared over the evaluations, wholly above the margin: at most 2.5% of the worlds plus the
    slack. Identical curves PASS in most worlds (16 seeds, 1-point noise)."""
    rng = np.random.default_rng(59)
    fails = sum(gaps(*_world(rng, np.full(10, MARGIN)), "val_accuracy", (SIDE, SIDE)).fails(MARGIN)
                for _ in range(WORLDS))
    assert fails <= stats.binom.ppf(0.99, WORLDS, 0.025), fails
    passes = sum(gaps(*_world(rng, np.zeros(10), seeds=16, sd=0.01), "val_accuracy", (SIDE, SIDE)).holds(MARGIN)
                 for _ in range(WORLDS // 5))
    assert passes >= 0.9 * (WORLDS // 5), passes


def _verdict(a: list[float], b: list[float], margin: float, **fields: object) -> object:
    """The verdict of "NAP level with NON all along" on 5 seeds a side whose curves all follow ``a`` and ``b``."""
    rows = pl.DataFrame([{"architecture": arch, "d_model": 16, "learning_rate": 0.09, "seed": seed,
                          "epoch": e + 1, "step": 100 * (e + 1), "val_accuracy": v}
                         for arch, values in (("NAP", a), ("NON", b)) for seed in range(5)
                         for e, v in enumerate(values)])
    keys = ["architecture", "d_model", "learning_rate"]
    per_epoch = rows.group_by(*keys, "epoch").agg(g=pl.col("val_accuracy").mean(), sd=pl.col("val_accuracy").std(),
                                                  n_seeds=pl.len())
    cells = per_epoch.sort("g", descending=True).group_by(keys).first().drop("epoch")
    data = FindingData(cells={"val_accuracy": cells}, panel="architecture", select_metric="val_accuracy",
                       max_seeds=5, evaluations=rows)
    finding = {"description": "d", "level_along": {"NAP": ("NON",)}, "equivalence_margin": margin, **fields}
    (verdict,) = evaluate_findings(_meta([finding]), data)
    return verdict


def test_a_verdict_reads_the_whole_curve_not_its_end() -> None:
    """Both end at 99%, so their best G are level; but NON lags 40 points at epoch 2: not level along the curve."""
    same = _verdict([0.3, 0.8, 0.99, 0.99], [0.3, 0.8, 0.99, 0.99], 0.05)
    lagging = _verdict([0.3, 0.8, 0.99, 0.99], [0.3, 0.4, 0.99, 0.99], 0.05)
    assert (same.status, lagging.status) == (Status.PASS, Status.FAIL), (same.lines(), lagging.lines())
    (check,) = lagging.checks
    assert check.relation == "level_along" and check.estimate.value == pytest.approx(0.4)
    assert check.text() == ("NAP: largest gap +40.0 pp at epoch 2, the gaps over 4 shared evaluations within "
                            "[+0.0, +40.0] pp (5 seeds), required within 5.0 pp of NON's at every evaluation: fails")


def test_published_levels_without_curves_leave_it_not_checked() -> None:
    rows = pl.DataFrame({"architecture": ["NAP", "NON"], "d_model": [16, 16], "learning_rate": [0.09, 0.09],
                         "g": [0.99, 0.99], "sd": [None, None], "n_seeds": [5, 5]})
    data = FindingData(cells={"val_accuracy": rows}, panel="architecture", select_metric="val_accuracy", max_seeds=5)
    finding = {"description": "d", "level_along": {"NAP": ("NON",)}, "equivalence_margin": 0.05}
    (verdict,) = evaluate_findings(_meta([finding]), data)
    assert verdict.status == Status.NOT_CHECKED and "time-axis" in verdict.reason


@pytest.mark.parametrize(("fields", "message"), [
    ({}, "equivalence_margin of finding 'd' None; allowed: a number >= 0 with level_with, not_ahead or level_along"),
    ({"equivalence_margin": 0.05, "cell": "any"}, "cell of finding 'd' 'any'; allowed: best"),
    ({"equivalence_margin": 0.05, "seeds_show": 3}, "seeds_show of finding 'd' 3; allowed: None"),
    ({"equivalence_margin": 0.05, "level_along": {"NAP": ("NAP",)}}, "level_along of finding 'd'"),
])
def test_a_bad_level_along_is_refused_in_one_line(fields: dict, message: str) -> None:
    with pytest.raises(StudyError) as raised:
        Finding(**{"description": "d", "level_along": {"NAP": ("NON",)}, **fields})
    assert message in str(raised.value) and "\n" not in str(raised.value)
