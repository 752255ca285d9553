"""The contract of every registered mixer (parametrized over the registry, so a new mixer file is covered).

A mixer maps (..., B, N, d) -> (..., B, N, d), called as ``mixer(x, mask, causal=...)``, and its packed form is
its own forward pass over stacked member weights (``trainables.stacked.stack_modules``): K members stacked must
equal the K mixers run one by one, outputs and gradients, within 1e-6 in float64, with and without a
key-padding mask and causality. Padding must not leak (no real token's output depends on a padded token's
content) and causality must hold (no output depends on a later token).
"""

from __future__ import annotations

import pytest
import torch

from trainables.mixers import MIXERS, build_mixer, mixer_names
from trainables.mixers.base import Mixer
from trainables.stacked import stack_modules

D, H, N, B, K = 8, 2, 6, 3, 3
#: Real tokens per sequence of the padded batches: full, one padded, only the first token real.
LENGTHS = (N, N - 1, 1)
MASKING = {"plain": (False, False), "mask": (True, False), "causal": (False, True), "mask+causal": (True, True)}


@pytest.fixture(autouse=True)
def _float64(float64: None) -> None:
    """Every test of this module in float64 on one thread (the conftest fixture)."""


def _members(name: str, **kw: object) -> list[torch.nn.Module]:
    members = []
    for seed in range(K):
        torch.manual_seed(seed)
        m = build_mixer(name, D, H, hidden_norm=True, attention_gelu=True, dropout=0.0,
                        options={"seq_len": N, "conv_width": 3, **kw})
        for p in m.parameters():  # away from the init (NAP's gain 1 / bias 0), so every parameter matters
            p.data.add_(0.1 * torch.randn_like(p))
        members.append(m)
    return members


def _padding(lengths: tuple[int, ...] = LENGTHS) -> torch.Tensor:
    """Key-padding mask (B, N), True at the first ``length`` tokens of each sequence."""
    return torch.arange(N).view(1, N) < torch.tensor(lengths).view(-1, 1)


def test_the_registry_is_the_directory() -> None:
    assert list(mixer_names()) == sorted(MIXERS.names())
    assert {"softmax", "normalized", "no_norm", "sum", "max", "mean", "expressive", "average", "bilinear",
            "sepconv"} <= set(MIXERS.names())


@pytest.mark.parametrize("masking", MASKING)
@pytest.mark.parametrize("name", mixer_names())
def test_stacked_members_equal_separate_mixers(name: str, masking: str) -> None:
    with_mask, causal = MASKING[masking]
    members = _members(name)
    stacked = stack_modules(members)
    x = torch.randn(K, B, N, D, requires_grad=True)
    # Each member its own padding (K, B, N): the mask is indexed from the right like x.
    mask = torch.stack([_padding(LENGTHS[k:] + LENGTHS[:k]) for k in range(K)]) if with_mask else None
    out = stacked(x, mask, causal=causal)
    assert out.shape == (K, B, N, D)
    solo_x = x.detach().clone().requires_grad_()
    solo = torch.stack([m(solo_x[k], None if mask is None else mask[k], causal=causal)
                        for k, m in enumerate(members)])
    torch.testing.assert_close(out, solo, atol=1e-6, rtol=1e-6)
    weights = torch.randn_like(out)  # a loss that weighs every output differently
    (out * weights).sum().backward()
    (solo * weights).sum().backward()
    assert torch.isfinite(x.grad).all()
    torch.testing.assert_close(x.grad, solo_x.grad, atol=1e-6, rtol=1e-6)
    for (pname, p), *per_member in zip(stacked.named_parameters(), *(m.named_parameters() for m in members),
                                      strict=True):
        grads = torch.stack([q.grad for _, q in per_member])
        torch.testing.assert_close(p.grad, grads, atol=1e-6, rtol=1e-6, msg=f"{name}: gradient of {pname}")


@pytest.mark.parametrize("name", mixer_names())
def test_a_mixer_keeps_the_token_shape_with_and_without_a_batch(name: str) -> None:
    mixer = _members(name)[0]
    assert mixer(torch.randn(B, N, D)).shape == (B, N, D)
    assert mixer(torch.randn(1, N, D)).shape == (1, N, D)


@pytest.mark.parametrize("name", mixer_names())
def test_defaults_are_the_call_without_mask_or_causal(name: str) -> None:
    mixer = _members(name)[0]
    x = torch.randn(B, N, D)
    assert torch.equal(mixer(x), mixer(x, None, causal=False))  # the default path, bit for bit
    # A mask with every token real: the same mixing (the masked path may round differently, e.g. no fused kernel).
    torch.testing.assert_close(mixer(x, torch.ones(B, N, dtype=torch.bool)), mixer(x), atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("name", [n for n in mixer_names() if MIXERS.get(n).supports_mask])
def test_padding_does_not_leak_into_real_tokens(name: str, causal: bool) -> None:
    mixer = _members(name)[0]
    mask = _padding()
    x = torch.randn(B, N, D)
    other = torch.where(mask[..., None], x, 100 * torch.randn(B, N, D))  # new content at every padded token
    out, out_other = mixer(x, mask, causal=causal), mixer(other, mask, causal=causal)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out[mask], out_other[mask], atol=1e-12, rtol=1e-12)
    real = x.clone()
    real[0, 0] += torch.randn(D)  # a real token's content does reach the outputs (the test can fail)
    assert not torch.allclose(mixer(real, mask, causal=causal)[mask], out[mask])


@pytest.mark.parametrize("name", [n for n in mixer_names() if not getattr(MIXERS.get(n), "fixed_length", False)])
def test_a_padded_sequence_gives_its_real_tokens_what_the_unpadded_one_gives(name: str) -> None:
    mixer = _members(name)[0]
    x = torch.randn(B, N, D)
    mask = _padding()
    padded = mixer(x, mask)
    for b, length in enumerate(LENGTHS):
        torch.testing.assert_close(padded[b, :length], mixer(x[b:b + 1, :length])[0], atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("with_mask", [False, True])
@pytest.mark.parametrize("name", [n for n in mixer_names() if MIXERS.get(n).supports_causal])
def test_causal_outputs_do_not_see_later_tokens(name: str, with_mask: bool) -> None:
    mixer = _members(name)[0]
    mask = _padding((N, N, N)) if with_mask else None
    x = torch.randn(B, N, D)
    out = mixer(x, mask, causal=True)
    for t in range(N):
        later = x.clone()
        later[:, t] += torch.randn(B, D)  # change token t only
        changed = mixer(later, mask, causal=True)
        torch.testing.assert_close(changed[:, :t], out[:, :t], atol=1e-12, rtol=1e-12)
        assert not torch.allclose(changed[:, t:], out[:, t:])  # token t reaches some output from t on
    assert not torch.allclose(out, mixer(x, mask))  # and causal=True is not the full mixing


class _Unmasked(Mixer):
    """A mixer written before masks existed: it supports neither."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=-2, keepdim=True).expand_as(x)


def test_a_mixer_without_mask_or_causal_support_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"mixer '_Unmasked' does not support a key-padding mask or causal=True"):
        _Unmasked.require(mask=True, causal=True)
    _Unmasked.require()  # asking for neither is fine
    for name in mixer_names():  # every registered mixer supports both
        MIXERS.get(name).require(mask=True, causal=True)
