"""Mixers and the model: shapes, NaN-freedom, parameter counts, weight properties."""

from __future__ import annotations

import functools
import math

import pytest
import torch

from trainables.mixers import MIXERS
from trainables.mixers.normalized import NormalizedAttention
from trainables.richter2020.architectures import ARCHITECTURES
from trainables.richter2020.config import TrainConfig
from trainables.richter2020.model import build_model
from trainables.richter2020.tasks import TASKS
from trainables.stacked import count_parameters

ARCHS = ARCHITECTURES.names()


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _tiny(arch: str, task: str, **kw: object) -> TrainConfig:
    return TrainConfig(architecture=arch, task=task, d_model=8, n_heads=2, seq_len=8, **kw)


@pytest.mark.parametrize("task", TASKS.names())
@pytest.mark.parametrize("arch", ARCHS)
def test_output_shapes_and_finite(arch: str, task: str) -> None:
    cfg = _tiny(arch, task)
    torch.manual_seed(0)
    model = build_model(cfg)
    vocab = cfg.resolved()["vocab_size"]
    for n in (8, cfg.resolved()["val_seq_len"]):
        tokens = torch.randint(vocab, (3, n))
        out = model(tokens)
        expected = (3, vocab) if task == "mode" else (3, n)
        assert out.shape == expected
        assert torch.isfinite(out).all()
    out.sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


@functools.cache
def _paper_default_counts() -> dict[str, int]:
    return {a: count_parameters(build_model(TrainConfig(architecture=a, task="cases", d_model=128))) for a in ARCHS}


@pytest.mark.parametrize("arch", ARCHS)
def test_parameter_counts_match_within_5_percent(arch: str) -> None:
    counts = _paper_default_counts()
    reference = counts["MTE"]
    assert abs(counts[arch] - reference) / reference < 0.05, counts
    # NAP adds exactly one gain and one bias per head and layer to MTE.
    assert counts["NAP"] - counts["MTE"] == 2 * 4 * 2


def test_positional_embedding_only_where_needed() -> None:
    assert build_model(_tiny("NAP", "cases")).pos_emb is not None
    assert build_model(_tiny("NAP", "mode")).pos_emb is None


def test_init_statistics() -> None:
    torch.manual_seed(0)
    model = build_model(TrainConfig(architecture="MTE", task="cases", d_model=128, init_scale=2.0))
    w = model.layers[0].ffn.up.weight
    assert w.abs().max() <= 2 * 0.04 + 1e-7
    assert 0.03 < w.std() < 0.04  # truncation at 2 std shrinks 0.04 by ~12%
    assert torch.all(model.layers[0].ffn.up.bias == 0)
    assert torch.all(model.layers[0].norm1.weight == 1)


def test_nap_gain_and_bias_are_per_head_scalars() -> None:
    model = build_model(_tiny("NAP", "cases"))
    mixer = model.layers[0].mixer
    assert isinstance(mixer, NormalizedAttention)
    assert mixer.gain.shape == (2,) and mixer.bias.shape == (2,)
    assert torch.all(mixer.gain == 1) and torch.all(mixer.bias == 0)


def test_softmax_weights_sum_to_one_and_match_output() -> None:
    torch.manual_seed(0)
    mixer = MIXERS.get("softmax")(8, 2)
    x = torch.randn(3, 5, 8)
    a = mixer.attention_weights(x)  # (B, H, N, N)
    assert a.shape == (3, 2, 5, 5)
    torch.testing.assert_close(a.sum(-1), torch.ones(3, 2, 5))
    q, k, v = mixer.project(x)
    manual = mixer.mix((a @ v).transpose(1, 2).reshape(3, 5, 8))
    torch.testing.assert_close(mixer(x), manual)


