"""The contract of every registered mixer (parametrized over the registry, so a new mixer file is covered).

A mixer maps (..., B, N, d) -> (..., B, N, d), and its packed form is its own forward pass over stacked
member weights (``trainables.stacked.stack_modules``): K members stacked must equal the K mixers run one by
one, outputs and gradients, within 1e-6 in float64.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

from trainables.mixers import MIXERS, build_mixer, mixer_names
from trainables.stacked import stack_modules

D, H, N, B, K = 8, 2, 6, 3, 3


@pytest.fixture(autouse=True)
def _float64(one_torch_thread: None) -> Iterator[None]:
    dtype = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(dtype)


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


def test_the_registry_is_the_directory() -> None:
    assert list(mixer_names()) == sorted(MIXERS.names())
    assert {"softmax", "normalized", "no_norm", "sum", "max", "mean", "expressive", "average", "bilinear",
            "sepconv"} <= set(MIXERS.names())


@pytest.mark.parametrize("name", mixer_names())
def test_stacked_members_equal_separate_mixers(name: str) -> None:
    members = _members(name)
    stacked = stack_modules(members)
    x = torch.randn(K, B, N, D, requires_grad=True)
    out = stacked(x)
    assert out.shape == (K, B, N, D)
    solo_x = x.detach().clone().requires_grad_()
    solo = torch.stack([m(solo_x[k]) for k, m in enumerate(members)])
    torch.testing.assert_close(out, solo, atol=1e-6, rtol=1e-6)
    weights = torch.randn_like(out)  # a loss that weighs every output differently
    (out * weights).sum().backward()
    (solo * weights).sum().backward()
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
