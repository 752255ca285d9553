"""How a study's trials are chosen: one strategy object per kind of study, asked the same questions by the runner.

* :class:`GridStrategy` - every point of the grid (or the ``--where`` subset) with every seed: a point's missing
  seeds in one trial (all of them, as before, unless an adaptive budget trained some already);
* ``AdaptiveStrategy`` - the grid, seeds spent where a finding is undecided (:mod:`study.run.adaptive`);
* :class:`SamplerStrategy` - an Optuna sampler draws ``n_trials`` points (random, QMC, TPE), resumed from its
  journal or from the rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from search_spaces.cells import cell_key
from search_spaces.record import StudyRecord
from search_spaces.study import Study
from study.results.storage import StudyStorage
from study.run.points import trial_points
from study.trial.spec import Trial


@dataclass
class Plan:
    """What a run starts from: the trials of the study (or its subset), how many finished before, what is left."""

    total: int
    done: int
    todo: list[Trial] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)  # a grid's trial keys (empty for a sampler)
    previous: list[tuple[dict[str, Any], float]] = field(default_factory=list)  # a sampler's finished points
    journal: Any = None  # the study's Optuna journal storage (None: none, e.g. on object storage)

    @property
    def remaining(self) -> int:
        """Trials still to run (an adaptive budget: at least its first round's)."""
        return max(self.total - self.done, len(self.todo))


class Launcher(Protocol):
    """What a strategy runs trials through (study.run.runner's, on Ray Tune)."""

    echo: Callable[[str], None]  # says one line to the user

    def grid(self, todo: list[Trial], stage: str) -> bool:
        """Run the listed trials (each exactly once); False when interrupted. ``stage``: what the progress line says
        the round is for."""

    def sample(self, plan: Plan) -> None:
        """Run an Optuna sampler's remaining trials of ``plan``."""


class Strategy(Protocol):
    """How a study's trials are chosen (module docstring); the runner asks every strategy the same questions."""

    adaptive: bool  # whether its rounds depend on the results (it runs even with nothing left in the plan)
    records_journal: bool  # whether the driver writes each finished trial into the Optuna journal
    where: Mapping[str, tuple[Any, ...]]  # a grid's --where subset (empty: the whole study)

    def tidy(self, study: Study, storage: StudyStorage) -> None:
        """Before planning: bring what the storage holds up to date (the journal)."""

    def plan(self, study: Study, storage: StudyStorage, record: StudyRecord | None) -> Plan:
        """What is left to run."""

    def run(self, study: Study, storage: StudyStorage, launcher: Launcher, plan: Plan, record: StudyRecord) -> None:
        """Run the plan through ``launcher``; ``record``: study.json as this run wrote it."""

    def counts(self, study: Study, storage: StudyStorage, plan: Plan) -> dict[str, int]:
        """Finished / failed / total at the end."""


def read_record(storage: StudyStorage) -> StudyRecord | None:
    """The study's record as its latest run wrote it (None: none yet); an unreadable one is an error naming it."""
    from analysis.data.meta import read_study_meta

    try:
        return read_study_meta(storage.location)
    except FileNotFoundError:
        return None


def point_seeds(study: Study, point: Mapping[str, Any], finished: set[str], record: StudyRecord | None
                ) -> list[tuple[int, ...]]:
    """The seed groups of ``point`` already trained: every seed in one trial, or an adaptive budget's groups (its
    first seeds together, then one seed per trial, as study.json's looks asked for them) and the trial that completed
    them to every seed."""
    if Trial.every_seed(study, point).key(study) in finished:
        return [tuple(study.seeds)]
    groups = [study.starting_seeds]
    if record is not None:
        groups += [(r.seed,) for look in record.looks_taken for r in look.requests if _same(r.cell, point)]
    done = [g for g in groups if Trial(point, g).key(study) in finished]
    rest = tuple(s for s in study.seeds if not any(s in g for g in done))
    if done and rest and Trial(point, rest).key(study) in finished:
        done.append(rest)
    return done


def _same(cell: Mapping[str, Any], point: Mapping[str, Any]) -> bool:
    names = tuple(point)
    return cell_key(cell, names) == cell_key(point, names)


class GridStrategy:
    """Every point of the grid with every seed (module docstring)."""

    adaptive = False
    records_journal = True  # each finished trial goes into the Optuna journal from the driver (study.run.journal)

    def __init__(self, where: Mapping[str, tuple[Any, ...]] | None = None) -> None:
        self.where = where or {}

    def plan(self, study: Study, storage: StudyStorage, record: StudyRecord | None) -> Plan:
        points = trial_points(study, self.where)
        finished = storage.finished_keys()
        todo = []
        for key, point in points.items():
            if key in finished:
                continue
            groups = point_seeds(study, point, finished, record)
            done = {s for g in groups for s in g}
            missing = tuple(s for s in study.seeds if s not in done)
            if missing:
                todo.append(Trial(point, missing, tuple(groups)))
        return Plan(total=len(points), done=len(points) - len(todo), todo=todo, keys=set(points))

    def tidy(self, study: Study, storage: StudyStorage) -> None:
        """Before planning: the journal (optuna-dashboard's view) gets the finished trials it lacks."""
        from study.run.journal import sync_journal

        sync_journal(study, storage)

    def run(self, study: Study, storage: StudyStorage, launcher: Launcher, plan: Plan, record: StudyRecord) -> None:
        """The plan's trials through Ray Tune's grid."""
        launcher.grid(plan.todo, "")

    def counts(self, study: Study, storage: StudyStorage, plan: Plan) -> dict[str, int]:
        """Finished / failed / total trials of the grid at the end (failed for good: a failed/ record, no rows)."""
        after = self.plan(study, storage, read_record(storage))
        failed = {t.key(study) for t in after.todo} & storage.failed_keys()
        return {"finished": after.done, "failed": len(failed), "total": plan.total}


class SamplerStrategy:
    """An Optuna sampler's ``n_trials`` points (module docstring)."""

    adaptive = False
    records_journal = False  # the sampler itself writes its journal
    where: Mapping[str, tuple[Any, ...]] = {}  # a sampler draws its own points: no subset

    def plan(self, study: Study, storage: StudyStorage, record: StudyRecord | None) -> Plan:
        from study.run.journal import journal_storage, sync_journal

        journal = sync_journal(study, storage)  # None on object storage: the sampler is re-fed from the rows
        previous = finished_points(study, storage) if journal is None else []
        done = min(len(previous) if journal is None else len(storage.finished_keys()), study.trial_count())
        return Plan(total=study.trial_count(), done=done, previous=previous,
                    journal=journal_storage(storage) if journal is not None else None)

    def tidy(self, study: Study, storage: StudyStorage) -> None:
        """Nothing: planning syncs the sampler's journal."""

    def run(self, study: Study, storage: StudyStorage, launcher: Launcher, plan: Plan, record: StudyRecord) -> None:
        """The sampler's remaining trials."""
        launcher.sample(plan)

    def counts(self, study: Study, storage: StudyStorage, plan: Plan) -> dict[str, int]:
        return {"finished": len(storage.finished_keys()), "failed": len(storage.failed_keys()), "total": plan.total}


def finished_points(study: Study, storage: StudyStorage) -> list[tuple[dict[str, Any], float]]:
    """(point, objective) of every finished trial (table and pending files, one scan), for a resumed Optuna
    search; in trial-key order."""
    from analysis.data.rows import open_trials
    from analysis.stats.rgb import objective

    scan = open_trials(storage.location)
    if scan.lf is None:
        return []
    names = list(study.axes)
    present = set(scan.lf.collect_schema().names())
    wanted = [c for c in dict.fromkeys([*names, "trial_key", "step", "learning_rate", study.metric]) if c in present]
    frame = scan.lf.select(wanted).collect()
    done = []
    for (_key,), group in sorted(frame.group_by("trial_key"), key=lambda item: str(item[0][0])):
        rows = group.to_dicts()
        done.append(({n: rows[0].get(n) for n in names}, objective(rows, study.metric, study.mode)))
    return done
