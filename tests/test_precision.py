"""--precision bf16 and fp64: a trial trains under bf16 autocast or in float64, recorded in every row."""

from __future__ import annotations

import pytest

from search_spaces import Study
from search_spaces.study import StudyError
from study.results.storage import StudyStorage
from study.trial.resources import Resources
from study.trial.trainable import precision_context, run_trial
from tests.tiny import DEVICES

_STUDY = Study(name="test.precision", goal="bf16 autocast of a trial", tasks=("mode",),
               scientific={"architecture": ("MTE",)}, nuisance={"learning_rate": (0.003,)},
               fixed={"n_steps": 40, "eval_every": 20, "eval_batches": 2, "batch_size": 8, "seq_len": 16,
                      "d_model": 16}, seeds=(0,))


def _rows(tmp_path, precision: str, device: str = "cpu") -> list[dict]:
    storage = StudyStorage(str(tmp_path / precision), _STUDY.directory)
    point = {"architecture": "MTE", "learning_rate": 0.003}
    run_trial(_STUDY, storage, point, resources=Resources(precision=precision), device=device)
    (key,) = storage.finished_keys()
    return storage.read_trial(key).to_pylist()


@pytest.mark.parametrize("device", DEVICES)
def test_bf16_rows_say_so_and_differ_from_fp32_by_rounding_only(tmp_path, one_torch_thread, device: str) -> None:
    fp32, bf16 = _rows(tmp_path, "fp32", device), _rows(tmp_path, "bf16", device)
    assert {r["precision"] for r in fp32} == {"fp32"}
    assert {r["precision"] for r in bf16} == {"bf16"}
    assert {r["device"] for r in fp32 + bf16} == {device}
    first32, first16 = fp32[0]["train_loss"], bf16[0]["train_loss"]
    assert first32 != first16  # bf16 matmuls really ran
    assert abs(first32 - first16) < 0.05 * first32  # ... and only rounding changed


def test_unknown_precision_is_one_clear_line() -> None:
    with pytest.raises(StudyError, match=r"invalid --precision .fp8.; allowed: fp32, bf16, fp64"):
        Resources(precision="fp8")
    with pytest.raises(ValueError, match=r"invalid precision=.fp16.; allowed: fp32, bf16, fp64"):
        precision_context("cpu", "fp16")


def test_fp64_rows_say_so_repeat_bit_for_bit_and_leave_float32_the_default(tmp_path, one_torch_thread) -> None:
    import torch

    fp32, first, second = _rows(tmp_path / "a", "fp32"), _rows(tmp_path / "b", "fp64"), _rows(tmp_path / "c", "fp64")
    assert {r["precision"] for r in first} == {"fp64"}
    assert torch.get_default_dtype() == torch.float32  # the context restored it
    from study.run.reproduce import VOLATILE as volatile
    strip = [{k: v for k, v in r.items() if k not in volatile} for r in first]
    assert strip == [{k: v for k, v in r.items() if k not in volatile} for r in second]
    assert first[0]["train_loss"] != fp32[0]["train_loss"]  # float64 really ran (other draws, other rounding)
    assert first[0]["n_params"] == fp32[0]["n_params"]
