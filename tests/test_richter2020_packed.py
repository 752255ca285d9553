"""The one loop at K > 1 (members stacked into one model) equals K runs at K = 1 (one seed at a time)."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from tests.tiny import DEVICES, assert_rows_equal, tiny_config
from trainables.mixers import MIXERS
from trainables.richter2020.config import TrainConfig
from trainables.richter2020.family import train
from trainables.richter2020.loop import train_members, train_seed

ARCHS = ["BERT", "MTE", "NAP", "NON", "sum", "max"]
TASK_NAMES = ["cases", "cases_first_token", "mode"]
SEEDS = [0, 1, 2]


@pytest.fixture(autouse=True)
def _float64(float64: None) -> None:
    """One thread, float64 and small learning rates, so that packed and solo runs agree to 1e-6.

    Batched and single matmuls sum in different orders; training amplifies that rounding difference
    exponentially (tiny NAP at lr 6e-4: 1e-16 -> 1e-4 in 40 steps; in float32 accuracies differ by 0.3 after
    50 steps at lr 3e-3). In float64 at lr 3e-4 the rows agree to ~1e-15 (checked to 1e-6 here).
    """


def _tiny(**kw: object) -> TrainConfig:
    """30 steps (three evaluations) at a small learning rate: long enough to compare packed and solo trajectories (a
    stacking or per-member mistake shows from the first steps; 50 steps cost two thirds more here)."""
    return tiny_config(**{"n_steps": 30, "learning_rate": 3e-4, **kw})


def _solo(cfg: TrainConfig, seeds: list[int], device: str = "cpu") -> list[dict[str, Any]]:
    return [row for seed in seeds for row in train_seed(cfg, seed, device=device)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mixer", MIXERS.names())
def test_every_registered_mixer_trains_packed_as_separate_runs(mixer: str, device: str) -> None:
    """The packed form of a mixer is its own file's forward over stacked weights: rows equal within 1e-6."""
    cfg = _tiny(architecture="MTE", mixer=mixer, val_seq_len=8, conv_width=3, n_steps=30)
    assert_rows_equal(train_members([cfg], SEEDS, device=device), _solo(cfg, SEEDS, device))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("task", TASK_NAMES)
@pytest.mark.parametrize("architecture", ARCHS)
def test_packed_equals_separate_runs(architecture: str, task: str, device: str) -> None:
    """float64 on any device: batched and single matmuls (CPU BLAS or cuBLAS, whose float64 GEMMs never use
    TF32) differ by rounding only, ~1e-16, which 30 steps at lr 3e-4 leave far below 1e-6."""
    cfg = _tiny(architecture=architecture, task=task)
    packed = train_members([cfg], SEEDS, device=device)
    assert_rows_equal(packed, _solo(cfg, SEEDS, device))
    assert {row["device"] for row in packed} == {device}
    assert {row["learning_rate"] for row in packed} == {cfg.learning_rate}


@pytest.mark.parametrize("switches", [
    dict(architecture="BERT", n_steps=50, learning_rate=0.05),  # warm-up + per-tensor clipping that bites
    dict(architecture="BERT", ln_placement="pre_residual", attention_gelu=True),
    dict(architecture="MTE", warmup=True, grad_clip=True, l2_weight=1e-2),
    dict(architecture="NAP", d_model=16, n_heads=1, seq_len=8),  # d_h > N: explicit N x N weights
])
def test_packed_switches_equal_separate_runs(switches: dict[str, object]) -> None:
    cfg = _tiny(**switches)
    assert_rows_equal(train_members([cfg], SEEDS), _solo(cfg, SEEDS))


