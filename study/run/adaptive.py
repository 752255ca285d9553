"""An adaptive budget run live: rounds of trials through Ray Tune, decided by the study's findings between rounds.

The policy is analysis's (:mod:`analysis.stats.budget.adaptive`): every cell starts with the study's first seeds; at
each look the findings are checked on the rows of the seeds given so far, and the undecided ones ask for one more seed
on the cells their numbers depend on. Here each round's trials train (a cell's first seeds in one trial, each later
seed in a trial of its own, :class:`study.trial.spec.Trial`), and each look is written to study.json (``looks_taken``:
every finding's status and the seeds it asked for) **before** its seeds train. A run that stops (Ctrl+C, SIGKILL)
resumes: the looks study.json holds are replayed, never decided again, and a trial already on disk is not trained
again. Completing the study to the full grid later (``--budget fixed``) trains only each cell's missing seeds. """

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import polars as pl

from search_spaces.cells import CellKey, cell_key, key_value
from search_spaces.record import StudyRecord
from search_spaces.study import Study
from study.results.storage import StudyStorage
from study.run.strategies import Launcher, Plan
from study.trial.spec import Trial

if TYPE_CHECKING:
    from analysis.stats.budget.adaptive import Budget
    from analysis.stats.verdicts.data import FindingData


def cell_trials(study: Study, point: dict[str, Any], n: int) -> list[Trial]:
    """The trials that give ``point`` its first ``n`` seeds: the first seeds together, each later one alone."""
    start = study.starting_seeds
    groups = [start] + [(s,) for s in study.seeds[len(start):n]] if n >= len(start) else [study.seeds[:n]]
    return [Trial(point, group, tuple(groups[:i])) for i, group in enumerate(groups)]


class AdaptiveStrategy:
    """The grid with an adaptive budget (module docstring): this driver owns the loop, analysis decides each look."""

    adaptive = True
    records_journal = True
    where: Mapping[str, tuple[Any, ...]] = {}  # the findings are decided on the whole grid: no subset

    def tidy(self, study: Study, storage: StudyStorage) -> None:
        """Before planning: the journal gets the finished trials it lacks."""
        from study.run.journal import sync_journal

        sync_journal(study, storage)

    def plan(self, study: Study, storage: StudyStorage, record: StudyRecord | None) -> Plan:
        points = list(study.points())
        finished = storage.finished_keys()
        start = [Trial(p, study.starting_seeds) for p in points]
        todo = [t for t in start if t.key(study) not in finished]
        return Plan(total=len(points), done=len(points) - len(todo), todo=todo)

    def run(self, study: Study, storage: StudyStorage, launcher: Launcher, plan: Plan, record: StudyRecord) -> None:
        """Look after look (module docstring): train what the budget has given and is not on disk, take the next
        look on the rows of those seeds, record it in study.json (``record``: as this run wrote it, with the looks
        an earlier run took, which are replayed, never decided again), give its seeds; until the budget is
        finished (:func:`analysis.stats.budget.adaptive.finished`)."""
        from analysis.stats.budget.adaptive import Budget, finished, next_look

        budget = Budget.resumed(pl.DataFrame(list(_cells(study)), strict=False), record)
        stage = _stage(record)
        while True:
            if not _train(study, storage, launcher, budget, stage, record):
                launcher.echo("the round did not finish (interrupted or trials lost): `study run` again resumes it")
                return
            if finished(record):
                return
            look = next_look(record, _finding_data(storage, record, budget), budget)
            record = record.replace(looks_taken=(*record.looks_taken, look.entry()))
            storage.write_json("study.json", record.to_json())  # before its seeds train: a re-run replays it
            undecided = sum(v.status == "UNDECIDED" for v in look.verdicts)
            launcher.echo(f"look {look.index} of {record.looks}: {undecided} of {len(look.verdicts)} finding(s) "
                          f"undecided, {look.models} models so far; {len(look.requests)} cell(s) get one more seed")
            stage = f"look {look.index + 1} of {record.looks}: {undecided} of {len(look.verdicts)} undecided"
            budget.give(look.requests)

    def counts(self, study: Study, storage: StudyStorage, plan: Plan) -> dict[str, int]:
        """Cells whose seeds the budget gave have all finished / trials failed for good / cells."""
        from study.run.strategies import read_record

        per_cell = budget_trials(study, read_record(storage))
        finished, failed_keys = storage.finished_keys(), storage.failed_keys()
        done = sum(set(keys) <= finished for keys in per_cell.values())
        failed = sum(len(set(keys) & failed_keys - finished) for keys in per_cell.values())
        return {"finished": done, "failed": failed, "total": plan.total}


