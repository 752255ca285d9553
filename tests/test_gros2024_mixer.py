"""Expressive attention as a registry mixer (``expressive``) and the ``EA`` architecture: solo == packed."""

from __future__ import annotations

import math

import pytest
import torch

from tests.tiny import DEVICES, assert_rows_equal, tiny_config
from trainables.mixers import MIXERS
from trainables.mixers.expressive import EA_EPS, ExpressiveAttention, expressive_weights
from trainables.richter2020.architectures import ARCHITECTURES
from trainables.richter2020.loop import train_members, train_seed


@pytest.fixture(autouse=True)
def _float64(float64: None) -> None:
    """float64 and a small learning rate so packed and solo trajectories agree to 1e-6 (see test_richter2020_packed)."""


def test_expressive_is_registered_with_an_architecture() -> None:
    assert MIXERS.get("expressive") is ExpressiveAttention
    ea = ARCHITECTURES.get("EA")
    assert ea.mixer == "expressive" and ea.ln_placement == "pre_residual" and ea.attention_gelu


def test_expressive_mixer_weights_follow_eq_2_with_the_softmax_logits() -> None:
    torch.manual_seed(0)
    mixer = ExpressiveAttention(8, 2)
    x = torch.randn(3, 5, 8)
    a = mixer.attention_weights(x)  # (B, H, N, N)
    q, k, _ = mixer.project(x)
    z = q @ k.transpose(-2, -1) / math.sqrt(4)  # d_h = 4
    s = z.square() / (1 + z.square()) + EA_EPS
    assert torch.allclose(a, s / s.sum(-1, keepdim=True), atol=1e-12)
    assert torch.allclose(a.sum(-1), torch.ones(3, 2, 5))
    assert torch.allclose(expressive_weights(-z), expressive_weights(z))
    assert mixer(x).shape == (3, 5, 8)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("task", ["cases", "mode"])
def test_packed_ea_equals_separate_runs(task: str, device: str) -> None:
    cfg = tiny_config(architecture="EA", task=task, n_steps=50, learning_rate=3e-4)
    packed = train_members([cfg], [0, 1, 2], device=device)
    assert_rows_equal(packed, [row for seed in (0, 1, 2) for row in train_seed(cfg, seed, device=device)])
