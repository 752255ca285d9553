"""What the trainables tests share: the tiny training configuration (d=8, N=8, a few steps) and the row
comparison of packed against one-seed-at-a-time training."""

import math
from typing import Any

import pytest
import torch

from trainables.richter2020.config import TrainConfig

# Where the device-parametrized tests train: the CPU always, CUDA too on a machine that has it (pytest's summary
# says which). Packed == separate must hold on every device the trials may run on.
DEVICES = ["cpu", *(["cuda"] if torch.cuda.is_available() else [])]


def tiny_config(**overrides: object) -> TrainConfig:
    """NAP on cases at d=8, N=8, 20 steps with an evaluation every 10; any field can be overridden."""
    base: dict[str, object] = dict(architecture="NAP", task="cases", d_model=8, n_heads=2, seq_len=8,
                                   n_steps=20, eval_every=10, eval_batches=2, case_eval_per_case=10)
    return TrainConfig(**{**base, **overrides})  # type: ignore[arg-type]


def assert_rows_equal(packed: list[dict[str, Any]], solo: list[dict[str, Any]], tol: float = 1e-6) -> None:
    """Row for row equal, floats within ``tol`` (NaN matches NaN); wall time is ignored."""
    assert len(packed) == len(solo)
    for p, s in zip(packed, solo, strict=True):
        for key, value in s.items():
            if key == "wall_time_s":
                continue
            if isinstance(value, float):
                if math.isnan(value):
                    assert math.isnan(p[key]), (key, s["seed"], s["step"])
                else:
                    assert p[key] == pytest.approx(value, abs=tol, rel=tol), (key, s["seed"], s["step"])
            else:
                assert p[key] == value, (key, s["seed"], s["step"])
