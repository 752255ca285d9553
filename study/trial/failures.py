"""A trial that fails: a bug fails it once, the infrastructure's faults are retried.

A deterministic error raised by the model, task or configuration code (a TypeError, a ValueError, an assertion, a
shape mismatch: every exception not listed below) would fail the same way on every attempt, so the trial ends at
its first occurrence: :func:`fail_once` writes ``failed/<key>.json`` with the whole traceback and reports the trial
as done and failed (study.run.progress counts it). Infrastructure faults are left to Ray Tune's retries
(``study.run.tuner.MAX_FAILURES``): a killed worker or a lost node never reaches this code (Ray raises them in the
driver), and :func:`is_infrastructure` names the ones that do: out of memory, I/O and connection errors (storage
that did not answer), and a node that lacks the GPU the trial asked for (study.trial.devices.DeviceError: another
node may have it).

CUDA errors (torch raises them as RuntimeError ``CUDA error: ...``) are the device's, retried, with one exception: a
**device-side assert** (``device-side assert triggered``) is a kernel's check of its inputs failing, e.g. an index past
an embedding or a target past the classes: the model's bug, the same on every attempt, so it fails once. An illegal
memory access, a launch failure or a misaligned address stay the infrastructure's: this project's models run torch's
own kernels only, where these come from the driver, the hardware or a process sharing the GPU, and another attempt
may pass. Either kind leaves the process's CUDA context broken (every later CUDA call repeats the error): a retried
error ends its worker (Tune replaces a worker whose trial raised), and after a device-side assert the worker, whose
trial ended normally, may be handed the next trial: a CUDA error there is the broken context's, not that trial's code,
and is retried (on a new worker).
"""

from __future__ import annotations

import math
import socket
import time
import traceback
from collections.abc import Callable
from typing import Any

from core.errors import one_line
from study.results.storage import TrialStore
from study.trial.devices import DeviceError

#: What a RuntimeError says when a device ran out of memory or failed (torch raises these as RuntimeError).
_DEVICE_FAULTS = ("out of memory", "CUDA error", "CUBLAS_STATUS", "cuDNN error", "NCCL error")
#: What a CUDA error says when a kernel's own check of its inputs failed: the model's bug (module docstring).
_DEVICE_BUGS = ("device-side assert triggered",)
#: Set once a trial of this process failed with a device-side assert: its CUDA context is broken for good.
_BROKEN_CUDA: list[str] = []


def is_infrastructure(error: BaseException) -> bool:
    """Whether a trial's exception is the infrastructure's (retried) rather than its code's (failed once)."""
    if isinstance(error, MemoryError | OSError | DeviceError):
        return True  # OSError: I/O, connection and timeout errors alike
    try:
        import torch

        if isinstance(error, torch.OutOfMemoryError):
            return True
    except (ImportError, AttributeError):
        pass
    if not isinstance(error, RuntimeError) or not any(fault in str(error) for fault in _DEVICE_FAULTS):
        return False
    return bool(_BROKEN_CUDA) or not is_device_bug(error)


def is_device_bug(error: BaseException) -> bool:
    """Whether a CUDA error is a device-side assert: a kernel refused the model's inputs (module docstring)."""
    return isinstance(error, RuntimeError) and any(bug in str(error) for bug in _DEVICE_BUGS)


def fail_once(storage: TrialStore, key: str, point: dict[str, Any], error: BaseException, *, node: str,
              report: Callable[[dict[str, Any]], None]) -> None:
    """End the trial as failed without a retry: its record (whole traceback) in ``failed/<key>.json``, and a last
    report that says so (``failed``: the error's line) to the driver."""
    text = "".join(traceback.format_exception(error))
    if is_device_bug(error):
        _BROKEN_CUDA.append(one_line(error))  # the next trial of this worker must not be blamed for it
    storage.write_failed(key, {"trial_key": key, "point": point, "error": text, "retried": False,
                               "why": "an error in the trial's code: every attempt would fail the same way",
                               "node": node, "hostname": socket.gethostname(), "time": time.time()})
    report({"objective": math.nan, "seed": -1, "step": -1, "failed": one_line(error)})
