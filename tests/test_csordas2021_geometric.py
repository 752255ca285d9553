"""Geometric attention (trainables.csordas2021.geometric): the log-space cumsum against the brute-force definition."""

from __future__ import annotations

import pytest
import torch

from trainables.csordas2021.geometric import GeometricAttention, geometric_weights, geometric_weights_reference


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_cumsum_equals_brute_force_on_random_logits(n: int, normalize: bool) -> None:
    gen = torch.Generator().manual_seed(n)
    logits = torch.randn(3, 2, n, n, generator=gen, dtype=torch.float64) * 3
    pad = torch.zeros(3, 2, n, n, dtype=torch.bool)
    pad[1, ..., n - 1:] = True  # last key padded in batch element 1
    fast = geometric_weights(logits, ~pad, normalize).double()
    slow = geometric_weights_reference(logits, ~(pad | torch.eye(n, dtype=torch.bool)), normalize)
    assert torch.allclose(fast, slow, atol=1e-6, rtol=1e-5)
    assert torch.all(torch.diagonal(fast, dim1=-2, dim2=-1) == 0)  # zeroed diagonal
    if n > 1:
        assert torch.all(fast[1, ..., n - 1] == 0)  # padded keys get nothing
    sums = fast.sum(-1)
    assert torch.all(sums <= 1 + 1e-6)


def test_ties_prefer_the_right_neighbour() -> None:
    # Every key matches with probability ~1: query 2 takes key 3 (right, distance 1) before key 1 (left).
    n = 5
    logits = torch.full((n, n), 30.0)
    w = geometric_weights(logits, None)
    assert float(w[2, 3]) == pytest.approx(1.0, abs=1e-6)
    assert float(w[2, 1]) == pytest.approx(0.0, abs=1e-6)
    # Equal moderate probabilities p: order of scan 3, 1, 4, 0 gives p, p(1-p), p(1-p)^2, p(1-p)^3.
    p = 0.3
    logits = torch.full((n, n), float(torch.logit(torch.tensor(p))), dtype=torch.float64)
    w = geometric_weights(logits, torch.ones(n, n, dtype=torch.bool)).double()
    expected = {3: p, 1: p * (1 - p), 4: p * (1 - p) ** 2, 0: p * (1 - p) ** 3}
    for key, value in expected.items():
        assert float(w[2, key]) == pytest.approx(value, rel=1e-5)
    ref = geometric_weights_reference(logits, ~torch.eye(n, dtype=torch.bool))
    assert torch.allclose(w, ref, atol=1e-7)


def test_gradients_are_finite_with_padding() -> None:
    logits = torch.randn(2, 1, 6, 6, requires_grad=True)
    pad = torch.zeros(2, 1, 6, 6, dtype=torch.bool)
    pad[0, ..., 3:] = True
    geometric_weights(logits, ~pad).sum().backward()
    assert torch.isfinite(logits.grad).all()
    assert torch.all(logits.grad[0, 0, :, 3:] == 0)


def test_module_matches_definition_and_initialisation() -> None:
    torch.manual_seed(0)
    att = GeometricAttention(16, 2, dropout=0.0).eval()
    assert att.alpha.item() == pytest.approx(1 / (8**0.5))
    assert att.beta.item() == 1.0 and att.gamma.item() == 0.0
    assert torch.all(att.u == 0)
    bound = 3**0.5 * (2 / (16 + 8)) ** 0.5
    assert att.q.weight.detach().abs().max().item() <= bound
    att.record = True
    x = torch.randn(2, 5, 16)
    pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    out = att(x, ~pad)
    assert out.shape == (2, 5, 16)
    w = att.last_weights
    assert w is not None and w.shape == (2, 2, 5, 5)
    assert torch.all(w[1, :, :, 3:] == 0)
    # Recompute the logits by hand for head 0 and compare with the reference weights.
    q = att.q(x).view(2, 5, 2, 8).transpose(1, 2)
    k = att.kv(x).view(2, 5, 2, 2, 8)[:, :, 0].transpose(1, 2)
    s = att.direction(x).view(2, 5, 2, 2).permute(0, 2, 1, 3)
    i = torch.arange(5).view(5, 1)
    j = torch.arange(5).view(1, 5)
    directional = torch.where(j > i, s[..., 1:2], s[..., 0:1])
    logits = att.alpha * ((q + att.u) @ k.transpose(-2, -1)) + att.beta * directional + att.gamma
    mask = pad.view(2, 1, 1, 5).expand(2, 2, 5, 5) | torch.eye(5, dtype=torch.bool)
    ref = geometric_weights_reference(logits.detach(), ~mask)
    assert torch.allclose(w.double(), ref, atol=1e-6)


def test_without_the_directional_term_the_logits_are_the_content_alone() -> None:
    """``directional=False`` (App. B's ablation): logits alpha * (q + u)^T k + gamma, the reference weights of those;
    no direction layer or beta, and every other parameter initialised as the directional module of the same seed."""
    torch.manual_seed(0)
    full = GeometricAttention(16, 2, dropout=0.0).eval()
    torch.manual_seed(0)
    att = GeometricAttention(16, 2, dropout=0.0, directional=False).eval()
    assert att.direction is None and att.beta is None
    assert {n for n, _ in full.named_parameters()} - {n for n, _ in att.named_parameters()} == {
        "direction.weight", "direction.bias", "beta"}
    for name, p in att.named_parameters():
        assert torch.equal(p, full.get_parameter(name))  # the layer was drawn and discarded: the rest is paired
    with torch.no_grad():
        att.gamma.fill_(0.3)  # a nonzero gamma and u, so that each term is exercised
        att.u.normal_()
    att.record = True
    x = torch.randn(2, 5, 16)
    pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    att(x, ~pad)
    w = att.last_weights
    assert w is not None
    q = att.q(x).view(2, 5, 2, 8).transpose(1, 2)
    k = att.kv(x).view(2, 5, 2, 2, 8)[:, :, 0].transpose(1, 2)
    logits = att.alpha * ((q + att.u) @ k.transpose(-2, -1)) + att.gamma
    mask = pad.view(2, 1, 1, 5).expand(2, 2, 5, 5) | torch.eye(5, dtype=torch.bool)
    ref = geometric_weights_reference(logits.detach(), ~mask)
    assert torch.allclose(w.double(), ref, atol=1e-6)
    # the directional module on the same input differs by its directional term (a real difference, not rounding)
    with torch.no_grad():
        full.gamma.fill_(0.3)
        full.u.copy_(att.u)
    full.record = True
    full(x, ~pad)
    assert full.last_weights is not None and (full.last_weights - w).abs().max().item() > 1e-3
