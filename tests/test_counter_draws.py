"""Counter-based draws: every member's numbers in one call, each a pure function of (key, counter), on any device."""

from __future__ import annotations

import pytest
import torch

from tests.tiny import DEVICES
from trainables.counter_draws import LANES, Draws, member_keys, mix32


def _keys(seeds: list[int], device: str = "cpu") -> torch.Tensor:
    return member_keys(seeds, 1, 0x5EED, device)


def test_mix32_is_lowbias32_on_known_words() -> None:
    """Reference values of Wellons' lowbias32 (computed with Python's unbounded integers below)."""

    def reference(x: int) -> int:
        x ^= x >> 16
        x = (x * 0x7FEB352D) & 0xFFFFFFFF
        x ^= x >> 15
        x = (x * 0x846CA68B) & 0xFFFFFFFF
        return x ^ (x >> 16)

    words = [0, 1, 2, 0xFFFFFFFF, 0x12345678, 0x80000000, 2**31 - 1]
    assert mix32(torch.tensor(words)).tolist() == [reference(w) for w in words]


def test_a_members_draws_do_not_depend_on_k_or_its_place() -> None:
    seeds = [3, 0, 11, 7]
    together = Draws(_keys(seeds), 9)
    tokens, u = together.integers(100, (8, 16)), together.uniform((8,))
    for i, seed in enumerate(seeds):
        alone = Draws(_keys([seed]), 9)
        assert torch.equal(alone.integers(100, (8, 16))[0], tokens[i])
        assert torch.equal(alone.uniform((8,))[0], u[i])
    again = Draws(_keys(seeds[::-1]), 9).integers(100, (8, 16))
    assert torch.equal(again, tokens.flip(0))


def test_counters_lanes_and_members_give_different_numbers() -> None:
    keys = _keys([0, 1])
    a = Draws(keys, 0).integers(1000, (64,))
    assert not torch.equal(a[0], a[1])  # members
    assert not torch.equal(a, Draws(keys, 1).integers(1000, (64,)))  # counters
    draws = Draws(keys, 0)
    assert not torch.equal(draws.integers(1000, (64,)), draws.integers(1000, (64,)))  # lanes
    counter = torch.tensor(0)
    assert torch.equal(Draws(keys, counter).integers(1000, (64,)), a)  # a tensor counter is the same counter


def test_integers_are_uniform_and_members_uncorrelated() -> None:
    """Chi-square of 400,000 tokens over 100 values (99 degrees of freedom: 1-in-10^6 bound about 160), the
    correlation between members' tokens, and uniforms in [0, 1) with mean 1/2."""
    tokens = Draws(_keys(list(range(10))), 4).integers(100, (400, 100))  # (10, 400, 100)
    counts = torch.bincount(tokens.flatten(), minlength=100).double()
    expected = tokens.numel() / 100
    assert float(((counts - expected) ** 2 / expected).sum()) < 160
    assert tokens.min() == 0 and tokens.max() == 99
    flat = tokens.flatten(1).double()
    corr = torch.corrcoef(flat)
    off = corr[~torch.eye(10, dtype=torch.bool)]
    assert float(off.abs().max()) < 0.02  # 40,000 pairs each: the standard error is 0.005
    u = Draws(_keys([1]), 0).uniform((100_000,))
    assert 0 <= float(u.min()) and float(u.max()) < 1 and abs(float(u.mean()) - 0.5) < 0.005


def test_bad_requests_are_refused() -> None:
    draws = Draws(_keys([0]), 0)
    with pytest.raises(ValueError, match=r"invalid high=0; allowed: 1 <= high < 2\^31"):
        draws.integers(0, (2,))
    for _ in range(LANES):
        draws.words((1,))
    with pytest.raises(ValueError, match=f"more than {LANES} draws"):
        draws.words((1,))
    with pytest.raises(ValueError, match=r"invalid keys \(2, 2\)"):
        Draws(torch.zeros(2, 2, dtype=torch.int64), 0)


@pytest.mark.parametrize("device", DEVICES)
def test_the_same_numbers_on_every_device(device: str) -> None:
    """Integer arithmetic only: the tokens, uniforms and a cases batch (with its truncated-geometric positions) drawn
    on ``device`` equal the CPU's, bit for bit."""
    from trainables.richter2020.tasks import TASKS

    def draw(where: str) -> list[torch.Tensor]:
        keys = _keys([0, 5, 9], where)
        draws = Draws(keys, torch.tensor(123, device=where))
        task = TASKS.get("cases")(case_mix="0.4,0.3,0.3")
        tokens, labels = task.sample(16, 64, Draws(keys, 7))
        return [draws.integers(97, (5, 7)), draws.uniform((11,)), tokens, labels]

    for here, there in zip(draw("cpu"), draw(device), strict=True):
        assert torch.equal(here, there.cpu())
