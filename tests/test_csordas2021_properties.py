"""csordas2021.matches / .cost / .data: what the paper says its geometric attention and its data set are, measured
without training (trainables/csordas2021/properties.py): Eq. 7 scaling down the more distant matches, the attention's
work against N, and the CTL splits' sizes and depths."""

from __future__ import annotations

import math
from collections import Counter

import polars as pl
import pytest
import torch

from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.evaluate import evaluate_findings
from analysis.stats.verdicts.status import Status
from search_spaces import get_study
from search_spaces.record import StudyRecord
from trainables.catalog import family_for_task
from trainables.csordas2021.ctl import generate
from trainables.csordas2021.geometric import GeometricAttention
from trainables.csordas2021.properties import (
    MATCH_LOGIT,
    attention_cost,
    cost_measures,
    match_measures,
    match_weights,
    side_measures,
    split_measures,
    work,
)
from trainables.pooling_scale.config import PoolingScaleConfig

MEASURES = {"ndr_matches": match_measures, "ndr_cost": cost_measures, "ndr_sides": side_measures,
            "ctl_splits": split_measures}


def _config(task: str, pooling: str, n: int, **kw: int) -> PoolingScaleConfig:
    return PoolingScaleConfig.from_dict({"task": task, "pooling": pooling, "seq_len": n, **kw})


def test_eq7_scales_the_farther_match_by_one_minus_the_nearer_s_p() -> None:
    """Query 0, matches at keys 1 and 2, nothing else: geometric A_02 = P_02 (1 - P_01), or P_02 with key 1 masked, so
    the farther match keeps 1 - sigmoid(4) = 0.018 of its weight; A_01 = P_01 either way; P alone keeps both."""
    logits = torch.full((1, 3, 3), -50.0, dtype=torch.float64)
    logits[0, 0, 1] = logits[0, 0, 2] = MATCH_LOGIT
    every, without_near = torch.ones(1, 3, 3, dtype=torch.bool), torch.ones(1, 3, 3, dtype=torch.bool)
    without_near[0, 0, 1] = False
    p = 1 / (1 + math.exp(-MATCH_LOGIT))
    a, b = match_weights(logits, every, "geometric"), match_weights(logits, without_near, "geometric")
    assert float(a[0, 0, 2]) == pytest.approx(p * (1 - p)) and float(b[0, 0, 2]) == pytest.approx(p)
    assert float(a[0, 0, 1]) == pytest.approx(p)
    assert float(match_weights(logits, every, "sigmoid")[0, 0, 2]) == pytest.approx(p)


@pytest.mark.parametrize("n", [3, 4, 16])
def test_the_match_measures(n: int) -> None:
    """Random other keys cancel in each ratio: geometric 1 - sigmoid(4) for the farther match in every sequence and
    exactly 1 for the nearer; P alone 1 and 1."""
    geometric = match_measures(_config("ndr_matches", "geometric", n, d_head=8, n_vectors=32 * n), seed=1)
    assert geometric["far_match_scale"] == pytest.approx(1 / (1 + math.exp(MATCH_LOGIT)), rel=1e-9)
    assert geometric["near_match_scale"] == pytest.approx(1.0, abs=1e-12)
    plain = match_measures(_config("ndr_matches", "sigmoid", n, d_head=8, n_vectors=32 * n), seed=1)
    assert plain == pytest.approx({"far_match_scale": 1.0, "near_match_scale": 1.0}, abs=1e-12)


def test_work_by_hand() -> None:
    """A (3 x 4) times (4 x 5) product: 60 multiply-adds; its exp writes 15 elements; a transpose (a view) none."""
    a, b = torch.ones(3, 4), torch.ones(4, 5)
    assert work(lambda: a @ b) == 60
    assert work(lambda: (a @ b).exp()) == 75
    assert work(lambda: (a @ b).t()) == 60


