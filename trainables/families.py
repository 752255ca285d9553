"""The model-family protocol: what a trial's ``task`` selects and the Tune adapter calls.

Each paper brings its own model, training loop and hyperparameters (Richter & Wattenhofer's encoder on
synthetic classification, the Neural Data Router on CTL, Gros' bilayer on NT series ...). A family is one
package under ``trainables/`` named after its paper (``richter2020/``, ``csordas2021/``, ``gros2024/``;
``pooling_scale/`` measures Fig. 1's poolings and Yun's token-mixing limits at initialisation through the same
protocol, training nothing) whose ``family.py`` registers one :class:`Family`
(:func:`trainables.catalog.register_family`) and is an entry point of the plugin group in pyproject.toml. A family
of your own is a module of yours that does the same (docs/extending.md): nothing in this tree lists the families.
The study side reads a family through :class:`ModelFamily` (typed: ``make lint`` checks it), which every
:class:`Family` meets.

* ``config``: a frozen dataclass (``trainables.config_fields.ConfigFields``) with ``field_names()``,
  ``from_dict(d)`` (ValueError naming the field on an unknown key or bad value) and ``resolved()`` (every
  hyperparameter as the concrete value used: the Parquet columns);
* ``train(configs, seeds, *, device, on_eval, packed)``: trains every seed of the configuration (``configs``
  holds one config, or one per packed learning rate when ``packs_learning_rates``) and returns a
  :class:`trainables.rows.TrialResult`: one row per (seed, evaluation), written by
  :class:`trainables.rows.SeedRows`, plus optional artifact tables. ``packed`` is the decision (True: the seeds
  train as one stacked model), made by :func:`packs`, the one place that reads the study's request;
* ``tiny(config)``: the same configuration with the smallest budget that still builds the model, trains one step
  on a tiny batch and evaluates once (e.g. ``n_steps=1``, a batch of 2): preflight trains it on the CPU before Ray
  starts, so that a component that fails does so in one line before launch (study.run.preflight).

**Packing, one name per concept.** The request is ``packing``: ``auto`` (the family's default), ``on`` or ``off``
(``study run --packing``, study.json's ``run.packing``, ``study.trial.resources.Resources.packing``). What a family
can do is its ``packs_when``: ``always``, on a ``gpu``, or ``never``. The decision is ``packed`` (a bool, the argument
of ``train``). A request that cannot be honoured is never silently replaced: :func:`packs` says so with a
:class:`PackingWarning` naming the reason, and `study run` refuses it before launch where the study alone shows it
(study.run.packing).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection, Sequence
from dataclasses import InitVar, dataclass
from typing import Any, Literal, Protocol

from trainables.rows import OnEval, TrialResult

PacksWhen = Literal["always", "gpu", "never"]
#: What a study may ask (``study run --packing``): the family's default, or stacked seeds, or one seed at a time.
PACKING = ("auto", "on", "off")
PACKS_WHEN = ("always", "gpu", "never")


class PackingWarning(UserWarning):
    """A packing request that a trial cannot honour, and why (the trial trains the way it can)."""


class FamilyConfig(Protocol):
    """One configuration of a family: an instance of its ``config`` dataclass."""

    def resolved(self) -> dict[str, Any]:
        """Every hyperparameter as the concrete value used: the Parquet columns of the trial's rows."""
        ...


class ConfigClass(Protocol):
    """A family's ``config`` dataclass itself (``trainables.config_fields.ConfigFields`` gives it both methods)."""

    def field_names(self) -> list[str]: ...

    def from_dict(self, d: dict[str, Any], /) -> FamilyConfig: ...


class TrainFn(Protocol):
    """``train(configs, seeds, *, device, on_eval, packed)``: every seed of one configuration (``configs``: its
    config, or one per packed learning rate), one row per (seed, evaluation) through ``trainables.rows.SeedRows``.
    ``configs`` is ``Sequence[Any]``: each family's train takes its own config class."""

    def __call__(self, configs: Sequence[Any], seeds: Sequence[int], /, *, device: str, on_eval: OnEval | None,
                 packed: bool) -> TrialResult: ...


