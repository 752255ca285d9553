"""Fig. 1 / App. B measurement: output scale of each pooling vs sequence length."""

from __future__ import annotations

import math

import pytest

from trainables.measure import POOLINGS, pooling_output_scale


def _std(pooling: str, n: int) -> float:
    return pooling_output_scale(pooling, n, seed=0, d_head=32, n_vectors=4096)["output_std"]


def test_mean_falls_sum_grows_normalized_constant() -> None:
    for n in (4, 64):
        assert _std("mean", n) == pytest.approx(1 / math.sqrt(n), rel=0.1)
        assert _std("sum", n) == pytest.approx(math.sqrt(n), rel=0.1)
        assert _std("normalized", n) == pytest.approx(1.0, rel=0.02)
    # softmax attention at init behaves like mean pooling for longer sequences
    assert _std("softmax", 256) < 0.2 < _std("softmax", 2)
    # the max of more N(0,1) samples is larger and less spread
    big, small = (pooling_output_scale("max", n, seed=0, d_head=32, n_vectors=4096) for n in (64, 4))
    assert big["output_std"] < small["output_std"] and big["output_norm"] > small["output_norm"]


def test_norm_and_validation() -> None:
    out = pooling_output_scale("normalized", 16, seed=1, d_head=32, n_vectors=1024)
    assert set(out) == {"output_std", "output_norm"}
    assert out["output_norm"] == pytest.approx(math.sqrt(32), rel=1e-3)
    assert POOLINGS == ("softmax", "mean", "sum", "max", "normalized")
    with pytest.raises(ValueError, match="unknown pooling 'median'"):
        pooling_output_scale("median", 4, seed=0)
    with pytest.raises(ValueError, match="invalid seq_len=3"):
        pooling_output_scale("sum", 3, seed=0)
