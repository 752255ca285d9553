"""The measurement family (Fig. 1 / App. B): output scale of each pooling vs sequence length, no training."""

from __future__ import annotations

import math

import pytest
import torch

from trainables.catalog import family_for_task
from trainables.pooling_scale.config import POOLINGS, PoolingScaleConfig
from trainables.pooling_scale.scale import pooled, pooling_output_scale


def _config(pooling: str, n: int, **kw: int) -> PoolingScaleConfig:
    return PoolingScaleConfig.from_dict({"task": "pooling_scale", "pooling": pooling, "seq_len": n,
                                         "d_head": 32, "n_vectors": 4096, **kw})


def _std(pooling: str, n: int) -> float:
    return pooling_output_scale(_config(pooling, n), seed=0)["output_std"]


def test_mean_falls_sum_grows_normalized_constant() -> None:
    for n in (4, 64):
        assert _std("mean", n) == pytest.approx(1 / math.sqrt(n), rel=0.1)
        assert _std("sum", n) == pytest.approx(math.sqrt(n), rel=0.1)
        assert _std("normalized", n) == pytest.approx(1.0, rel=0.02)
    # softmax attention at init behaves like mean pooling for longer sequences
    assert _std("softmax", 256) < 0.2 < _std("softmax", 2)
    # the max of more N(0,1) samples is larger and less spread
    big, small = (pooling_output_scale(_config("max", n), seed=0) for n in (64, 4))
    assert big["output_std"] < small["output_std"] and big["output_norm"] > small["output_norm"]


def test_non_weighting_keeps_the_context_contribution_independent_of_n() -> None:
    """NON (Sec. 4): the raw logits as weights and the sum scaled by 1 / sqrt(N) give an output std of 1 at every N,
    where the same logits through a softmax fall with N and an unscaled sum of them grows like sqrt(N)."""
    for n in (1, 16, 256):
        assert _std("non", n) == pytest.approx(1.0, rel=0.03)
    assert _std("softmax", 256) < 0.2
    g = torch.Generator().manual_seed(0)  # the draws in pooled's order: values, then queries and keys
    v = torch.randn(256, 16, 32, generator=g)  # (S, N, d_h)
    q, k = torch.randn(256, 16, 32, generator=g), torch.randn(256, 16, 32, generator=g)
    by_hand = (q @ k.transpose(1, 2) / math.sqrt(32)) @ v / 4  # 1 / sqrt(N), N = 16
    assert torch.allclose(pooled(_config("non", 16), seed=0), by_hand.reshape(-1, 32))


def test_the_reduce_poolings_are_the_registry_mixers_on_the_same_draws() -> None:
    """sum / mean / max go through trainables.mixers; the same draws reduced by hand give the same numbers."""
    v = torch.randn(4096 // 16, 16, 32, generator=torch.Generator().manual_seed(3))  # (S, N, d_h)
    for name, reduce in (("sum", v.sum(dim=1)), ("mean", v.mean(dim=1)), ("max", v.amax(dim=1))):
        assert torch.equal(pooled(_config(name, 16), seed=3), reduce)


def test_a_normalised_pooling_is_that_pooling_on_its_own_draws_standardised_per_vector() -> None:
    """App. B's normalisation applied to mean, max and softmax: the base pooling's output (the same draws), each
    vector standardised over d_h by hand; the sum's ("normalized") the same way; every one std 1 at N = 1 and 64."""
    for base in ("mean", "max", "softmax", "sum"):
        out = pooled(_config(base, 16), seed=2)
        std, mean = torch.std_mean(out, dim=-1, correction=0, keepdim=True)
        name = "normalized" if base == "sum" else f"normalized_{base}"
        assert torch.allclose(pooled(_config(name, 16), seed=2), (out - mean) / std)
        for n in (1, 64):
            assert _std(name, n) == pytest.approx(1.0, abs=1e-3)
    assert _std("max", 64) < 0.5 and _std("softmax", 64) < 0.2  # unnormalised, they are not 1


def test_norm_and_validation() -> None:
    out = pooling_output_scale(_config("normalized", 16, n_vectors=1024), seed=1)
    assert set(out) == {"output_std", "output_std_log10", "output_norm"}
    assert out["output_std_log10"] == pytest.approx(math.log10(out["output_std"]))
    assert out["output_norm"] == pytest.approx(math.sqrt(32), rel=1e-3)
    assert POOLINGS == ("softmax", "mean", "sum", "max", "normalized", "non", "normalized_mean", "normalized_max",
                        "normalized_softmax")
    with pytest.raises(ValueError, match="invalid pooling='median'; allowed: softmax, mean, sum, max, normalized, non, "
                                         "normalized_mean, normalized_max, normalized_softmax"):
        _config("median", 4)
    with pytest.raises(ValueError, match="invalid seq_len=3; allowed: a positive divisor of n_vectors=4096"):
        _config("sum", 3)
    with pytest.raises(ValueError, match="invalid hyperparameter 'learning_rate'"):
        PoolingScaleConfig.from_dict({"task": "pooling_scale", "pooling": "sum", "seq_len": 4, "learning_rate": 0.1})


def test_the_family_writes_one_row_per_seed_through_the_row_writer() -> None:
    family = family_for_task("pooling_scale")
    seen: list[dict] = []
    result = family.train([_config("sum", 8)], [0, 1], device="cuda:0", on_eval=seen.append)
    assert [(r["seed"], r["step"], r["epoch"], r["status"], r["n_params"], r["device"]) for r in result.rows] == [
        (0, 0, 0, "ok", 0, "cpu"), (1, 0, 0, "ok", 0, "cpu")]  # measured on the CPU wherever the trial runs
    assert seen == result.rows and result.artifacts == {}
    assert result.rows[1]["output_std"] == pooling_output_scale(_config("sum", 8), seed=1)["output_std"]
    assert all(r["wall_time_s"] >= 0 for r in result.rows)
    with pytest.raises(ValueError, match="a measurement has no learning rate"):
        family.train([_config("sum", 8)] * 2, [0])
