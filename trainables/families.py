"""The model-family protocol: what a trial's ``task`` selects and the Tune adapter calls.

Each paper brings its own model, training loop and hyperparameters (Richter & Wattenhofer's encoder on
synthetic classification, the Neural Data Router on CTL, Gros' bilayer on NT series ...). A family is one
package under ``trainables/`` named after its paper (``richter2020/``, ``csordas2021/``, ``gros2024/``;
``pooling_scale/`` measures Fig. 1's poolings at initialisation through the same protocol, training nothing)
that exposes one :class:`Family` value in its ``family.py``; ``trainables/catalog.py`` is the one place that
lists them. A fifth paper's models go in a fifth package plus one line there.

* ``config``: a frozen dataclass (``trainables.config_fields.ConfigFields``) with ``field_names()``,
  ``from_dict(d)`` (ValueError naming the field on an unknown key or bad value) and ``resolved()`` (every
  hyperparameter as the concrete value used: the Parquet columns);
* ``train(configs, seeds, *, device, on_eval, packed)``: trains every seed of the configuration (``configs``
  holds one config, or one per packed learning rate when ``packs_learning_rates``) and returns a
  :class:`trainables.rows.TrialResult`: one row per (seed, evaluation), written by
  :class:`trainables.rows.SeedRows`, plus optional artifact tables. Whether the seeds train as one stacked
  model is :func:`packs`'s answer, the one place that decides it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from trainables.rows import TrialResult

TrainFn = Callable[..., TrialResult]


@dataclass(frozen=True, kw_only=True)
class Family:
    """One model family.

    Attributes:
        name: stable name (``richter2020``, ``csordas2021`` ...).
        tasks: the task names this family trains (each task belongs to exactly one family).
        config: the config dataclass (``field_names``, ``from_dict``, ``resolved``).
        train: ``train(configs, seeds, *, device, on_eval, packed) -> TrialResult``.
        packs_learning_rates: whether ``configs`` may hold several learning rates trained as one model.
        packing: when a trial's seeds train as one stacked model unless the study says otherwise (:func:`packs`):
            ``always``, on a ``gpu`` (where small models are launch-bound), or ``never`` (seeds that cannot be
            stacked; an explicit request is then ignored).
    """

    name: str
    tasks: tuple[str, ...]
    config: type
    train: TrainFn
    packs_learning_rates: bool = False
    packing: Literal["always", "gpu", "never"] = "never"


def packs(family: Family, packed: bool | None, device: str, *, n_configs: int = 1) -> bool:
    """Whether a trial of ``family`` trains its seeds (and packed learning rates) as one stacked model.

    ``packed``: the study's choice (None: the family's default). ``device``: where the trial trains, or where
    it stands in for (a GPU trial on simulated GPUs decides as on a GPU: :func:`study.trial.devices.packing_device`).
    ``n_configs`` > 1 (packed learning rates) always train as one model: that is what they are for.
    """
    if family.packing == "never":
        return False
    if n_configs > 1:
        return True
    if packed is not None:
        return packed
    return family.packing == "always" or not str(device).startswith("cpu")
