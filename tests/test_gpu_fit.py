"""Packs that fill the GPU (issue 49 item 4): the pack size one measured step says fits the trial's share of the
device, and the share a trial holds. The measurement itself runs where CUDA is (the device-parametrized case);
everywhere the arithmetic and the probe's work are checked."""

from __future__ import annotations

import pytest
import torch

from tests.tiny import DEVICES, tiny_config
from trainables.gpu_share import current_gpu_share, gpu_share
from trainables.richter2020 import loop
from trainables.richter2020.fit import SAFETY, members_that_fit


def test_the_largest_pack_whose_step_fits_the_budget() -> None:
    """A step's bytes are linear in K (fixed cost + K x a member's): the fit inverts the line measured at K = 1, 2."""
    measured: list[int] = []

    def step_bytes(k: int) -> int:
        measured.append(k)
        return 1_000 + 300 * k

    assert members_that_fit(step_bytes, budget=10_000) == 30  # (10,000 - 1,000) // 300
    assert measured == [1, 2]  # two probes, whatever the budget
    assert members_that_fit(step_bytes, budget=1_000 + 300 * 7) == 7  # exactly full
    assert members_that_fit(step_bytes, budget=500) == 1  # not even one fits: one at a time, never zero
    assert members_that_fit(lambda k: 4_096, budget=8_192) == 8_192 - 4_095  # no growth measured: a byte a member


def test_a_trial_holds_its_share_of_the_gpu() -> None:
    assert current_gpu_share() == 1.0  # outside a trial: the whole device
    with gpu_share(0.25):
        assert current_gpu_share() == 0.25
        with gpu_share(2.0):  # a trial of two GPUs trains on one of them
            assert current_gpu_share() == 1.0
    assert current_gpu_share() == 1.0
    with pytest.raises(ValueError, match="invalid gpu share=0; allowed: a number > 0"):
        with gpu_share(0):
            pass


def test_the_probe_is_one_step_and_one_evaluation() -> None:
    pack = loop.Pack([tiny_config()] * 2, [0, 1])
    pack.probe()
    assert int(pack.step_counter) == 1 and int(pack.val_counter) == tiny_config().eval_batches
    assert all(not rows.rows for rows in pack.rows)  # nothing recorded


@pytest.mark.parametrize("device", DEVICES)
def test_members_per_pack_on_each_device(device: str) -> None:
    """CPU: the activation budget; CUDA: measured, and a quarter of the device holds about a quarter of the pack."""
    cfg = tiny_config(architecture="MTE", d_model=64, n_heads=4, seq_len=64, batch_size=32)
    if device == "cpu":
        assert loop.members_per_pack(cfg, "cpu") == max(1, loop.CPU_PACK_BYTES // loop.member_bytes(cfg))
        return
    whole = loop.members_per_pack(cfg, device)
    with gpu_share(0.25):
        quarter = loop.members_per_pack(cfg, device)
    assert whole is not None and quarter is not None and whole > 100  # a small model: hundreds fit on a GPU
    assert 0.2 * whole <= quarter <= 0.3 * whole, (whole, quarter)
    total = torch.cuda.get_device_properties(device).total_memory
    assert whole * loop.member_bytes(cfg) < SAFETY * total  # it fits by the activation estimate too
