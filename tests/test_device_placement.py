"""Every model computes on the device its parameters live on: checked on PyTorch's meta device.

A tensor a forward pass creates without ``device=`` lands on the CPU; mixed with the model's tensors it works
on a CPU machine and fails only on a GPU (it did: the relative positions of NDR's "+ rel" models). On the
meta device (shapes, no data) that mixing fails the same way, so these tests find it on the CPU-only
machines this project is built on. Forward and backward of every registered mixer (solo and packed), Yun's
hybrid stacks, every Richter architecture, every NDR model (and the CTL loop's step, one seed and stacked), the Gros
bilayer (both attentions, both weight layouts, a registry mixer in its place), and the training step's loss,
clipping and Adam (one seed and stacked).
"""

from __future__ import annotations

import pytest
import torch

from tests.tiny import tiny_config
from trainables.csordas2021.config import MODELS, CTLConfig
from trainables.csordas2021.members import build_model as build_ctl_model
from trainables.gros2024.config import GrosConfig
from trainables.gros2024.model import StackedBilayer
from trainables.mixers import MIXERS
from trainables.richter2020.loop import Members
from trainables.richter2020.model import build_model
from trainables.richter2020.recipe import clip_members_, member_losses
from trainables.stacked import StackedAdam

META = "meta"


def _tokens(*shape: int) -> torch.Tensor:
    return torch.empty(*shape, dtype=torch.long, device=META)


@pytest.mark.parametrize("mixer", MIXERS.names())
def test_every_mixer_solo_and_packed_stays_on_its_device(mixer: str) -> None:
    cfg = tiny_config(architecture="MTE", mixer=mixer, val_seq_len=8, conv_width=3)
    out = build_model(cfg).to(META)(_tokens(2, 8))
    out.sum().backward()
    assert out.device.type == META
    packed = Members([cfg] * 2, [0, 1], device=META)
    logits = packed(_tokens(2, 3, 8))
    assert logits.device.type == META and logits.shape[:2] == (2, 3)


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("architecture", ["BERT", "MTE", "NAP", "NON", "sum", "max", "EA"])
def test_every_richter_architecture_and_the_training_step_stay_on_their_device(architecture: str, k: int) -> None:
    cfg = tiny_config(architecture=architecture, grad_clip=True)
    members = Members([cfg] * k, list(range(k)), device=META)
    params = members.params
    logits = members(_tokens(k, 3, 8))
    losses = member_losses(logits.float(), torch.empty(k, 3, dtype=torch.long, device=META))
    losses.sum().backward()
    clip_members_([p.grad for p in params], torch.ones(k, dtype=torch.bool, device=META))
    StackedAdam(params, eps=1e-7).step(torch.full((k,), 1e-3, dtype=torch.float64, device=META))
    assert losses.device.type == META and all(p.device.type == META for p in params)


@pytest.mark.parametrize("task", ["cases", "mode"])
def test_the_packed_training_step_stays_on_its_device(task: str) -> None:
    """The whole step of the loop (counter-based sampling, forward, the divergence check, backward, clipping, the
    learning-rate schedule and Adam, the sums) creates nothing on the CPU."""
    from trainables.richter2020.loop import Pack

    cfg = tiny_config(task=task, grad_clip=True, warmup=True, case_mix="natural")
    pack = Pack([cfg, cfg], [0, 1], device=META)
    pack.step()
    assert {t.device.type for t in (pack.loss_sum, pack.active, pack.diverged_at, pack.step_counter)} == {META}


@pytest.mark.parametrize("model", MODELS)
def test_every_ndr_model_stays_on_its_device(model: str) -> None:
    net = build_ctl_model(CTLConfig(model=model, d_model=16, n_heads=2, n_layers=2)).to(META)
    out = net(_tokens(3, 7), torch.empty(3, dtype=torch.long, device=META))
    out.sum().backward()
    assert out.device.type == META


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("model", MODELS)
def test_every_ndr_models_training_step_stays_on_its_device(model: str, k: int) -> None:
    """The CTL loop's whole step, one seed and stacked: each member's batch padded to the widest, its own dropout
    and gate-dropout draws, the losses, the divergence check, backward, per-member clipping and AdamW, the sums."""
    from trainables.csordas2021.loop import Stack

    cfg = CTLConfig(model=model, d_model=16, n_heads=2, n_layers=2, batch_size=4, n_steps=1, eval_every=1)
    stack = Stack([cfg] * k, list(range(k)), device=META)
    stack.step()
    tensors = (stack.loss_sum, stack.active, stack.diverged_at, stack.step_counter, *stack.members.params)
    assert {t.device.type for t in tensors} == {META}


@pytest.mark.parametrize("variant", [
    {"attention": "dpa"}, {"attention": "ea"}, {"attention": "ea", "weights": "shared"},
    {"attention": "dpa", "mixer": "softmax", "n_heads": 2},
])
def test_the_gros_bilayer_stays_on_its_device(variant: dict[str, object]) -> None:
    cfg = GrosConfig(task="nt", basis=4, delay=2, n_context=6, n_epochs=20, **variant)  # type: ignore[arg-type]
    model = StackedBilayer(cfg, [0, 1], device=META)
    out = model(_tokens(2, 3, 6))
    out.sum().backward()
    assert out.device.type == META and out.shape == (2, 3, 4)


@pytest.mark.parametrize("stack", ["sepconv,softmax", "average,bilinear"])
def test_hybrid_stacks_stay_on_their_device(stack: str) -> None:
    cfg = tiny_config(architecture="MTE", mixer_stack=stack, val_seq_len=8, conv_width=3)
    logits = Members([cfg] * 2, [0, 1], device=META)(_tokens(2, 3, 8))
    logits.sum().backward()
    assert logits.device.type == META
