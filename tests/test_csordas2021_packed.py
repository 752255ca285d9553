"""The CTL loop at K > 1 (seeds stacked into one model) equals K runs at K = 1 (one seed at a time).

Every member keeps its own initialisation, data stream (batches of its own width, padded to the widest member's),
dropout masks (its own generator, in its own batch's shape), Adam state and clipping: in float64 the rows agree to
~1e-16 (checked to 1e-6), with every model's paper dropout switched on.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from torch import nn

from tests.tiny import DEVICES, assert_rows_equal
from trainables.csordas2021.config import MODELS, CTLConfig
from trainables.csordas2021.loop import Stack, train_members, train_seed
from trainables.csordas2021.models import LSTMWeights, recur
from trainables.csordas2021.noise import OFFSETS, TOKENS, WHOLE, MemberNoise
from trainables.mixers import MIXERS
from trainables.stacked import StackedAdam, clip_grad_norm_members_

SEEDS = [0, 1, 2]
TINY = {"d_model": 8, "d_ff": 16, "n_heads": 2, "n_layers": 3, "n_steps": 6, "eval_every": 2, "eval_samples": 48,
        "batch_size": 16}


def tiny(model: str, **kw: object) -> CTLConfig:
    """A tiny model of the row ``model`` with the row's own dropout, gate dropout and sampler."""
    base = {k: v for k, v in TINY.items() if model != "LSTM" or k not in ("d_ff", "n_heads", "n_layers")}
    return CTLConfig(model=model, **{**base, **kw})  # type: ignore[arg-type]


def _solo(cfg: CTLConfig, seeds: list[int], device: str = "cpu") -> tuple[list[dict[str, Any]], ...]:
    runs = [train_seed(cfg, seed, device=device) for seed in seeds]
    return tuple([row for run in runs for row in run[i]] for i in range(3))


def _assert_runs_equal(packed: tuple[list[dict[str, Any]], ...], solo: tuple[list[dict[str, Any]], ...],
                       tol: float) -> None:
    """Rows, attention and gate probe rows, each within ``tol``."""
    for p, s in zip(packed, solo, strict=True):
        assert_rows_equal(p, s, tol=tol)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("model", MODELS)
def test_every_model_trains_packed_as_separate_runs(model: str, device: str, float64: None) -> None:
    """Copy gate, geometric attention, relative positions, the plain Transformer and the LSTM, each with its
    dropout: float64 rows (and probe artifacts) of three stacked seeds equal three one-seed runs within 1e-6."""
    cfg = tiny(model, direction="backward")
    packed = train_members([cfg], SEEDS, device=device)
    _assert_runs_equal(packed, _solo(cfg, SEEDS, device), 1e-6)
    assert {row["device"] for row in packed[0]} == {device} and len(packed[0]) == 3 * 3


@pytest.mark.parametrize("mixer", MIXERS.names())
def test_every_registry_mixer_in_the_transformer_trains_packed_as_separate_runs(mixer: str, float64: None) -> None:
    cfg = tiny("Transformer", mixer=mixer)
    _assert_runs_equal(train_members([cfg], SEEDS), _solo(cfg, SEEDS), 1e-6)


@pytest.mark.parametrize("model", ["+ rel", "+ abs/rel + gate"])
def test_relative_positions_with_length_bucketed_batches(model: str, float64: None) -> None:
    """Relative positions drop out the offsets of a member's own width (the stack holds the widest member's)."""
    cfg = tiny(model, length_bucketed=True)
    _assert_runs_equal(train_members([cfg], SEEDS), _solo(cfg, SEEDS), 1e-6)


@pytest.mark.parametrize(("model", "ablation"), [
    ("NDR", {"directional": False}), ("+ geom. att.", {"directional": False}), ("NDR", {"gate_bias": 0.0}),
    ("+ rel + gate", {"gate_bias": 1.0})])
