"""Model families: which config type and training function a trial's ``task`` selects.

Each paper brings its own model, training loop and hyperparameters (Richter & Wattenhofer's encoder on
synthetic classification, the Neural Data Router on CTL, Gros' bilayer on NT series ...). A family bundles
them behind one interface so the Tune adapter stays the same for all of them:

* ``config``: a frozen dataclass with ``field_names()``, ``from_dict(d)`` (ValueError naming the field on
  bad input) and ``resolved()`` (every hyperparameter as the concrete value used: the Parquet columns);
* ``train(configs, seeds, *, device, on_eval, packed)``: trains every seed of the configuration (``configs``
  holds one config, or one per packed learning rate when ``packs_learning_rates``) and returns a
  :class:`TrialResult`: one row per (seed, evaluation) plus optional artifact tables (e.g. the attention
  maps of a fixed probe input) that the Tune adapter stores beside the trial's rows.

A task name belongs to exactly one family; :func:`family_for_task` finds it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from trainables.registry import Registry

OnEval = Callable[[dict[str, Any]], None]
Row = dict[str, Any]


@dataclass
class TrialResult:
    """What training one configuration for all its seeds produced.

    Attributes:
        rows: one dict per (seed, evaluation step): seed, step, epoch, metrics, status, wall_time_s,
            n_params, device (the hyperparameter columns are added by the caller).
        artifacts: named extra tables (lists of row dicts), each stored as
            ``<study>/artifacts/<name>/<trial_key>.parquet``.
    """

    rows: list[Row]
    artifacts: dict[str, list[Row]] = field(default_factory=dict)


TrainFn = Callable[..., TrialResult]


@dataclass(frozen=True, kw_only=True)
class Family:
    """One model family.

    Attributes:
        name: stable name (``richter2020``, ``csordas2021`` ...).
        tasks: a callable returning the task names this family trains (called lazily: registries fill
            on import).
        config: the config dataclass (``field_names``, ``from_dict``, ``resolved``).
        train: ``train(configs, seeds, *, device, on_eval, packed) -> TrialResult``.
        packs_learning_rates: whether ``configs`` may hold several learning rates trained as one model.
    """

    name: str
    tasks: Callable[[], Sequence[str]]
    config: type
    train: TrainFn
    packs_learning_rates: bool = False


FAMILIES: Registry[Family] = Registry("model family")


def family_for_task(task: str) -> Family:
    """The family that trains ``task``; ValueError listing every known task otherwise."""
    _load()
    known: list[str] = []
    for name in FAMILIES:
        family = FAMILIES.get(name)
        tasks = list(family.tasks())
        if task in tasks:
            return family
        known.extend(tasks)
    raise ValueError(f"invalid task={task!r}; allowed: {', '.join(known)}")


def all_tasks() -> list[str]:
    """Every task name of every family, in registration order."""
    _load()
    return [t for name in FAMILIES for t in FAMILIES.get(name).tasks()]


def _load() -> None:
    """Import the modules that register families (each registers itself on import)."""
    import trainables.gros.family  # noqa: F401
    import trainables.ndr.train  # noqa: F401
    import trainables.richter_family  # noqa: F401
