"""Training loop: schedule, per-tensor clipping, the stacked Adam, rows, learning, divergence."""

from __future__ import annotations

import math

import pytest
import torch

from tests.tiny import tiny_config
from trainables.richter2020.loop import train_members, train_seed
from trainables.richter2020.model import build_model
from trainables.richter2020.recipe import ADAM_EPS, clip_members_, learning_rate_at
from trainables.stacked import StackedAdam, stack_modules

CASE_KEYS = [f"{s}_{c}_accuracy" for s in ("train", "val") for c in ("argmin", "first", "argmax")]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_schedule_without_warmup_decays_linearly() -> None:
    lr = [learning_rate_at(s, n_steps=100, learning_rate=1.0, warmup=False) for s in (0, 10, 50, 99, 100)]
    assert lr == pytest.approx([1.0, 0.9, 0.5, 0.01, 0.0])


def test_schedule_with_warmup_follows_bert() -> None:
    lr = [learning_rate_at(s, n_steps=100, learning_rate=1.0, warmup=True) for s in (0, 1, 5, 9, 10, 50, 99)]
    # warm-up 0 -> 1 over 10 steps, then the decay line measured from step 0 (drop from 0.9 at 9 ... to 0.9)
    assert lr == pytest.approx([0.0, 0.1, 0.5, 0.9, 0.9, 0.5, 0.01])
    assert learning_rate_at(320, n_steps=3200, learning_rate=1e-3, warmup=True) == pytest.approx(0.9e-3)
    assert learning_rate_at(319, n_steps=3200, learning_rate=1e-3, warmup=True) == pytest.approx(319 / 320 * 1e-3)


def test_clip_each_tensor_separately() -> None:
    torch.manual_seed(0)
    grads = [torch.randn(5, 5) * 10, torch.randn(3) * 0.01, torch.full((4,), 3.0)]
    small = grads[1].clone()
    clip_members_(grads, torch.ones(1, dtype=torch.bool), 1.0)  # one model: K = 1, no member axis
    assert [round(float(g.norm()), 5) for g in (grads[0], grads[2])] == [1.0, 1.0]
    assert torch.equal(grads[1], small)  # below the threshold: untouched
    torch.testing.assert_close(grads[2], torch.full((4,), 0.5))  # direction kept


def test_clip_each_member_separately() -> None:
    g = torch.stack([torch.full((2, 2), 3.0), torch.full((2, 2), 0.1), torch.full((2, 2), 3.0)])  # (K=3, 2, 2)
    clip_members_([g], torch.tensor([True, True, False]), 1.0)
    assert [round(float(m.norm()), 5) for m in g] == [1.0, 0.2, 6.0]  # member 2 does not clip


def _adam_pair(dtype: torch.dtype) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    gen = torch.Generator().manual_seed(0)
    params = [torch.randn(s, generator=gen, dtype=dtype) for s in ((6, 4), (4,), (3, 5, 2))]
    return [p.clone().requires_grad_() for p in params], [p.clone().requires_grad_() for p in params]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_stacked_adam_of_one_model_is_torchs_adam_bit_for_bit(dtype: torch.dtype) -> None:
    """One seed steps as it did under torch.optim.Adam: every bit, at a decaying learning rate."""
    ours, torchs = _adam_pair(dtype)
    mine, reference = StackedAdam(ours, eps=ADAM_EPS), torch.optim.Adam(torchs, lr=1e-2, eps=ADAM_EPS)
    gen = torch.Generator().manual_seed(1)
    for step in range(25):
        for a, b in zip(ours, torchs, strict=True):
            a.grad = torch.randn(a.shape, generator=gen, dtype=dtype)
            b.grad = a.grad.clone()
        lr = learning_rate_at(step, n_steps=25, learning_rate=1e-2, warmup=True)
        reference.param_groups[0]["lr"] = lr
        reference.step()
        mine.step(torch.tensor([lr], dtype=torch.float64))
    assert all(torch.equal(a, b) for a, b in zip(ours, torchs, strict=True))
    assert not torch.equal(ours[0], _adam_pair(dtype)[0][0])  # it moved


