"""Which trackers exist, and ``KIND[=TARGET]`` as the command line gives it (study.tracking)."""

from __future__ import annotations

import dataclasses
import importlib.util

from core.errors import OneLineError

#: Tracker kinds -> (module that must import, the pyproject extra that installs it).
TRACKERS = {"mlflow": ("mlflow", "mlflow"), "tensorboard": ("tensorboard", "tensorboard"), "wandb": ("wandb", "wandb")}


class TrackError(OneLineError, ValueError):
    """A tracker that cannot be used as asked (unknown, not installed, no target): one line, bad input."""


@dataclasses.dataclass(frozen=True)
class TrackSpec:
    """One tracker: its kind and target (MLflow tracking URI, TensorBoard directory, W&B project)."""

    kind: str
    target: str | None = None
    where: str | None = None  # W&B: the local directory of its run files (resolved on the driver)


def parse_track(text: str, option: str = "--track") -> TrackSpec:
    """``mlflow``, ``mlflow=URI``, ``tensorboard[=DIR]``, ``wandb[=PROJECT]``; checks that the extra is installed."""
    kind, _, target = text.partition("=")
    if kind not in TRACKERS:
        raise TrackError(f"invalid {option} {text!r}; allowed: mlflow[=URI], tensorboard[=DIR], wandb[=PROJECT]")
    module, extra = TRACKERS[kind]
    if importlib.util.find_spec(module) is None:
        raise TrackError(f"{option} {kind} needs the {extra} extra: pip install 'attention-studies[{extra}]'")
    return TrackSpec(kind, target or None)