class ModelFamily(Protocol):
    """What a trial and the checks before launch use of a model family (study.trial.trainable, study.run.preflight,
    study.run.packing), read-only. :class:`Family` (below) is what a family registers and meets it; its docstring
    says what each member means."""

    @property
    def name(self) -> str: ...
    @property
    def tasks(self) -> Collection[str]: ...
    @property
    def config(self) -> ConfigClass: ...
    @property
    def train(self) -> TrainFn: ...
    @property
    def tiny(self) -> Callable[[Any], FamilyConfig]: ...
    @property
    def packs_learning_rates(self) -> bool: ...
    @property
    def packs_when(self) -> PacksWhen: ...
    @property
    def members_per_pack(self) -> Callable[[Any, str], int | None] | None: ...


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
        packs_when: when a trial's seeds train as one stacked model (:func:`packs`): ``always`` and on a ``gpu``
            (where small models are launch-bound) say what ``--packing auto`` does, ``on`` / ``off`` override it;
            ``never``: seeds that cannot be stacked, whatever the request (``--packing on`` is refused). Named for
            what it is, not ``packing``: that is the study's request.
        members_per_pack: optional ``(config, device) -> int | None``: how many members one stacked model holds on
            a device (None: all); a family that caps it (a CPU memory budget) says so here, so that a request to
            pack that the cap turns into one member at a time is said before launch (study.run.packing).
        packing: the name of ``packs_when`` before it was renamed: still accepted when a family is made (a
            DeprecationWarning), not a field (``family.packing`` reads None).
    """

    name: str
    tasks: Collection[str]
    config: ConfigClass
    train: TrainFn
    tiny: Callable[[Any], FamilyConfig]
    packs_learning_rates: bool = False
    packs_when: PacksWhen = "never"
    members_per_pack: Callable[[Any, str], int | None] | None = None
    packing: InitVar[str | None] = None

    def __post_init__(self, packing: str | None) -> None:
        if packing is not None:  # a family written before the rename: Family(..., packing="gpu")
            warnings.warn(f"Family(packing={packing!r}) of model family {self.name!r} is now "
                          f"Family(packs_when={packing!r}) (`packing` names the study's request)", DeprecationWarning,
                          stacklevel=3)
            object.__setattr__(self, "packs_when", packing)
        if self.packs_when not in PACKS_WHEN:
            raise ValueError(f"invalid packs_when={self.packs_when!r} of model family {self.name!r}; allowed: "
                             f"{', '.join(PACKS_WHEN)}")


def packing_request(packing: str | bool | None) -> str:
    """A packing request as ``auto``, ``on`` or ``off``; the spellings before the rename (None, True, False) too."""
    if packing is None or isinstance(packing, bool):
        return {None: "auto", True: "on", False: "off"}[packing]
    if packing not in PACKING:
        raise ValueError(f"invalid packing={packing!r}; allowed: {', '.join(PACKING)}")
    return packing


def packs(family: ModelFamily, packing: str | bool | None, device: str, *, n_configs: int = 1) -> bool:
    """Whether a trial of ``family`` trains its seeds (and packed learning rates) as one stacked model.

    ``packing``: the study's request (``auto``: the family's ``packs_when``; :func:`packing_request`). ``device``:
    where the trial trains, or where it stands in for (a GPU trial on simulated GPUs decides as on a GPU:
    :func:`study.trial.devices.packing_device`). ``n_configs`` > 1 (packed learning rates) always train as one
    model: that is what they are for. A request this cannot honour gives a :class:`PackingWarning` naming why.
    """
    why = refusal(family, packing, n_configs=n_configs)
    if why:
        warnings.warn(why, PackingWarning, stacklevel=2)
    if family.packs_when == "never":
        return False
    if n_configs > 1:
        return True
    request = packing_request(packing)
    if request != "auto":
        return request == "on"
    return family.packs_when == "always" or not str(device).startswith("cpu")


def refusal(family: ModelFamily, packing: str | bool | None, *, n_configs: int = 1) -> str | None:
    """Why a trial of ``family`` cannot do what ``packing`` asks, in words (None: it can)."""
    request = packing_request(packing)
    if request == "on" and family.packs_when == "never":
        return (f"--packing on cannot be honoured for model family {family.name!r}: its seeds never train as one "
                "stacked model (packs_when='never'); they train one after another")
    if request == "off" and n_configs > 1 and family.packs_when != "never":
        return (f"--packing off cannot be honoured for {n_configs} packed learning rates of model family "
                f"{family.name!r}: they train as one stacked model (what the study's learning_rates_per_trial asks)")
    return None
