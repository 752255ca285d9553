"""`study run --packing auto|on|off` against what the study's trials can do, said before launch.

A request that no trial of the run can honour is refused in one line (exit status 2): ``--packing on`` where every
family's seeds never stack (``Family.packs_when='never'``: the pooling_scale measurements, a plugin family such as the
worked example's MQAR), ``--packing off`` where the study packs learning rates into one trial
(``learning_rates_per_trial`` > 1: those always train as one model). Where only some trials cannot (``--packing on``
for a study whose tasks span a family that packs and one that never does), a warning line names the family, why,
and how many trials train otherwise, and the others run as asked. Trials on the CPU that a family's cap
(``Family.members_per_pack``: the Richter family's CPU packing budget) turns into one member at a time are counted in
a warning line too. In a trial, :func:`trainables.families.packs` and the family say the same with a
``PackingWarning``: nothing trains otherwise than asked without a word.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from search_spaces.schema import StudyError
from search_spaces.study import Study
from study.run.points import point_text, trial_points
from study.trial.devices import packing_device
from study.trial.trainable import family_of, member_configs, split_config
from trainables.families import ModelFamily


def check_packing(study: Study, packing: str, *, gpus_per_trial: float = 0.0, simulated_gpus: bool = False,
                  where: Mapping[str, tuple[Any, ...]] | None = None, echo: Callable[[str], None] = print) -> None:
    """StudyError naming the family and what is allowed when no trial of the run can honour ``packing`` (module
    docstring); a warning line through ``echo`` for the trials of a family that cannot, and for CPU trials that a
    family's cap trains one member at a time."""
    from trainables.families import refusal

    trials = _trials(study, where)
    refused: dict[str, int] = {}  # why -> trials
    for trial in trials:
        why = refusal(trial.family, packing, n_configs=trial.n_configs)
        if why:
            refused[why] = refused.get(why, 0) + 1
    if refused and sum(refused.values()) == len(trials):
        allowed = "--packing auto or on" if packing == "off" else "--packing auto or off"
        raise StudyError(f"study {study.name}: {next(iter(refused))}; allowed: {allowed}")
    unit = "trials" if study.sampler == "grid" else "tasks"  # a sampler's trials are not known before launch
    for why, count in refused.items():
        echo(f"warning: {why}: {count} of the run's {len(trials)} {unit} (the others pack as asked)")
    if gpus_per_trial > 0 and not simulated_gpus:
        return  # on a GPU no family caps a pack
    capped = [t.point for t in trials if _unpacked_on_cpu(study, t, packing, gpus_per_trial)]
    if capped:
        echo(f"warning: --packing {packing}: {len(capped)} of {len(trials)} trials train their members one after "
             f"another on the CPU, e.g. {point_text(capped[0])}: one member's largest activation exceeds its family's "
             "CPU packing budget (a PackingWarning in each such trial says how much)")


@dataclass(frozen=True)
class _PointAndFamily:
    """What check_packing judges of one trial (study.trial.spec.Trial is the trial itself): its point, the family
    that trains it and its hyperparameters."""

    point: dict[str, Any]
    family: ModelFamily
    hyper: dict[str, Any] | None  # None: a sampled study's task, whose points the sampler draws

    @property
    def n_configs(self) -> int:
        """Learning rates packed into the trial (a list in its point), else 1."""
        rates = (self.hyper or {}).get("learning_rate")
        return len(rates) if isinstance(rates, list | tuple) else 1


def trial_families(study: Study, where: Mapping[str, tuple[Any, ...]] | None = None) -> list[ModelFamily]:
    """The family of each trial of ``where``'s subset (a sampled study: of each task)."""
    return [trial.family for trial in _trials(study, where)]


def _trials(study: Study, where: Mapping[str, tuple[Any, ...]] | None) -> list[_PointAndFamily]:
    """Each trial of ``where``'s subset of a grid; for a sampled study (whose points the sampler draws, one learning
    rate per trial) one per task, without a configuration."""
    from trainables.catalog import family_for_task

    if study.sampler != "grid":
        return [_PointAndFamily({"task": task}, family_for_task(task), None) for task in study.tasks]
    trials = []
    for point in trial_points(study, where).values():
        hyper, _ = split_config(study, point)
        trials.append(_PointAndFamily(point, family_of(hyper), hyper))
    return trials


def _unpacked_on_cpu(study: Study, trial: _PointAndFamily, packing: str, gpus_per_trial: float) -> bool:
    """Whether a trial that would pack trains one member at a time on the CPU because of its family's cap (its
    configuration built only then)."""
    from trainables.families import packs

    family = trial.family
    if trial.hyper is None or family.members_per_pack is None or trial.n_configs * len(study.seeds) < 2:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # refusals are check_packing's to say
        decided = packs(family, packing, packing_device(gpus_per_trial, "cpu"), n_configs=trial.n_configs)
    return decided and family.members_per_pack(member_configs(trial.hyper, family)[0], "cpu") == 1

