"""An adaptive budget: seeds go only to the cells whose numbers could still decide an undecided finding.

Every cell of the grid starts with the study's first seeds (:attr:`search_spaces.study.Study.starting_seeds`). Then
rounds: the findings are checked on what has run (look 1, 2, ... of :attr:`Study.looks`; each cell's interval spends
its share of the error by its seed count: :func:`analysis.stats.intervals.errors.error_budget`); each UNDECIDED
finding asks for one more seed on the cells its statistic depends on
(:meth:`analysis.stats.verdicts.evaluate.Verdict.contention`: the leader and its close rivals of a best, the cells whose
interval holds a share's level, every cell short of seeds of a mean), unless even every seed would most likely leave
it open (:meth:`analysis.stats.kinds.base.Check.hopeless`); a cell asked for by several findings gets one seed. The
study ends when every finding is decided, when no undecided finding can ask for a seed any more (its cells have every
seed), or after the last look.

A finding's verdict is the first decided one over the looks (the looks' intervals hold together with the stated
confidence, so a later look cannot contradict an earlier decision except with that error); until then its latest.

This module is pure: data in, the next look out (:func:`next_look`: the verdicts and the cells that need seeds). The
driver (``study.run.adaptive``) owns the live loop: it trains what a look asks for, records the look in study.json
and takes the next; :func:`run_budget` runs the same looks over numbers already known (the published per-seed rows, a
simulation).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.evaluate import Verdict
from analysis.stats.verdicts.status import DECIDED
from analysis.stats.verdicts.study import study_verdicts
from search_spaces.cells import CellKey, cell_key
from search_spaces.record import BudgetLook, SeedRequest, StudyRecord


@dataclass(frozen=True)
class Request:
    """One more seed for one cell, and the findings (their indices in the study) that asked for it."""

    cell: dict[str, Any]
    seed: int
    findings: tuple[int, ...]


@dataclass(frozen=True)
class Look:
    """One look: each finding's verdict (its first decided one over the looks so far, else this look's), the models
    the budget had given, and the seeds the undecided findings ask for (none after the last look)."""

    index: int  # 1-based
    verdicts: tuple[Verdict, ...]
    models: int = 0
    requests: tuple[Request, ...] = ()

    def entry(self) -> BudgetLook:
        """The look as study.json records it (``looks_taken``)."""
        return BudgetLook(look=self.index, statuses=tuple(v.status for v in self.verdicts), models=self.models,
                          requests=tuple(SeedRequest(cell=r.cell, seed=r.seed, findings=r.findings)
                                         for r in self.requests))


@dataclass
class Budget:
    """How many seeds each cell has: ``cells`` (configuration columns) with ``n`` (the first ``n`` of the seeds)."""

    cells: pl.DataFrame
    seeds: tuple[int, ...]
    #: :meth:`key` per cell's values, kept: every look asks it of every cell of the grid
    _keys: dict[tuple[Any, ...], CellKey] = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def start(cls, cells: pl.DataFrame, meta: StudyRecord) -> Budget:
        """Every cell with the study's starting seeds."""
        return cls(cells.with_columns(n=pl.lit(len(meta.starting_seeds), pl.Int64)), tuple(meta.seeds))

    @classmethod
    def resumed(cls, cells: pl.DataFrame, meta: StudyRecord) -> Budget:
        """Every cell with the study's starting seeds and the seeds the looks it took (``looks_taken``) gave."""
        budget = cls.start(cells, meta)
        for look in meta.looks_taken:
            budget.give([Request(r.cell, r.seed, r.findings) for r in look.requests])
        return budget

    @property
    def keys(self) -> list[str]:
        """The configuration columns."""
        return [c for c in self.cells.columns if c != "n"]

    def key(self, values: tuple[Any, ...]) -> CellKey:
        """The cell key (:func:`search_spaces.cells.cell_key`) of a cell's ``values`` of :attr:`keys`, in order."""
        if values not in self._keys:
            self._keys[values] = cell_key(dict(zip(self.keys, values, strict=True)), tuple(self.keys))
        return self._keys[values]

    def seed_rows(self) -> pl.DataFrame:
        """One row per (cell, seed) the budget has given."""
        seeds = pl.DataFrame({"seed": list(self.seeds), "_order": list(range(len(self.seeds)))})
        return self.cells.join(seeds, how="cross").filter(pl.col("_order") < pl.col("n")).drop("_order", "n")

    def models(self) -> int:
        """The models (cell x seed) given so far."""
        return int(self.cells.get_column("n").sum())

    def give(self, requests: Sequence[Request]) -> None:
        """One more seed to each requested cell."""
        if not requests:
            return
        asked = pl.DataFrame([r.cell for r in requests]).with_columns(_more=pl.lit(1, pl.Int64))
        keys = self.keys
        asked = asked.select([pl.col(c).cast(self.cells.schema[c]) for c in keys] + ["_more"])
        self.cells = (self.cells.join(asked, on=keys, how="left", nulls_equal=True)
                      .with_columns(n=pl.col("n") + pl.col("_more").fill_null(0)).drop("_more"))


