"""yun2020.theory: Yun et al.'s two theory items measured on the registry's mixers as initialised (task
``token_mixing``): averaging is not a contextual mapping, softmax approaches hardmax as its logits are scaled up."""

from __future__ import annotations

import polars as pl
import pytest
import torch

from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.evaluate import evaluate_findings
from analysis.stats.verdicts.status import Status
from search_spaces import get_study
from search_spaces.record import StudyRecord
from trainables.catalog import family_for_task
from trainables.pooling_scale.config import PoolingScaleConfig
from trainables.pooling_scale.mixing import build, mix, mixing_measures

METRICS = ("distinct_outputs", "distinct_share", "token_collision", "context_collision", "max_weight")


def _config(pooling: str, n: int, scale: float = 1.0, **kw: int) -> PoolingScaleConfig:
    return PoolingScaleConfig.from_dict({"task": "token_mixing", "pooling": pooling, "seq_len": n,
                                         "logit_scale": scale, "d_head": 32, "n_vectors": 512, **kw})


def test_average_gives_one_output_per_sequence_and_the_same_in_both_contexts() -> None:
    for n in (4, 16):
        for scale in (1.0, 1000.0):  # constant logits: no factor changes them
            m = mixing_measures(_config("average", n, scale), seed=0)
            assert m == {"distinct_outputs": 1.0, "distinct_share": 1 / n, "token_collision": 1.0,
                         "context_collision": 1.0, "max_weight": 1 / n}


def test_softmax_as_initialised_tells_tokens_and_contexts_apart_and_is_far_from_hardmax() -> None:
    m = mixing_measures(_config("softmax", 16), seed=0)
    assert m["distinct_outputs"] == 16.0 and m["distinct_share"] == 1.0
    assert m["token_collision"] == 0.0 and m["context_collision"] == 0.0
    assert 1 / 16 < m["max_weight"] < 0.2


def test_softmax_weights_approach_the_argmax_one_hot_as_the_scale_grows() -> None:
    weights = [mixing_measures(_config("softmax", 16, s), seed=1)["max_weight"] for s in (1.0, 10.0, 100.0, 1000.0)]
    assert weights == sorted(weights) and weights[0] < 0.2 and weights[-1] > 0.99
    # near hardmax, queries with the same argmax key share an output: hardmax alone is no contextual mapping either
    assert mixing_measures(_config("softmax", 16, 1000.0), seed=1)["distinct_share"] < 0.9


def test_the_measurement_runs_the_registry_mixers() -> None:
    """At logit scale 1 the measured outputs are the mixers' own forward (softmax: the fused kernel; average: its
    mean-then-project); a scaled softmax is the mixer's weights on scaled queries."""
    x = torch.randn(8, 8, 32, generator=torch.Generator().manual_seed(0))
    for name in ("average", "softmax"):
        mixer = build(_config(name, 8), seed=2)
        with torch.no_grad():
            out, a = mix(mixer, x, 1.0)
            assert torch.allclose(out, mixer(x), atol=1e-6)
            assert torch.allclose(a.sum(dim=-1), torch.ones(8, 8))
    softmax = build(_config("softmax", 8), seed=2)
    with torch.no_grad():
        q, k, _ = softmax.project(x)
        by_hand = torch.softmax(3.0 * q @ k.transpose(-2, -1) / 32**0.5, dim=-1)[:, 0]  # (S, N, N), one head
        assert torch.allclose(mix(softmax, x, 3.0)[1], by_hand, atol=1e-6)
    assert torch.equal(build(_config("softmax", 8), seed=2).qkv.weight, softmax.qkv.weight)  # seeded init


def test_validation() -> None:
    with pytest.raises(ValueError, match="invalid pooling='mean'; allowed: average, softmax"):
        _config("mean", 4)
    with pytest.raises(ValueError, match="invalid seq_len=2; allowed: 3 or more with task token_mixing"):
        _config("softmax", 2)
    with pytest.raises(ValueError, match="invalid logit_scale=0.0; allowed"):
        _config("softmax", 4, 0.0)
    with pytest.raises(ValueError, match="invalid logit_scale=2.0; allowed: 1 with task pooling_scale"):
        PoolingScaleConfig.from_dict({"task": "pooling_scale", "pooling": "sum", "seq_len": 4, "logit_scale": 2.0})
    fig1 = PoolingScaleConfig.from_dict({"task": "pooling_scale", "pooling": "sum", "seq_len": 4})
    assert "logit_scale" not in fig1.resolved()  # Fig. 1's rows keep their columns
    assert _config("softmax", 4, 10.0).resolved()["logit_scale"] == 10.0


def test_the_family_writes_the_four_measures_per_seed() -> None:
    family = family_for_task("token_mixing")
    assert family.name == "pooling_scale"
    result = family.train([_config("softmax", 8)], [0, 1], device="cpu")
    assert [r["seed"] for r in result.rows] == [0, 1]
    assert all(set(METRICS) <= set(r) for r in result.rows)
    assert result.rows[1]["max_weight"] == mixing_measures(_config("softmax", 8), seed=1)["max_weight"]


def _data(study_name: str = "yun2020.theory") -> tuple[StudyRecord, FindingData]:
    study = get_study(study_name)
    rows = [{"pooling": p, "seq_len": n, "logit_scale": s, "seed": seed,
             **mixing_measures(_config(p, n, s, d_head=128, n_vectors=1024), seed)}
            for p in study.axis_values("pooling") for n in study.axis_values("seq_len")
            for s in study.axis_values("logit_scale") for seed in study.seeds]
    frame = pl.DataFrame(rows)
    cells = {m: frame.group_by("pooling", "seq_len", "logit_scale").agg(
        pl.col(m).mean().alias("g"), pl.col(m).std().alias("sd"), pl.len().alias("n_seeds")) for m in METRICS}
    return StudyRecord.of(study), FindingData(cells=cells, panel="pooling", select_metric="max_weight", max_seeds=5)


def test_the_theory_findings_pass_on_the_measurement_and_fail_turned_round() -> None:
    """Every finding PASSes on the study's grid (a quarter of the vectors per seed here); the hardmax bound at a tiny
    scale, the contextual bounds on the other mixer, and average attention as if it were contextual all FAIL."""
    record, data = _data()
    verdicts = evaluate_findings(record, data)
    assert [v.status for v in verdicts] == [Status.PASS] * 6, [line for v in verdicts for line in v.lines()]
    study = get_study("yun2020.theory")
    f = study.findings
    wrong = study.replace(findings=(
        f[4].replace(where={"logit_scale": (1.0,)}),  # softmax as initialised is not near hardmax
        f[4].replace(where={"logit_scale": (10.0,)}),  # nor at scale 10 (0.52-0.79)
        f[1].replace(below={"average": 0.01}),  # average does not map a context's tokens apart
        f[3].replace(below={"average": 0.01}),  # nor the two contexts
        f[0].replace(above={"softmax": 0.99}, where={"logit_scale": (1.0,)}),  # softmax gives N outputs, not one
        f[2].replace(above={"softmax": 0.99}, where={"logit_scale": (1.0,)}),
    ))
    assert [v.status for v in evaluate_findings(StudyRecord.of(wrong), data)] == [Status.FAIL] * 6


def test_theory_scales() -> None:
    assert get_study("yun2020.theory").trial_count() == 2 * 3 * 4
    smoke = get_study("yun2020.theory", "smoke")
    assert smoke.trial_count() == 2 * 2 * 2 and smoke.seeds == (0, 1)