def test_the_ablations_train_packed_as_separate_runs(model: str, ablation: dict[str, object], float64: None) -> None:
    """App. B's and App. C.2's ablations (no directional term, another gate bias) hold in every stacked member: the
    members are built from the config as one seed is, so three stacked seeds equal three one-seed runs within 1e-6."""
    cfg = tiny(model, direction="backward", **ablation)
    packed = train_members([cfg], SEEDS)
    _assert_runs_equal(packed, _solo(cfg, SEEDS), 1e-6)
    paper = train_seed(tiny(model, direction="backward"), SEEDS[0])[0]
    assert [r["test_loss"] for r in packed[0][:3]] != [r["test_loss"] for r in paper]  # the ablation did something


def test_the_members_batches_differ_in_width(one_torch_thread: None) -> None:
    """The premise of the tests above: stacked members' batches have widths of their own (padding is exercised).
    Length-bucketed batches (NDR's) hold one or two lengths each, so the members' widths differ at almost every step
    (uniform batches of 16 almost always hold a depth-5 sample: width 8)."""
    stack = Stack([tiny("NDR")] * 3, SEEDS)
    widths = [stack._batch()[3] for _ in range(6)]
    assert sum(len(set(w)) > 1 for w in widths) >= 3, widths


def _draws(noise: MemberNoise, x: torch.Tensor, along: str) -> torch.Tensor:
    return noise.dropout(x, 0.4, True, along)


@pytest.mark.parametrize("along", [TOKENS, OFFSETS, WHOLE])
def test_a_members_masks_are_those_of_its_own_run(along: str) -> None:
    """Member k draws from a generator in the state seed k's run draws from, in the shape of its own batch; a
    member's padded positions get no mask (0)."""
    widths, n = [3, 5, 4], 5
    rows = {TOKENS: lambda w: w, OFFSETS: lambda w: 2 * w - 1, WHOLE: lambda w: 2}[along]
    stacked = MemberNoise([torch.Generator().manual_seed(s) for s in SEEDS], stacked=True)
    stacked.widths = widths
    out = _draws(stacked, torch.ones(3, 2, rows(n), 6), along)
    gate = stacked.keep(torch.Size((3, 2, n, 1)), 0.3, torch.device("cpu"))
    for k, (seed, w) in enumerate(zip(SEEDS, widths, strict=True)):
        alone = MemberNoise([torch.Generator().manual_seed(seed)], stacked=False)
        own = _draws(alone, torch.ones(2, rows(w), 6), along)
        start = {TOKENS: 0, OFFSETS: n - w, WHOLE: 0}[along]
        assert torch.equal(out[k].narrow(-2, start, rows(w)), own)
        outside = out[k].clone()
        outside.narrow(-2, start, rows(w)).zero_()
        assert not outside.any()  # nothing outside the member's own part
        assert torch.equal(gate[k, :, :w], alone.keep(torch.Size((2, w, 1)), 0.3, torch.device("cpu")))