def test_work_on_meta_tensors_is_the_real_forward_s() -> None:
    mixer, x = GeometricAttention(16, 1).eval(), torch.randn(1, 8, 16)
    with torch.device("meta"):
        meta = GeometricAttention(16, 1).eval()
        x_meta = torch.zeros(1, 8, 16)
    assert work(lambda: meta(x_meta)) == work(lambda: mixer(x)) > 0


def test_the_slope_sees_how_the_work_grows() -> None:
    """An elementwise N x N x N product has slope 3, a vector op 1; attention is about 1 at small N (the d^2 N
    projections) and 2 at large N (the d N^2 products)."""
    def slope(f: object) -> float:
        return math.log2(work(lambda: f(64)) / work(lambda: f(32)))  # type: ignore[operator]

    cube = slope(lambda n: torch.ones(n, 1, 1) * torch.ones(1, n, 1) * torch.ones(1, 1, n))
    assert cube == pytest.approx(3.0, abs=0.05)
    assert slope(lambda n: torch.ones(n).exp()) == pytest.approx(1.0)
    small = cost_measures(_config("ndr_cost", "geometric", 4, d_head=256, n_vectors=16), seed=0)["cost_slope"]
    large = cost_measures(_config("ndr_cost", "geometric", 16384, d_head=256, n_vectors=16384), seed=0)
    assert small < 1.1 and 1.95 < large["cost_slope"] < 2.05
    assert large["cost"] == attention_cost("geometric", 256, 16384)


