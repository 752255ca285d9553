"""`study run --learning-rates-per-trial auto|all|N`: how many of a grid's learning rates one trial trains as one
stacked model (the study's ``learning_rates_per_trial``), decided before launch and kept for the study's life.

A trial's key is its point, and a point holds its learning rates, so a grouping names the trials: the study's
directory keeps the grouping its trials were trained with (``study.json``), and a run that asks for another while
trials are on disk is refused in one line (resuming under another grouping would train the same models again under
other keys). ``auto`` (the default) resumes with the grouping on disk; a new study on GPUs
(``--gpus-per-trial`` > 0) packs every learning rate of a configuration into one trial where it can: a fixed-budget
grid whose every trial's family trains several learning rates as one model, seeds packed (``--packing`` not off).
Each trial's family then packs as many of its members as one measured step says fit on its share of the GPU
(``trainables.richter2020.fit``); the rest of the members train in further packs of the same trial. Elsewhere
``auto`` keeps the study's own value (1 unless the study says more).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from search_spaces.schema import StudyError
from search_spaces.study import Study
from study.results.storage import StudyStorage
from study.trial.resources import Resources

CHOICES = "auto, all or an integer >= 1"


def parse_rates_per_trial(text: str) -> str | int:
    """``auto``, ``all`` or a positive integer; anything else a StudyError naming the option and what is allowed."""
    if text in ("auto", "all"):
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1 or str(value) != text.strip():
        raise StudyError(f"invalid --learning-rates-per-trial {text!r}; allowed: {CHOICES}")
    return value


def group_rates(study: Study, request: str | int, resources: Resources, storage: StudyStorage,
                echo: Callable[[str], None] = print, where: Mapping[str, tuple[Any, ...]] | None = None) -> Study:
    """The study with the learning-rate grouping this run trains (module docstring); a request the study cannot
    take, or one that differs from the grouping of the trials on disk, is a StudyError (one line)."""
    on_disk = _grouping_on_disk(storage)
    rates = study.axes.get("learning_rate")
    n_rates = len(rates.grid_values()) if rates is not None and rates.on_grid else 0
    if request == "auto":
        wanted = on_disk if on_disk is not None else _gpu_default(study, resources, n_rates, where)
    else:
        wanted = n_rates if request == "all" else int(request)
        if request == "all" and (study.sampler != "grid" or not n_rates):
            raise StudyError(f"invalid --learning-rates-per-trial all for study {study.name}; allowed: auto or 1 "
                             "(it has no grid of learning rates to pack)")
    if on_disk is not None and wanted != on_disk:
        raise StudyError(f"invalid --learning-rates-per-trial {request} for study {study.name}: its trials on disk "
                         f"pack {on_disk} learning rate(s) each; allowed: auto or {on_disk} (another grouping names "
                         "other trials and would train the same models again: a fresh --storage takes it)")
    if wanted == study.learning_rates_per_trial:
        return study
    grouped = study.replace(learning_rates_per_trial=wanted)  # a value the study cannot take: its one-line error
    if request == "auto":
        echo(f"on GPUs each trial packs {wanted} learning rates x {len(study.seeds)} seeds "
             f"({grouped.trial_count()} trials instead of {study.trial_count()}; --learning-rates-per-trial 1 keeps "
             "one rate per trial)")
    return grouped


def _gpu_default(study: Study, resources: Resources, n_rates: int,
                 where: Mapping[str, tuple[Any, ...]] | None) -> int:
    """Every learning rate in one trial on GPUs where the study and its families can; else the study's own."""
    from study.run.packing import trial_families

    own = study.learning_rates_per_trial
    if (resources.gpus_per_trial <= 0 or resources.packing == "off" or study.sampler != "grid"
            or study.budget != "fixed" or n_rates < 2 or own != 1):
        return own
    if not all(family.packs_learning_rates for family in trial_families(study, where)):
        return own
    return n_rates


def _grouping_on_disk(storage: StudyStorage) -> int | None:
    """The grouping the study's finished trials were trained with (None: no trial on disk yet)."""
    from study.run.strategies import read_record

    try:
        if not storage.finished_keys():
            return None
    except FileNotFoundError:
        return None
    record = read_record(storage)
    return None if record is None else record.learning_rates_per_trial
