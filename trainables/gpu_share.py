"""The share of its GPU a trial holds (Ray's fractional ``--gpus-per-trial``): what a family may fill with one packed
model. Set around a trial's training by the trial runner (study.trial.trainable); 1 (the whole device) elsewhere."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

_SHARE: contextvars.ContextVar[float] = contextvars.ContextVar("gpu_share", default=1.0)


@contextlib.contextmanager
def gpu_share(share: float) -> Iterator[None]:
    """Training inside this block may use ``share`` of its GPU's memory (0 < share <= 1; a trial of several GPUs
    trains on one of them: 1)."""
    if not 0 < share:
        raise ValueError(f"invalid gpu share={share!r}; allowed: a number > 0")
    token = _SHARE.set(min(1.0, share))
    try:
        yield
    finally:
        _SHARE.reset(token)


def current_gpu_share() -> float:
    """The share of its GPU the running trial holds (1 outside a trial)."""
    return _SHARE.get()
