"""Refuse a study before anything runs, in the driver, before Ray starts.

* :func:`validate`: every configuration the study would train is built as its family's config (an unknown name, a
  bad value, a mixer that lacks what a task needs: one line naming the field and value). `study show` and
  `study run` call it; a rejected study leaves nothing behind.
* :func:`check_components`: every distinct (family, task, mixer, shape) of the study trains one step on a tiny
  batch on the CPU (its family's ``tiny`` configuration through its real ``train``: the model is built, a forward
  and a backward pass and an evaluation run, rows come back with the study's metric). A component that fails does
  so here, in one line naming it, the study point and the error, instead of in every trial on the cluster.

Torch is imported (the model families), Ray is not.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from core.errors import OneLineError, one_line
from search_spaces.finding import is_probe, metric_columns
from search_spaces.schema import StudyError
from search_spaces.study import Study
from study.run.points import point_text
from study.trial.trainable import member_configs, split_config


def validate(study: Study) -> None:
    """Fail before Ray starts if any configuration of the study is invalid (names field and value)."""
    from trainables.catalog import all_tasks

    unknown = [t for t in study.tasks if t not in all_tasks()]
    if unknown:
        raise StudyError(f"invalid tasks of study {study.name}: {', '.join(map(repr, unknown))}; allowed: "
                         f"{', '.join(all_tasks())}")
    for point in _points(study):
        try:
            hyper, _ = split_config(study, point)
            member_configs(hyper)
        except ValueError as error:
            message = str(error)  # one line that names the study, once
            raise StudyError(message if f"study {study.name}" in message else f"study {study.name}: {message}") \
                from None


def _points(study: Study) -> list[dict[str, Any]]:
    """The points to check: a grid's every point; for a sampler, every categorical value once (the other axes at
    their first value): unknown names and bad choices show either way."""
    if study.sampler == "grid":
        return [{n: c[n] for n in study.axes} for c in study.grid()]
    corner = {n: a.checked_values()[0] for n, a in study.axes.items()}
    return [corner] + [{**corner, n: v} for n, a in study.axes.items() for v in a.checked_values()]


def check_components(study: Study, echo: Callable[[str], None] = print) -> int:
    """Train every distinct configuration shape of ``study`` one step on a tiny batch on the CPU (module docstring);
    StudyError naming the point and the error for the first that fails. Returns how many ran.

    Distinct: the family's ``tiny`` configuration without its learning rate (the budget fields are tiny's own), so a
    learning-rate axis costs nothing and every (task, mixer, size, ...) runs once."""
    import torch

    from study.trial.trainable import family_of

    check_finding_kinds(study)  # no model needed: before any trains
    started = time.time()
    seen: set[tuple[str, str]] = set()
    columns: set[str] = set()
    for point in _points(study):
        hyper, _ = split_config(study, point)
        family = family_of(hyper)
        tiny = family.tiny(member_configs(hyper, family)[0])
        shape = json.dumps({k: v for k, v in tiny.resolved().items() if k != "learning_rate"}, sort_keys=True,
                           default=str)
        if (family.name, shape) in seen:
            continue
        seen.add((family.name, shape))
        try:
            with torch.random.fork_rng(devices=[]):  # the driver's own random state stays as it was
                result = family.train([tiny], [study.seeds[0]], device="cpu", on_eval=None, packed=False)
            _check_rows(result.rows, study.metric)
        except Exception as error:  # noqa: BLE001 - any failure of a component becomes one line naming it
            raise StudyError(f"study {study.name}: the {family.name} family failed a one-step run at "
                             f"{point_text(point)} (before launch, on the CPU): {one_line(error, at=True)}") from None
        columns.update(result.rows[0])
    check_finding_metrics(study, columns)
    echo(f"preflight: {len(seen)} distinct configuration(s) trained one step on a tiny batch on the CPU "
         f"({time.time() - started:.1f} s)")
    return len(seen)


def check_finding_metrics(study: Study, columns: set[str]) -> None:
    """Every column a finding's metric reads is one the study's model families write (what only they know: the
    finding itself was checked when it was built); StudyError naming the finding, the column and the columns."""
    for finding in study.findings:
        metric = finding.metric_of(study.metric)
        # A probe's layer, step and head exist as the scale's model has them (a smoke model has 2 of the paper's 14
        # steps); the name's shape was checked when the finding was built.
        later = is_probe(metric) and not finding.checked_at(study.scale)
        missing = [] if later else [c for c in metric_columns(metric) if c not in columns]
        if missing:
            raise StudyError(f"invalid metric of finding {finding.description!r} of study {study.name} "
                             f"{missing[0]!r}; allowed: the columns its rows have: {', '.join(sorted(columns))}")


def check_finding_kinds(study: Study) -> None:
    """Every bound of every finding is of a registered kind with an argument its kind reads (a kind of yours must be
    imported by the study's file or its plugins); one line naming the finding and what is wrong otherwise."""
    from analysis.stats.kinds.base import bounds_of

    for finding in study.findings:
        try:
            bounds_of(finding)
        except ValueError as error:  # RegistryError (an unknown kind) or the kind's own check of its argument
            said = str(error) if isinstance(error, OneLineError) else one_line(error)
            raise StudyError(f"invalid kinds of finding {finding.description!r} of study {study.name}: {said}") \
                from None


def _check_rows(rows: list[dict[str, Any]], metric: str) -> None:
    """The rows of a one-step run: at least one, each with the study's metric (a family that reports another name
    would leave every trial without a score)."""
    if not rows:
        raise ValueError("its train returned no rows; allowed: one row per (seed, evaluation) (trainables.rows)")
    if any(metric not in row for row in rows):
        raise ValueError(f"its rows have no column {metric!r} (the study's metric); its columns: "
                         f"{', '.join(sorted(rows[0]))}")


def preflight(study: Study, echo: Callable[[str], None] = print) -> None:
    """:func:`validate`, then :func:`check_components`: once per `study run`, before its lock and Ray
    (study.run.runner.prepare)."""
    validate(study)
    check_components(study, echo)
