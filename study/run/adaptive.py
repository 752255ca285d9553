"""An adaptive budget run live: rounds of trials through Ray Tune, decided by the study's findings between rounds.

The policy is analysis's (:mod:`analysis.stats.budget`): every cell starts with the study's first seeds; at each look
the findings are checked on the rows of the seeds given so far, and the undecided ones ask for one more seed on the
cells their numbers depend on. Here each round's trials train (a cell's first seeds in one trial, each later seed in a
trial of its own, :class:`study.trial.spec.Trial`), and each look is written to study.json (``looks_taken``: every
finding's status and the seeds it asked for) **before** its seeds train. A run that stops (Ctrl+C, SIGKILL) resumes:
the looks study.json holds are replayed, never decided again, and a trial already on disk is not trained again.
Completing the study to the full grid later (``--budget fixed``) trains only each cell's missing seeds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import polars as pl

from search_spaces.record import BudgetLook, SeedRequest, StudyRecord
from search_spaces.study import Study
from study.results.storage import StudyStorage
from study.run.strategies import Plan
from study.trial.spec import Trial


def cell_trials(study: Study, point: dict[str, Any], n: int) -> list[Trial]:
    """The trials that give ``point`` its first ``n`` seeds: the first seeds together, each later one alone."""
    start = study.starting_seeds
    groups = [start] + [(s,) for s in study.seeds[len(start):n]] if n >= len(start) else [study.seeds[:n]]
    return [Trial(point, group, tuple(groups[:i])) for i, group in enumerate(groups)]


class AdaptiveStrategy:
    """The grid with an adaptive budget (module docstring)."""

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
        self.record = record  # its looks are replayed, never decided again
        return Plan(total=len(points), done=len(points) - len(todo), todo=todo)

    def run(self, study: Study, storage: StudyStorage, launcher: Any, plan: Plan) -> None:
        """The rounds (module docstring), their trials through the launcher's grid (False when interrupted)."""
        from analysis.stats.budget import Request, run_budget

        train: Callable[[list[Trial], str], bool] = launcher.grid
        echo = launcher.echo

        meta = StudyRecord.of(study)
        cells = pl.DataFrame(list(study.points()), strict=False)
        planned = [[Request(r.cell, r.seed, r.findings) for r in look.requests]
                   for look in (self.record.looks_taken if self.record is not None else ())]
        looks: list[BudgetLook] = list(self.record.looks_taken) if self.record is not None else []
        here = sum(f.checked_at(study.scale) for f in meta.findings)
        elsewhere = f" ({len(meta.findings) - here} checked only at other scales)" if here < len(meta.findings) else ""
        stage = [f"look 1 of {meta.looks}: {here} finding(s) to decide{elsewhere}"]

        def view(budget: Any) -> Any:
            trials = [t for row in budget.cells.iter_rows(named=True)
                      for t in cell_trials(study, {k: v for k, v in row.items() if k != "n"}, row["n"])]
            finished = storage.finished_keys()
            todo = [t for t in trials if t.key(study) not in finished]
            if todo and not train(todo, stage[0]):
                raise _Interrupted  # no look on a round that did not finish: a re-run resumes it
            return _finding_data(study, storage, meta, budget)

        def on_look(look: Any, budget: Any) -> None:
            undecided = sum(v.status == "UNDECIDED" for v in look.verdicts)
            entry = BudgetLook(look=look.index, statuses=tuple(v.status for v in look.verdicts),
                               models=budget.models(), requests=tuple(
                                   SeedRequest(cell=r.cell, seed=r.seed, findings=r.findings) for r in look.requests))
            looks[look.index - 1:] = [entry]
            storage.write_json("study.json", _record(storage, study, tuple(looks)).to_json())
            stage[0] = f"look {look.index + 1} of {meta.looks}: {undecided} of {len(look.verdicts)} undecided"
            echo(f"look {look.index} of {meta.looks}: {undecided} of {len(look.verdicts)} finding(s) undecided, "
                 f"{budget.models()} models so far; {len(look.requests)} cell(s) get one more seed")

        try:
            run_budget(meta, cells, view, on_look, planned)
        except _Interrupted:
            echo("the round did not finish (interrupted or trials lost): `study run` again resumes it")

    def counts(self, study: Study, storage: StudyStorage, plan: Plan) -> dict[str, int]:
        """Cells whose seeds the budget gave have all finished / trials failed for good / cells."""
        from study.run.strategies import read_record

        per_cell = budget_trials(study, read_record(storage))
        finished, failed_keys = storage.finished_keys(), storage.failed_keys()
        done = sum(set(keys) <= finished for keys in per_cell.values())
        failed = sum(len(set(keys) & failed_keys - finished) for keys in per_cell.values())
        return {"finished": done, "failed": failed, "total": plan.total}


def budget_trials(study: Study, record: StudyRecord | None) -> dict[tuple, dict[str, Trial]]:
    """Per cell (its point's values) the trials an adaptive budget gave it, by key: its first seeds, and one trial per
    seed a look of ``record`` asked for."""
    given: dict[tuple, int] = {}
    for look in record.looks_taken if record is not None else ():
        for r in look.requests:
            given[_cell_key(r.cell)] = given.get(_cell_key(r.cell), 0) + 1
    out = {}
    for point in study.points():
        n = len(study.starting_seeds) + given.get(_cell_key(point), 0)
        out[_cell_key(point)] = {t.key(study): t for t in cell_trials(study, point, n)}
    return out


def _cell_key(cell: Any) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in cell.items()))


class _Interrupted(Exception):
    """A round's trials did not all finish."""


def _record(storage: StudyStorage, study: Study, looks: tuple[BudgetLook, ...]) -> StudyRecord:
    """study.json with ``looks``: the run's record as written at its start, its looks now."""
    from study.run.strategies import read_record

    written = read_record(storage)
    return (written or StudyRecord.of(study)).replace(looks_taken=looks)


def _finding_data(study: Study, storage: StudyStorage, meta: StudyRecord, budget: Any) -> Any:
    """What the findings see at a look: the rows of the seeds the budget has given (analysis.stats.findings)."""
    from analysis.data.rows import open_trials
    from analysis.stats.findings import FindingData
    from analysis.stats.training_stats import training_stats

    scan = open_trials(storage.location)
    given = budget.seed_rows()
    if scan.lf is None:
        return FindingData(cells={}, panel=meta.plot.panel or "", select_metric=meta.metric,
                           expected=given.drop("seed").unique(), max_seeds=len(meta.seeds))
    schema = scan.lf.collect_schema()
    keys = [c for c in given.columns if c in schema]
    given = given.with_columns(pl.col(c).cast(schema[c]) for c in keys)
    rows = scan.lf.join(given.lazy(), on=keys, how="semi", nulls_equal=True)
    stats = training_stats(rows, meta)
    by = stats.axes.by
    expected = budget.cells.select([c for c in by if c in budget.cells.columns]).unique()
    return FindingData(cells={} if stats.empty else stats.finding_cells(), panel=stats.axes.panel,
                       select_metric=stats.metrics.select, expected=expected, max_seeds=len(meta.seeds))
