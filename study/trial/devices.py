"""Where a trial trains: the device policy of `study run`.

A trial that asks Ray for a GPU trains on CUDA. If CUDA is not there, the node is misconfigured (a CPU
build of torch, a missing driver, a GPU that Ray counts but torch cannot see): the trial fails with one
line naming the node, instead of quietly training on the CPU at a fraction of the speed while the study
reports GPU resources. Only `study run --simulated-gpus` allows CPU training for GPU trials: meant for a
cluster whose GPUs are declared but not real (Ray's local fake autoscaler, `tests/test_autoscaling.py`).
Every row records the device the trial really trained on (`cpu`, `cuda:0`, ...); whether its seeds pack
follows the device it asked for (:func:`packing_device`).
"""

from __future__ import annotations

from collections.abc import Callable

from core.errors import OneLineError


class DeviceError(OneLineError, RuntimeError):
    """A trial cannot train on the device its resources promise (one line: the trial's failure reason)."""

    exit_code = 1  # the node's fault, not the input's


def _cuda() -> tuple[bool, str]:
    """(CUDA usable, the device torch would use) on this process's node."""
    import torch

    if not torch.cuda.is_available():
        return False, f"torch {torch.__version__}"
    return True, f"cuda:{torch.cuda.current_device()}"


def trial_device(gpus_per_trial: float, *, simulated_gpus: bool = False, where: str = "this node",
                 probe: Callable[[], tuple[bool, str]] = _cuda) -> str:
    """The torch device of a trial that Ray gave `gpus_per_trial` GPUs (fractions share one GPU).

    0 GPUs: ``cpu``. Otherwise ``cuda:N`` (Ray has already narrowed CUDA_VISIBLE_DEVICES to the GPU it
    assigned); without CUDA, ``cpu`` only when `simulated_gpus`, else :class:`DeviceError`. `where` names
    the node in the message; `probe` (CUDA usable, device or torch version) exists for tests: CUDA cannot be
    had on the CPU-only machines this project is developed on.
    """
    if gpus_per_trial <= 0:
        return "cpu"
    usable, detail = probe()
    if usable:
        return detail
    if simulated_gpus:
        return "cpu"
    raise DeviceError(f"trial asked for {gpus_per_trial:g} GPU but CUDA is unavailable on {where} ({detail}): "
                      "a misconfigured GPU node; only `study run --simulated-gpus` (GPUs that a test cluster "
                      "declares but does not have) trains GPU trials on the CPU")


def packing_device(gpus_per_trial: float, device: str) -> str:
    """The device whose packing default a trial follows (:func:`trainables.families.packs` decides): the one it
    trains on, except that a GPU trial follows a GPU's even where `--simulated-gpus` trains it on the CPU, so a
    study on simulated GPUs runs the same packed path through Ray as on real ones."""
    return "cuda" if gpus_per_trial > 0 and device == "cpu" else device
