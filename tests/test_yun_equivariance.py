"""yun2020.equivariance: Yun et al.'s Claim 1 (App. A) measured on stacks of the project's Transformer blocks as
initialised (task ``equivariance``): f(PX) = P f(X) without positional encoding, not with it."""

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
from trainables.mixers import build_mixer
from trainables.pooling_scale.config import PoolingScaleConfig
from trainables.pooling_scale.context import initialised_model
from trainables.pooling_scale.equivariance import (
    LAYERS,
    encode,
    equivariance_measures,
    equivariant_share,
    permutations,
)

METRICS = ("equivariant_share", "positional_equivariant_share")


def _config(architecture: str, n: int, **kw: int) -> PoolingScaleConfig:
    return PoolingScaleConfig.from_dict({"task": "equivariance", "pooling": architecture, "seq_len": n,
                                         "d_head": 16, "n_vectors": 256, **kw})


def test_every_architecture_is_equivariant_without_positions_and_not_with_them() -> None:
    for architecture in ("BERT", "MTE", "NAP", "NON"):
        for n in (4, 32):
            assert equivariance_measures(_config(architecture, n), seed=0) == {
                "equivariant_share": 1.0, "positional_equivariant_share": 0.0}, (architecture, n)


def test_the_measure_sees_a_layer_that_is_not_equivariant() -> None:
    """A bilinear projection (its N x N matrix ties weights to positions) or the convolution (taps by offset) moves
    almost no token with the permutation; a token-wise map (the identity, a linear layer) moves every one."""
    g = torch.Generator().manual_seed(1)
    x, p = torch.randn(32, 8, 16, generator=g), permutations(32, 8, g)
    for name in ("bilinear", "sepconv"):
        mixer = build_mixer(name, 16, 2, hidden_norm=False, attention_gelu=False, dropout=0.0,
                            options={"seq_len": 8}).eval()
        assert equivariant_share(mixer, x, p) < 0.05, name
    assert equivariant_share(torch.nn.Linear(16, 16), x, p) == equivariant_share(lambda v: v, x, p) == 1.0


def test_the_share_by_hand() -> None:
    """Two sequences of 3 tokens; f gives token 1 token 0's value (not equivariant). Under p = (1, 2, 0), PX = (X_1,
    X_2, X_0): f(PX) = (X_1, X_1, X_0) against P f(X) = (f(X)_1, f(X)_2, f(X)_0) = (X_0, X_2, X_0): tokens 0 and 1 fail,
    token 2 holds, in both sequences."""
    x = torch.arange(18, dtype=torch.float32).reshape(2, 3, 3)
    p = torch.tensor([[1, 2, 0], [1, 2, 0]])

    def copy_first(v: torch.Tensor) -> torch.Tensor:
        return torch.stack([v[:, 0], v[:, 0], v[:, 2]], dim=1)

    assert equivariant_share(copy_first, x, p) == pytest.approx(1 / 3)


def test_permutations_move_every_token() -> None:
    p = permutations(500, 3, torch.Generator().manual_seed(0))
    assert (p.sort(dim=-1).values == torch.arange(3)).all()  # permutations
    assert not (p == torch.arange(3)).any()  # no fixed point: the two 3-cycles only
    assert {tuple(r) for r in p.tolist()} == {(1, 2, 0), (2, 0, 1)}


def test_the_stack_is_the_model_s() -> None:
    model = initialised_model(_config("MTE", 8), seed=3, n_layers=LAYERS)
    assert len(model.layers) == 2 and model.pos_emb is not None
    tokens = torch.randint(0, 8, (2, 8))
    with torch.no_grad():
        x = model.tok_emb(tokens)
        by_hand = model.layers[1](model.layers[0](x + model.pos_emb[:8]))
        assert torch.equal(encode(model, x, positional=True), by_hand)


def test_validation_and_the_family() -> None:
    with pytest.raises(ValueError, match="invalid d_head=18; allowed: a multiple of 4 with task equivariance"):
        _config("BERT", 4, d_head=18)
    with pytest.raises(ValueError, match="invalid seq_len=1; allowed: 2 or more with task equivariance"):
        _config("BERT", 1)
    with pytest.raises(ValueError, match="invalid pooling='sum'; allowed: BERT, MTE, NAP, NON"):
        _config("sum", 4)
    result = family_for_task("equivariance").train([_config("NAP", 4)], [0, 1], device="cpu")
    assert [r["seed"] for r in result.rows] == [0, 1] and all(set(METRICS) <= set(r) for r in result.rows)


def _data() -> tuple[StudyRecord, FindingData]:
    study = get_study("yun2020.equivariance")
    rows = [{"pooling": a, "seq_len": n, "seed": seed, **equivariance_measures(_config(a, n), seed)}
            for a in study.axis_values("pooling") for n in study.axis_values("seq_len") for seed in study.seeds]
    frame = pl.DataFrame(rows)
    cells = {m: frame.group_by("pooling", "seq_len").agg(
        pl.col(m).mean().alias("g"), pl.col(m).std().alias("sd"), pl.len().alias("n_seeds")) for m in METRICS}
    return StudyRecord.of(study), FindingData(cells=cells, panel="pooling", select_metric="equivariant_share",
                                              max_seeds=len(study.seeds))


def test_the_findings_pass_and_fail_with_positions_switched_on() -> None:
    record, data = _data()
    assert [v.status for v in evaluate_findings(record, data)] == [Status.PASS] * 2
    study = get_study("yun2020.equivariance")
    f = study.findings
    wrong = study.replace(findings=(
        f[0].replace(metric="positional_equivariant_share"),  # with positions the stack is not equivariant
        f[1].replace(metric="equivariant_share"),  # without them nothing removes the restriction
    ))
    assert [v.status for v in evaluate_findings(StudyRecord.of(wrong), data)] == [Status.FAIL] * 2


def test_equivariance_scales() -> None:
    assert get_study("yun2020.equivariance").trial_count() == 4 * 3
    assert get_study("yun2020.equivariance", "smoke").trial_count() == 2 * 2