def test_stacked_adam_members_step_at_their_own_rates(float64: None) -> None:
    """Member k of a stack moves as one model at member k's learning rate; lr 0 with zero gradients: no move."""
    models = []
    for seed in (0, 1, 2):
        torch.manual_seed(seed)
        models.append(build_model(tiny_config()))
    stacked = list(stack_modules(models).parameters())
    rates = [3e-3, 1e-3, 0.0]
    adam = StackedAdam(stacked, eps=ADAM_EPS)
    solo = [StackedAdam(list(m.parameters()), eps=ADAM_EPS) for m in models]
    for _ in range(3):
        for p in stacked:
            p.grad = torch.randn(p.shape) * torch.tensor([1.0, 1.0, 0.0]).view(-1, *[1] * (p.dim() - 1))
        adam.step(torch.tensor(rates))
        for k, (m, opt) in enumerate(zip(models, solo, strict=True)):
            for p, s in zip(m.parameters(), stacked, strict=True):
                p.grad = s.grad[k].clone()
            opt.step(torch.tensor([rates[k]]))
    for k, m in enumerate(models):
        assert all(torch.equal(p.detach(), s.detach()[k]) for p, s in zip(m.parameters(), stacked, strict=True))
    assert not torch.equal(stacked[0][0], stacked[0][1])


def test_grad_clip_inside_training(monkeypatch: pytest.MonkeyPatch) -> None:
    import trainables.richter2020.loop as loop

    norms: list[float] = []
    original = loop.clip_members_

    def spy(grads: list[torch.Tensor], clip: torch.Tensor, max_norm: float = 1.0) -> None:
        original(grads, clip, max_norm)
        norms.extend(float(g.norm()) for g in grads)

    monkeypatch.setattr(loop, "clip_members_", spy)
    train_seed(tiny_config(architecture="BERT", learning_rate=1.0, n_steps=10), 0)
    assert norms and max(norms) <= 1.0 + 1e-5
    norms.clear()
    train_seed(tiny_config(architecture="MTE", n_steps=10), 0)
    assert norms == []  # MTE does not clip


def test_rows_schema_cases_and_mode() -> None:
    seen: list[dict] = []
    rows = train_seed(tiny_config(), 3, on_eval=seen.append)
    assert seen == rows
    assert [(r["step"], r["epoch"]) for r in rows] == [(10, 1), (20, 2)]
    for r in rows:
        assert r["seed"] == 3 and r["status"] == "ok" and r["device"] == "cpu"
        assert r["n_params"] > 0 and r["wall_time_s"] > 0
        for key in ("train_loss", "val_loss"):
            assert math.isfinite(r[key])
        for key in ["train_accuracy", "val_accuracy", *CASE_KEYS]:
            assert 0.0 <= r[key] <= 1.0
    mode_rows = train_seed(tiny_config(task="mode"), 0)
    assert all(r[k] is None for r in mode_rows for k in CASE_KEYS)


def test_seed_determinism_and_trial() -> None:
    strip = lambda rows: [{k: v for k, v in r.items() if k != "wall_time_s"} for r in rows]  # noqa: E731
    a = train_seed(tiny_config(), 1)
    assert strip(a) == strip(train_seed(tiny_config(), 1))
    assert strip(a) != strip(train_seed(tiny_config(), 2))
    trial = train_members([tiny_config()], [1, 2], pack=1)  # one at a time; packed: tests/test_richter2020_packed.py
    assert [r["seed"] for r in trial] == [1, 1, 2, 2]
    assert strip(trial[:2]) == strip(a)


def test_trivial_task_learns() -> None:
    cfg = tiny_config(
        architecture="MTE",
        d_model=16,
        seq_len=4,
        val_seq_len=4,
        n_steps=300,
        eval_every=100,
        eval_batches=8,
        case_eval_per_case=20,
        learning_rate=3e-3,
    )
    rows = train_seed(cfg, 0)
    # label = argmax position in ~92% of length-4 sequences; chance is ~25-30%
    assert rows[-1]["val_accuracy"] > 0.7
    assert rows[-1]["train_loss"] < rows[0]["train_loss"]


def test_divergence_is_recorded_not_raised() -> None:
    rows = train_seed(tiny_config(learning_rate=1e6, n_steps=40), 0)
    assert [r["step"] for r in rows] == [10, 20, 30, 40]
    assert all(r["status"] == "diverged" for r in rows)
    last = rows[-1]
    assert math.isnan(last["train_loss"]) and math.isnan(last["val_loss"])
    assert last["train_accuracy"] == last["val_accuracy"] == 0.0
    assert all(last[k] == 0.0 for k in CASE_KEYS)


def test_l2_and_dropout_run() -> None:
    rows = train_seed(tiny_config(architecture="BERT", dropout=0.25, l2_weight=0.01), 0)
    assert rows[-1]["status"] == "ok" and math.isfinite(rows[-1]["train_loss"])