def test_the_stacked_lstm_is_torchs_lstm(float64: None) -> None:
    torch.manual_seed(0)
    lstms = [nn.LSTM(4, 6, batch_first=True) for _ in range(2)]
    x = torch.randn(2, 3, 5, 4)
    stacked = LSTMWeights(lstms[0])
    for name in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"):
        setattr(stacked, name, nn.Parameter(torch.stack([m.get_parameter(name).detach() for m in lstms])))
    out = recur(x, stacked)
    for k, lstm in enumerate(lstms):
        torch.testing.assert_close(out[k], recur(x[k], lstm), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_float32_rows_close_after_ten_steps(device: str, one_torch_thread: None) -> None:
    """float32, as trials train: after 10 steps stacked and separate rows agree within 1e-4 (the Richter family's
    tolerance, argued in tests/test_richter2020_packed.py; measured here: ~2e-7)."""
    cfg = tiny("NDR", n_steps=10, eval_every=5)
    _assert_runs_equal(train_members([cfg], SEEDS, device=device), _solo(cfg, SEEDS, device), 1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_a_diverging_member_is_frozen_and_the_others_match(device: str, float64: None) -> None:
    good, bad = tiny("NDR"), tiny("NDR", learning_rate=1e30)
    solo_bad = train_seed(bad, 0, device=device)
    assert {row["status"] for row in solo_bad[0]} == {"diverged"}  # the premise: this rate diverges alone
    seen: list[dict[str, Any]] = []
    rows, attention, gates = train_members([good, bad, good], [0], device=device, on_eval=seen.append)
    n = len(solo_bad[0])
    solo_good = train_seed(good, 0, device=device)
    assert_rows_equal(rows[:n], solo_good[0])
    assert_rows_equal(rows[n:2 * n], solo_bad[0])
    assert_rows_equal(rows[2 * n:], solo_good[0])
    assert len(seen) == len(rows) and math.isnan(rows[2 * n - 1]["test_loss"])
    assert_rows_equal(attention, solo_good[1] * 2)  # the diverged member has no probe rows
    assert_rows_equal(gates, solo_good[2] * 2)


def test_the_family_packs_on_request_and_by_default_only_on_a_gpu(monkeypatch: pytest.MonkeyPatch,
                                                                 float64: None) -> None:
    import trainables.csordas2021.family as family

    groups: list[list[int]] = []
    original = family.train_members

    def spy(configs: Any, seeds: Any, **kw: Any) -> Any:
        groups.append(list(seeds))
        return original(configs, seeds, **kw)

    monkeypatch.setattr(family, "train_members", spy)
    cfg = tiny("+ rel + gate")
    packed = family.train([cfg], [0, 1], packed=True)
    alone = family.train([cfg], [0, 1], packed=False)
    family.train([cfg], [0, 1])  # the CPU's default: one seed after another
    assert groups == [[0, 1], [0], [1], [0], [1]]
    assert_rows_equal(packed.rows, alone.rows)
    assert set(packed.artifacts) == set(alone.artifacts) == {"attention", "gates"}
    from trainables.families import packs

    assert packs(family.FAMILY, "auto", "cuda:0") and not packs(family.FAMILY, "auto", "cpu")


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_stacked_adam_with_weight_decay_is_torchs_adamw_bit_for_bit(dtype: torch.dtype) -> None:
    """One model steps as it did under torch.optim.AdamW (the CTL Transformers' optimiser): every bit."""
    gen = torch.Generator().manual_seed(0)
    shapes = ((6, 4), (4,), (3, 5, 2))
    ours = [torch.randn(s, generator=gen, dtype=dtype).requires_grad_() for s in shapes]
    torchs = [p.detach().clone().requires_grad_() for p in ours]
    mine = StackedAdam(ours, eps=1e-8, weight_decay=0.01)
    reference = torch.optim.AdamW(torchs, lr=2e-2, eps=1e-8, weight_decay=0.01)
    for _ in range(20):
        for a, b in zip(ours, torchs, strict=True):
            a.grad = torch.randn(a.shape, generator=gen, dtype=dtype)
            b.grad = a.grad.clone()
        reference.step()
        mine.step(torch.tensor([2e-2], dtype=torch.float64))
    assert all(torch.equal(a, b) for a, b in zip(ours, torchs, strict=True))


def test_each_member_clips_to_its_own_global_norm(float64: None) -> None:
    gen = torch.Generator().manual_seed(0)
    stacked = [torch.zeros(3, *s, requires_grad=True) for s in ((4, 2), (5,))]
    for p, scale in zip(stacked, (10.0, 0.01), strict=True):
        member_scale = torch.tensor([1.0, 0.01, 3.0]).view(3, *[1] * (p.dim() - 1))
        p.grad = torch.randn(p.shape, generator=gen) * scale * member_scale
    alone = [[torch.zeros(p.shape[1:], requires_grad=True) for p in stacked] for _ in range(3)]
    for k, params in enumerate(alone):
        for p, s in zip(params, stacked, strict=True):
            p.grad = s.grad[k].clone()
        torch.nn.utils.clip_grad_norm_(params, 5.0)
    clip_grad_norm_members_(stacked, 5.0, stacked=True)
    for k, params in enumerate(alone):
        for p, s in zip(params, stacked, strict=True):
            torch.testing.assert_close(s.grad[k], p.grad, rtol=1e-12, atol=0)
    assert stacked[1].grad is not None and torch.equal(stacked[1].grad[1], alone[1][1].grad)  # under the norm: kept