def test_normalized_weights_have_mean_b_and_std_g() -> None:
    torch.manual_seed(0)
    mixer = MIXERS.get("normalized")(8, 2)
    with torch.no_grad():
        mixer.qkv.weight.mul_(50)  # logits with std >> 1e-3 so the epsilon is negligible
        mixer.gain.copy_(torch.tensor([2.0, 0.5]))
        mixer.bias.copy_(torch.tensor([0.3, -1.0]))
    a = mixer.attention_weights(torch.randn(4, 6, 8))  # (B, H, N, N)
    std, mean = torch.std_mean(a, dim=-1, correction=0)
    torch.testing.assert_close(mean, torch.tensor([0.3, -1.0]).view(1, 2, 1).expand(4, 2, 6))
    torch.testing.assert_close(std, torch.tensor([2.0, 0.5]).view(1, 2, 1).expand(4, 2, 6), atol=1e-3, rtol=1e-3)


def test_no_norm_linear_shortcut_equals_explicit_weights() -> None:
    torch.manual_seed(0)
    mixer = MIXERS.get("no_norm")(8, 2, hidden_norm=True, attention_gelu=True)
    assert mixer.hidden_norm is None  # NON replaces the head-output LN by 1/sqrt(N)
    x = torch.randn(3, 5, 8)
    q, k, v = mixer.project(x)
    explicit = (q @ k.transpose(-2, -1) / math.sqrt(4)) @ v / math.sqrt(5)
    torch.testing.assert_close(mixer.pool(q, k, v), explicit)


def test_reduce_mixers_equal_hand_computed() -> None:
    x = torch.tensor([[[1.0, -2.0], [3.0, 0.5], [-1.0, 4.0]]])  # (1, 3, 2)
    s = MIXERS.get("sum")(2, 1)(x)
    m = MIXERS.get("max")(2, 1)(x)
    assert s.shape == m.shape == (1, 3, 2)
    assert s.tolist() == [[[3.0, 2.5]] * 3]
    assert m.tolist() == [[[3.0, 4.0]] * 3]
    torch.testing.assert_close(MIXERS.get("mean")(2, 1)(x), torch.tensor([[[1.0, 2.5 / 3]] * 3]))
    assert sum(p.numel() for p in MIXERS.get("sum")(2, 1).parameters()) == 0


@pytest.mark.parametrize("mixer", ["softmax", "normalized", "no_norm", "sum", "max"])
def test_every_mixer_maps_bnd_to_bnd(mixer: str) -> None:
    m = MIXERS.get(mixer)(8, 2, hidden_norm=True, attention_gelu=True, dropout=0.1)
    m.train()
    assert m(torch.randn(2, 7, 8)).shape == (2, 7, 8)


def test_ln_placement_switch_changes_hidden_norms() -> None:
    post = build_model(_tiny("MTE", "cases", ln_placement="post")).layers[0]
    pre = build_model(_tiny("MTE", "cases")).layers[0]
    assert post.mixer.hidden_norm is None and post.ffn.norm is None and not post.pre_residual
    assert pre.mixer.hidden_norm is not None and pre.ffn.norm is not None and pre.pre_residual


@pytest.mark.parametrize("mixer", ["normalized", "no_norm"])
@pytest.mark.parametrize("n", [3, 16])
def test_linear_fast_path_equals_explicit_weights(mixer: str, n: int) -> None:
    """NAP/NON avoid the N x N matrix when they can; the result equals weights @ v (and its gradient)."""
    torch.manual_seed(0)
    m = MIXERS.get(mixer)(8, 2)
    if mixer == "normalized":
        with torch.no_grad():
            m.gain.copy_(torch.tensor([1.5, 0.7]))
            m.bias.copy_(torch.tensor([0.2, -0.4]))
    x = torch.randn(2, n, 8, dtype=torch.float64, requires_grad=True)
    m = m.double()
    q, k, v = m.project(x)
    explicit = m.weights(q, k) @ v  # (B, H, N, d_h)
    if mixer == "no_norm":
        explicit = explicit / math.sqrt(n)
    fast = m.pool(q, k, v)
    torch.testing.assert_close(fast, explicit)
    (g_fast,) = torch.autograd.grad(fast.square().sum(), x, retain_graph=True)
    (g_explicit,) = torch.autograd.grad(explicit.square().sum(), x)
    torch.testing.assert_close(g_fast, g_explicit)