def _stage(record: StudyRecord) -> str:
    """What the progress line says the round is for."""
    here = sum(f.checked_at(record.scale) for f in record.findings)
    elsewhere = f" ({len(record.findings) - here} checked only at other scales)" if here < len(record.findings) else ""
    return f"look {len(record.looks_taken) + 1} of {record.looks}: {here} finding(s) to decide{elsewhere}"


def _cells(study: Study) -> Iterator[dict[str, Any]]:
    """The cells the budget gives seeds to: the grid's points, one learning rate each (also where trials pack
    several)."""
    return (study if study.learning_rates_per_trial == 1 else study.replace(learning_rates_per_trial=1)).points()


def _train(study: Study, storage: StudyStorage, launcher: Launcher, budget: Budget, stage: str,
           record: StudyRecord) -> bool:
    """The trials of the seeds ``budget`` has given that are not on disk; False when the round did not finish."""
    if study.learning_rates_per_trial > 1:
        trials = [t for given in packed_budget_trials(study, record).values() for t in given.values()]
    else:
        trials = [t for row in budget.cells.iter_rows(named=True)
                  for t in cell_trials(study, {k: v for k, v in row.items() if k != "n"}, row["n"])]
    finished = storage.finished_keys()
    todo = [t for t in trials if t.key(study) not in finished]
    return not todo or launcher.grid(todo, stage)


def budget_trials(study: Study, record: StudyRecord | None) -> dict[CellKey, dict[str, Trial]]:
    """Per cell (its point's values) the trials an adaptive budget gave it, by key: its first seeds, and one trial per
    seed a look of ``record`` asked for."""
    if study.learning_rates_per_trial > 1:
        return packed_budget_trials(study, record)
    given: dict[CellKey, int] = {}
    for look in record.looks_taken if record is not None else ():
        for r in look.requests:
            given[cell_key(r.cell)] = given.get(cell_key(r.cell), 0) + 1
    out = {}
    for point in study.points():
        n = len(study.starting_seeds) + given.get(cell_key(point), 0)
        out[cell_key(point)] = {t.key(study): t for t in cell_trials(study, point, n)}
    return out


def packed_budget_trials(study: Study, record: StudyRecord | None) -> dict[CellKey, dict[str, Trial]]:
    """:func:`budget_trials` of a study whose trials pack learning rates, per trial point (its rates): the first
    seeds of every rate in one trial, then per look one trial per seed it gave to rates of that point, packing those
    rates (a look asks one more seed for some cells; those of one configuration train together, as one model)."""
    out: dict[CellKey, dict[str, Trial]] = {}
    home: dict[CellKey, dict[str, Any]] = {}  # a cell (one rate) -> the trial point holding its rate
    for point in study.points():
        first = Trial(point, study.starting_seeds)
        out[cell_key(point)] = {first.key(study): first}
        for rate in point["learning_rate"]:
            home[cell_key({**point, "learning_rate": rate})] = point
    for look in record.looks_taken if record is not None else ():
        groups: dict[tuple[CellKey, int], list[float]] = {}
        for request in look.requests:
            point = home[cell_key(request.cell)]
            groups.setdefault((cell_key(point), request.seed), []).append(request.cell["learning_rate"])
        for (where, seed), rates in groups.items():
            point = next(p for p in study.points() if cell_key(p) == where)
            asked = {key_value(r) for r in rates}
            trial = Trial({**point, "learning_rate": [r for r in point["learning_rate"] if key_value(r) in asked]},
                          (seed,))
            out[where][trial.key(study)] = trial
    return out


def _finding_data(storage: StudyStorage, record: StudyRecord, budget: Budget) -> FindingData:
    """What the findings see at a look: the rows of the seeds the budget has given (the same
    :func:`analysis.stats.verdicts.data.finding_data` as `study findings` and the report)."""
    from analysis.data.rows import open_trials
    from analysis.stats.training_stats import training_stats
    from analysis.stats.verdicts.data import finding_data

    scan = open_trials(storage.location)
    if scan.lf is None:
        return finding_data(record, None)
    given = budget.seed_rows()
    schema = scan.lf.collect_schema()
    keys = [c for c in given.columns if c in schema]
    given = given.with_columns(pl.col(c).cast(schema[c]) for c in keys)
    rows = scan.lf.join(given.lazy(), on=keys, how="semi", nulls_equal=True)
    return finding_data(record, training_stats(rows, record))