def test_packed_learning_rates_and_scalars() -> None:
    configs = [_tiny(architecture="MTE", learning_rate=6e-4),
               _tiny(architecture="MTE", learning_rate=3e-4, l2_weight=1e-3),
               _tiny(architecture="MTE", learning_rate=1e-4, grad_clip=True, warmup=True)]
    packed = train_members(configs, [0, 1])
    solo = [row for cfg in configs for row in _solo(cfg, [0, 1])]
    assert_rows_equal(packed, solo)
    assert [row["learning_rate"] for row in packed[:: len(packed) // 6]] == [6e-4, 6e-4, 3e-4, 3e-4, 1e-4, 1e-4]


def test_packing_refuses_shape_changes() -> None:
    with pytest.raises(ValueError, match="d_model"):
        train_members([_tiny(), _tiny(d_model=16)], [0])


@pytest.mark.parametrize("device", DEVICES)
def test_diverged_member_is_frozen_and_others_match(device: str) -> None:
    good, bad = _tiny(architecture="NON", learning_rate=1e-3), _tiny(architecture="NON", learning_rate=1e100)
    solo_bad = train_seed(bad, 0, device=device)
    assert {row["status"] for row in solo_bad} == {"diverged"}  # the premise: this lr diverges alone
    seen: list[dict[str, Any]] = []
    packed = train_members([good, bad, good], [0], on_eval=seen.append, pack=None, device=device)
    n = len(solo_bad)
    assert_rows_equal(packed[:n], _solo(good, [0], device))
    assert_rows_equal(packed[n : 2 * n], solo_bad)
    assert_rows_equal(packed[2 * n :], _solo(good, [0], device))
    assert len(seen) == len(packed)


def test_dropout_runs_and_is_deterministic() -> None:
    cfg = _tiny(architecture="MTE", dropout=0.25, n_steps=20)
    a, b = train_members([cfg], [0, 1]), train_members([cfg], [0, 1])
    assert [r["train_loss"] for r in a] == [r["train_loss"] for r in b]
    assert all(math.isfinite(r["train_loss"]) for r in a)


def test_family_packs_on_request_and_by_default_only_on_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    import trainables.richter2020.family as family

    packs: list[object] = []
    original = family.train_members

    def spy(*args: Any, **kw: Any) -> list[dict[str, Any]]:
        packs.append(kw["pack"])
        return original(*args, **kw)

    monkeypatch.setattr(family, "train_members", spy)
    cfg = _tiny(n_steps=20)
    packed = train([cfg], [0, 1], packed=True).rows
    sequential = train([cfg], [0, 1], packed=False).rows
    train([cfg], [0, 1])  # CPU default: one seed after another
    from trainables.families import PackingWarning

    with pytest.warns(PackingWarning, match="--packing off cannot be honoured for 2 packed learning rates"):
        train([cfg, _tiny(n_steps=20, learning_rate=1e-4)], [0], packed=False)  # packed learning rates: always packed
    assert packs == ["auto", 1, 1, "auto"]
    assert_rows_equal(packed, sequential)
    assert {row["learning_rate"] for row in packed + sequential} == {cfg.learning_rate}


@pytest.mark.parametrize("device", DEVICES)
def test_float32_first_evaluation_close(device: str) -> None:
    """float32, as trials train: after 10 steps packed and separate rows agree within 1e-4 (relative and
    absolute). float32 rounds at ~6e-8 per operation; batched and single GEMMs sum in different orders
    (cuBLAS picks different kernels for them), and 10 Adam steps amplify that by well under 1e3. TF32, which
    would round at ~5e-4, is off for matmuls in torch's default and is never switched on by the project."""
    torch.set_default_dtype(torch.float32)
    cfg = _tiny(architecture="BERT", n_steps=10)
    assert_rows_equal(train_members([cfg], SEEDS, device=device), _solo(cfg, SEEDS, device), tol=1e-4)


def test_packs_of_members_equal_one_pack() -> None:
    cfg = _tiny(architecture="MTE", n_steps=20)
    one = train_members([cfg], SEEDS, pack=None)
    assert_rows_equal(train_members([cfg], SEEDS, pack=2), one)
    assert_rows_equal(train_members([cfg], SEEDS, pack="auto"), one)
    with pytest.raises(ValueError, match="pack"):
        train_members([cfg], SEEDS, pack=0)


def test_a_pack_the_cpu_budget_turns_into_one_member_at_a_time_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """Packing asked for, but one member's activations exceed the CPU packing budget: the members train one after
    another (as they must) and a PackingWarning names the budget, never silently."""
    import trainables.richter2020.loop as loop
    from trainables.families import PackingWarning

    cfg = _tiny(n_steps=10)
    monkeypatch.setattr(loop, "CPU_PACK_BYTES", loop.member_bytes(cfg) - 1)
    assert loop.members_per_pack(cfg, "cpu") == 1
    with pytest.warns(PackingWarning, match=r"these 2 members train one after another on cpu: one member's largest "
                                            r"activation \(0\.\d MiB.*exceeds the CPU packing budget of 0 MiB"):
        rows = train_members([cfg], [0, 1], pack="auto")
    assert {r["seed"] for r in rows} == {0, 1}


def test_a_packs_batches_are_each_members_own_and_a_task_of_its_own_samples_them() -> None:
    """A step's K batches come from one call, yet member k's batch is its own: the tokens and labels it gets alone
    (K = 1), at any step. A task whose ``sample`` is more than the labels of its draw is sampled through its own
    ``sample``, for all members at once."""
    from trainables.counter_draws import Draws
    from trainables.richter2020.loop import Pack
    from trainables.richter2020.recipe import STREAM_TRAIN, stream_keys
    from trainables.richter2020.tasks.mode import ModeTask

    cfg = _tiny(task="cases", case_mix="0.4,0.3,0.3")
    pack = Pack([cfg] * len(SEEDS), SEEDS)
    counter = torch.tensor(5)
    tokens, labels = pack._sample(pack.train_keys, counter, cfg.seq_len)
    alone = [pack.task.sample(cfg.batch_size, cfg.seq_len, Draws(stream_keys([s], STREAM_TRAIN, "cpu"), 5))
             for s in SEEDS]
    assert torch.equal(tokens, torch.cat([t for t, _ in alone]))
    assert torch.equal(labels, torch.cat([lab for _, lab in alone]))
    assert len(set(labels.flatten().tolist())) > 1  # real labels, not a constant
    assert not torch.equal(tokens, pack._sample(pack.train_keys, counter + 1, cfg.seq_len)[0])  # the next step differs

    class ConstantLabels(ModeTask):  # labels that are not a function of the tokens
        def sample(self, batch_size: int, seq_len: int, draws: Draws) -> tuple[torch.Tensor, torch.Tensor]:
            tokens = self.draw(batch_size, seq_len, draws)
            return tokens, torch.full(tokens.shape[:2], 7)

    pack.task = ConstantLabels(vocab_size=8)
    _, labels = pack._sample(pack.train_keys, counter, cfg.seq_len)
    assert labels.shape == (len(SEEDS), cfg.batch_size) and set(labels.flatten().tolist()) == {7}
