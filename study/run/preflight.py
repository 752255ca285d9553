"""Refuse a study before anything runs: every configuration it would train is built and checked.

Torch is imported (the model families' configs), Ray is not: `study show` and `study run` call this before
Ray starts, and a rejected study leaves nothing behind.
"""

from __future__ import annotations

from typing import Any

from search_spaces.study import Linked, Study, StudyError
from study.trial.trainable import member_configs, split_config


def validate(study: Study) -> None:
    """Fail before Ray starts if any configuration of the study is invalid (names field and value)."""
    from trainables.catalog import all_tasks

    unknown = [t for t in study.tasks if t not in all_tasks()]
    if unknown:
        raise StudyError(f"invalid tasks of study {study.name}: {', '.join(map(repr, unknown))}; allowed: "
                         f"{', '.join(all_tasks())}")
    if study.sampler == "grid":
        points = [{n: c[n] for n in study.axes} for c in study.grid()]
    else:  # every categorical value once (the others at their first value): unknown names, bad choices
        corner = {n: _first_value(a) for n, a in study.axes.items()}
        points = [corner] + [{**corner, n: v} for n, a in study.axes.items() for v in _categories(a)]
    for point in points:
        try:
            hyper, _ = split_config(study, point)
            member_configs(hyper)
        except ValueError as error:
            message = str(error)  # one line that names the study, once
            raise StudyError(message if f"study {study.name}" in message else f"study {study.name}: {message}") \
                from None


def _categories(axis: Any) -> tuple[Any, ...]:
    if isinstance(axis, Linked):
        return tuple(axis.options)
    return axis if isinstance(axis, tuple) else ()


def _first_value(axis: Any) -> Any:
    if isinstance(axis, tuple):
        return axis[0]
    if isinstance(axis, Linked):
        return next(iter(axis.options))
    return axis.low