def plan_round(verdicts: Sequence[Verdict], budget: Budget) -> list[Request]:
    """The requests of the undecided findings: each contention cell short of seeds gets the next seed in order."""
    asked: dict[CellKey, list[int]] = {}
    cells: dict[CellKey, dict[str, Any]] = {}
    keys = tuple(budget.keys)
    for index, verdict in enumerate(verdicts):
        contention = verdict.contention(futility=True)
        if contention is None:
            continue
        for row in pl.DataFrame([contention.get_column(c) for c in keys if c in contention.columns]).iter_rows(
                named=True):
            key = budget.key(tuple(row.get(c) for c in keys))
            cells.setdefault(key, row)
            if index not in asked.setdefault(key, []):
                asked[key].append(index)
    if not asked:
        return []
    at = budget.cells.columns.index("n")
    have = {budget.key(row[:at] + row[at + 1:]): row[at] for row in budget.cells.iter_rows()}
    requests = []
    for key, findings in asked.items():
        n = have.get(key)
        if n is not None and n < len(budget.seeds):
            requests.append(Request(cells[key], budget.seeds[n], tuple(findings)))
    return requests


def next_look(meta: StudyRecord, data: FindingData, budget: Budget) -> Look:
    """The study's next look (its ``looks_taken`` are the earlier ones) on ``data``, what the budget's seeds have
    produced: every finding's verdict (:func:`study_verdicts`) and the seeds the undecided ones ask for. Pure: the
    caller trains what it asks for (``study.run.adaptive`` on Ray; :func:`run_budget` over known numbers)."""
    index = len(meta.looks_taken) + 1
    verdicts = study_verdicts(meta, data, at=index)
    requests = plan_round(verdicts, budget) if index < meta.looks else []
    return Look(index, tuple(verdicts), budget.models(), tuple(requests))


def finished(meta: StudyRecord) -> bool:
    """Whether an adaptive budget has taken its last look: the last allowed, or one that asked for nothing."""
    looks = meta.looks_taken
    return bool(looks) and (len(looks) >= meta.looks or not looks[-1].requests)


@dataclass
class Outcome:
    """A budget run to its end: the looks (the last one's verdicts are the study's) and the seeds it gave."""

    looks: list[Look] = field(default_factory=list)
    budget: Budget | None = None

    def verdicts(self) -> list[Verdict]:
        """Per finding: its first decided verdict over the looks, else its latest."""
        return list(self.looks[-1].verdicts)

    def decided_at(self) -> list[int | None]:
        """Per finding: the look that decided it (None: never decided)."""
        return [next((look.index for look in self.looks if look.verdicts[i].status in DECIDED), None)
                for i in range(len(self.looks[-1].verdicts))]


def run_budget(meta: StudyRecord, cells: pl.DataFrame, view: Callable[[Budget], FindingData]) -> Outcome:
    """An adaptive budget over known numbers (published per-seed rows, a simulation): ``view`` gives what the budget's
    seeds have produced over ``cells`` (every cell of the grid); look after look until :func:`finished`."""
    if meta.budget != "adaptive":
        raise ValueError(f"run_budget needs an adaptive budget; study {meta.name} has budget {meta.budget!r}")
    meta = meta.replace(looks_taken=())
    budget = Budget.start(cells, meta)
    outcome = Outcome(budget=budget)
    while not finished(meta):
        look = next_look(meta, view(budget), budget)
        outcome.looks.append(look)
        meta = meta.replace(looks_taken=(*meta.looks_taken, look.entry()))
        budget.give(look.requests)
    return outcome
