"""The model-family protocol: what a trial's ``task`` selects and the Tune adapter calls.

Each paper brings its own model, training loop and hyperparameters (Richter & Wattenhofer's encoder on
synthetic classification, the Neural Data Router on CTL, Gros' bilayer on NT series ...). A family is one
package under ``trainables/`` named after its paper (``richter2020/``, ``csordas2021/``, ``gros2024/``;
``pooling_scale/`` measures Fig. 1's poolings at initialisation through the same protocol, training nothing)
whose ``family.py`` registers one :class:`Family` (:func:`trainables.catalog.register_family`) and is an entry point
of the plugin group in pyproject.toml. A family of your own is a module of yours that does the same
(docs/extending.md): nothing in this tree lists the families.

* ``config``: a frozen dataclass (``trainables.config_fields.ConfigFields``) with ``field_names()``,
  ``from_dict(d)`` (ValueError naming the field on an unknown key or bad value) and ``resolved()`` (every
  hyperparameter as the concrete value used: the Parquet columns);
* ``train(configs, seeds, *, device, on_eval, packed)``: trains every seed of the configuration (``configs``
  holds one config, or one per packed learning rate when ``packs_learning_rates``) and returns a
  :class:`trainables.rows.TrialResult`: one row per (seed, evaluation), written by
  :class:`trainables.rows.SeedRows`, plus optional artifact tables. Whether the seeds train as one stacked
  model is :func:`packs`'s answer, the one place that decides it;
* ``tiny(config)``: the same configuration with the smallest budget that still builds the model, trains one step
  on a tiny batch and evaluates once (e.g. ``n_steps=1``, a batch of 2): preflight trains it on the CPU before Ray
  starts, so that a component that fails does so in one line before launch (study.run.preflight).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Literal

from trainables.rows import TrialResult

TrainFn = Callable[..., TrialResult]
TinyFn = Callable[[Any], Any]


@dataclass(frozen=True, kw_only=True)
class Family:
    """One model family.

    Attributes:
        name: stable name (``richter2020``, ``csordas2021`` ...).
        tasks: the task names this family trains (each task belongs to exactly one family); a task registry (read
            whenever asked) lets a plugin add tasks to the family.
        config: the config dataclass (``field_names``, ``from_dict``, ``resolved``).
        train: ``train(configs, seeds, *, device, on_eval, packed) -> TrialResult``.
        tiny: ``tiny(config) -> config``: the smallest run of that configuration (preflight's check).
        packs_learning_rates: whether ``configs`` may hold several learning rates trained as one model.
        packing: when a trial's seeds train as one stacked model unless the study says otherwise (:func:`packs`):
            ``always``, on a ``gpu`` (where small models are launch-bound), or ``never`` (seeds that cannot be
            stacked; an explicit request is then ignored).
    """

    name: str
    tasks: Collection[str]
    config: type
    train: TrainFn
    tiny: TinyFn
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
