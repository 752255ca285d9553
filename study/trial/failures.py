"""A trial that fails: a bug fails it once, the infrastructure's faults are retried.

A deterministic error raised by the model, task or configuration code (a TypeError, a ValueError, an assertion, a
shape mismatch: every exception not listed below) would fail the same way on every attempt, so the trial ends at
its first occurrence: :func:`fail_once` writes ``failed/<key>.json`` with the whole traceback and reports the trial
as done and failed (study.run.progress counts it). Infrastructure faults are left to Ray Tune's retries
(``study.run.tuner.MAX_FAILURES``): a killed worker or a lost node never reaches this code (Ray raises them in the
driver), and :func:`is_infrastructure` names the ones that do: out of memory, I/O and connection errors (storage
that did not answer), and a node that lacks the GPU the trial asked for (study.trial.devices.DeviceError: another
node may have it).
"""

from __future__ import annotations

import math
import socket
import time
import traceback
from collections.abc import Callable
from typing import Any

from study.results.storage import StudyStorage
from study.trial.devices import DeviceError

#: What a RuntimeError says when a device ran out of memory or failed (torch raises these as RuntimeError).
_DEVICE_FAULTS = ("out of memory", "CUDA error", "CUBLAS_STATUS", "cuDNN error", "NCCL error")


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
    return isinstance(error, RuntimeError) and any(fault in str(error) for fault in _DEVICE_FAULTS)


def last_line(error: BaseException) -> str:
    """``TypeError: weights() takes 3 positional arguments but 4 were given``: the error as one line."""
    return "".join(traceback.format_exception_only(error)).strip().splitlines()[-1].strip()


def fail_once(storage: StudyStorage, key: str, point: dict[str, Any], error: BaseException, *, node: str,
              report: Callable[[dict[str, Any]], None]) -> None:
    """End the trial as failed without a retry: its record (whole traceback) in ``failed/<key>.json``, and a last
    report that says so (``failed``: the error's line) to the driver."""
    text = "".join(traceback.format_exception(error))
    storage.write_failed(key, {"trial_key": key, "point": point, "error": text, "retried": False,
                               "why": "an error in the trial's code: every attempt would fail the same way",
                               "node": node, "hostname": socket.gethostname(), "time": time.time()})
    report({"objective": math.nan, "seed": -1, "step": -1, "failed": last_line(error)})