def test_the_side_feature_restricts_each_query_and_nothing_else_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the direction layer on the side feature every query (but the ends' on their empty side) keeps >= 99% on
    its side; with the layer's weight 0 (the term gives no side) the worst query keeps far less, and N = 2 by hand:
    query 0 can look only right, query 1 only left, each all its weight on its one key."""
    config = _config("ndr_sides", "geometric", 16, d_head=256, n_vectors=1024)
    assert side_measures(config, seed=0)["side_share"] > 0.998
    assert side_measures(_config("ndr_sides", "geometric", 2, d_head=256, n_vectors=64), seed=0)["side_share"] == 1.0
    monkeypatch.setattr("trainables.csordas2021.properties.SIDE_WEIGHT", 0.0)
    assert side_measures(config, seed=0)["side_share"] < 0.5


def test_the_splits() -> None:
    """The release's sets: 53,704 train samples (88 single functions + 480 j/k repeats at depth 1), depth 2-5 from
    the IID pool, 6-8 and 9-10 in the depth sets."""
    data = generate()
    train = Counter(len(s.cmd) for s in data.train)
    assert sorted(train) == [1, 2, 3, 4, 5] and train[1] == 88 + 480 and sum(train.values()) == 53_704
    measured = split_measures(_config("ctl_splits", "train", 13), seed=0)
    assert measured == {"n_samples": 53_704.0, "min_depth": 1.0, "max_depth": 5.0, "n_depths": 5.0,
                        "depth_balance": min(train.values()) / max(train.values())}
    assert measured["depth_balance"] < 0.05  # far from balanced: the small depths run out of distinct samples
    assert split_measures(_config("ctl_splits", "depth_valid", 13), seed=0) == {
        "n_samples": 1000.0, "min_depth": 6.0, "max_depth": 8.0, "n_depths": 3.0, "depth_balance": 327 / 343}
    test = split_measures(_config("ctl_splits", "depth_test", 13), seed=0)
    assert (test["min_depth"], test["max_depth"], test["depth_balance"]) == (9.0, 10.0, 486 / 514)


def test_validation_and_the_family() -> None:
    with pytest.raises(ValueError, match="invalid pooling='softmax'; allowed: geometric, sigmoid"):
        _config("ndr_matches", "softmax", 4)
    with pytest.raises(ValueError, match="invalid seq_len=2"):
        _config("ndr_matches", "geometric", 2)
    with pytest.raises(ValueError, match="invalid seq_len=1; allowed: 2 or more with task ndr_sides"):
        _config("ndr_sides", "geometric", 1, n_vectors=8)
    with pytest.raises(ValueError, match="invalid seq_len=12"):
        _config("ctl_splits", "train", 12)
    with pytest.raises(ValueError, match="invalid pooling='valid'; allowed: train, depth_valid, depth_test"):
        _config("ctl_splits", "valid", 13)
    assert "d_head" not in _config("ctl_splits", "train", 13).resolved()
    result = family_for_task("ndr_matches").train([_config("ndr_matches", "geometric", 4, n_vectors=16)], [0, 1])
    assert [r["seed"] for r in result.rows] == [0, 1] and all("far_match_scale" in r for r in result.rows)


def _data(name: str) -> tuple[StudyRecord, FindingData]:
    study = get_study(name)
    task = study.tasks[0]
    axes = [a for a in ("pooling", "seq_len") if a in study.scientific]
    points = [{"pooling": p, "seq_len": n} for p in study.axis_values("pooling")
              for n in (study.axis_values("seq_len") if "seq_len" in axes else (study.fixed["seq_len"],))]
    fixed = {k: v for k, v in study.fixed.items() if k != "seq_len"}
    measured = {(p["pooling"], p["seq_len"], seed): MEASURES[task](
        _config(task, p["pooling"], p["seq_len"], **fixed), seed) for p in points for seed in study.seeds}
    frame = pl.DataFrame([{"pooling": p, "seq_len": n, "seed": s, **m} for (p, n, s), m in measured.items()])
    metrics = [c for c in frame.columns if c not in ("pooling", "seq_len", "seed")]
    cells = {m: frame.group_by("pooling", "seq_len").agg(
        pl.col(m).mean().alias("g"), pl.col(m).std().alias("sd"), pl.len().alias("n_seeds")) for m in metrics}
    return StudyRecord.of(study), FindingData(cells=cells, panel="pooling", select_metric=study.metric,
                                              max_seeds=len(study.seeds))


def _statuses(record: StudyRecord, data: FindingData) -> list[Status]:
    return [v.status for v in evaluate_findings(record, data)]


def test_the_match_findings_pass_and_fail_turned_round() -> None:
    record, data = _data("csordas2021.matches")
    assert _statuses(record, data) == [Status.PASS] * 3
    study = get_study("csordas2021.matches")
    f = study.findings
    wrong = study.replace(findings=(f[0].replace(below={"sigmoid": 0.1}), f[2].replace(above={"geometric": 0.99})))
    assert _statuses(StudyRecord.of(wrong), data) == [Status.FAIL] * 2


def test_the_cost_findings_pass_and_fail_at_small_n() -> None:
    record, data = _data("csordas2021.cost")
    assert _statuses(record, data) == [Status.PASS] * 2
    study = get_study("csordas2021.cost")
    small = study.replace(findings=tuple(f.replace(where={"seq_len": (16,)}) for f in study.findings[:1]))
    assert _statuses(StudyRecord.of(small), data) == [Status.FAIL]  # slope ~1 where the projections dominate


def test_the_side_finding_passes_and_fails_at_a_stricter_bound() -> None:
    record, data = _data("csordas2021.sides")
    assert _statuses(record, data) == [Status.PASS]
    study = get_study("csordas2021.sides")
    strict = study.replace(findings=(study.findings[0].replace(above={"geometric": 0.99999}),))
    assert _statuses(StudyRecord.of(strict), data) == [Status.FAIL]  # the worst query keeps 99.87-99.91%


def test_the_data_findings_the_size_and_depths_pass_the_balance_fails() -> None:
    record, data = _data("csordas2021.data")
    assert _statuses(record, data) == [Status.PASS, Status.FAIL, Status.PASS, Status.PASS, Status.PASS]
    study = get_study("csordas2021.data")
    f = study.findings
    turned = study.replace(findings=(f[0].replace(above={"train": 53704.5}, below={"train": 53705.5}),
                                     f[1].replace(above={"depth_valid": 0.5, "depth_test": 0.5})))
    assert _statuses(StudyRecord.of(turned), data) == [Status.FAIL, Status.PASS]
