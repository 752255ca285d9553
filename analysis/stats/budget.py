"""An adaptive budget: seeds go only to the cells whose numbers could still decide an undecided finding.

Every cell of the grid starts with the study's first seeds (:attr:`search_spaces.study.Study.starting_seeds`). Then
rounds: the findings are checked on what has run (look 1, 2, ... of :attr:`Study.looks`; each cell's interval spends
its share of the error by its seed count: :func:`analysis.stats.finding_intervals.error_budget`); each UNDECIDED
finding asks for one more seed on the cells its statistic depends on
(:meth:`analysis.stats.findings.Verdict.contention`: the leader and its close rivals of a best, the cells whose
interval holds a share's level, every cell short of seeds of a mean), unless even every seed would most likely leave
it open (:meth:`analysis.stats.findings.Check.hopeless`); a cell asked for by several findings gets one seed. The
study ends when every finding is decided, when no undecided finding can ask for a seed any more (its cells have every
seed), or after the last look.

A finding's verdict is the first decided one over the looks (the looks' intervals hold together with the stated
confidence, so a later look cannot contradict an earlier decision except with that error); until then its latest.

This module is pure: it plans a round from verdicts (:func:`plan_round`) and replays a whole budget over any source
of cell numbers (:func:`run_budget`: the published per-seed rows, a synthetic study, a live study's table). The run
path (``study.run``) trains what a round asks for and records it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl

from analysis.stats.findings import FAIL, PARTIAL, PASS, UNDECIDED, FindingData, Verdict, evaluate_findings
from search_spaces.record import BudgetLook, StudyRecord

#: Verdicts that more seeds cannot change: a pass, a fail, or a pass of the part of the claim the data can check.
DECIDED = (PASS, FAIL, PARTIAL)


@dataclass(frozen=True)
class Request:
    """One more seed for one cell, and the findings (their indices in the study) that asked for it."""

    cell: dict[str, Any]
    seed: int
    findings: tuple[int, ...]


@dataclass(frozen=True)
class Look:
    """The verdicts at one look, and the requests they made (none after the last look or when nothing is open)."""

    index: int  # 1-based
    verdicts: tuple[Verdict, ...]
    requests: tuple[Request, ...] = ()


@dataclass
class Budget:
    """How many seeds each cell has: ``cells`` (configuration columns) with ``n`` (the first ``n`` of the seeds)."""

    cells: pl.DataFrame
    seeds: tuple[int, ...]

    @classmethod
    def start(cls, cells: pl.DataFrame, meta: StudyRecord) -> Budget:
        """Every cell with the study's starting seeds."""
        return cls(cells.with_columns(n=pl.lit(len(meta.starting_seeds), pl.Int64)), tuple(meta.seeds))

    @property
    def keys(self) -> list[str]:
        """The configuration columns."""
        return [c for c in self.cells.columns if c != "n"]

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
    asked: dict[tuple, list[int]] = {}
    cells: dict[tuple, dict[str, Any]] = {}
    keys = budget.keys
    for index, verdict in enumerate(verdicts):
        contention = verdict.contention(futility=True)
        if contention is None:
            continue
        for row in contention.select([c for c in keys if c in contention.columns]).iter_rows(named=True):
            key = tuple(str(row.get(c)) for c in keys)
            cells.setdefault(key, row)
            if index not in asked.setdefault(key, []):
                asked[key].append(index)
    if not asked:
        return []
    have = {tuple(str(v) for v in row[:-1]): row[-1] for row in budget.cells.select(*keys, "n").iter_rows()}
    requests = []
    for key, findings in asked.items():
        n = have.get(key)
        if n is not None and n < len(budget.seeds):
            requests.append(Request(cells[key], budget.seeds[n], tuple(findings)))
    return requests


@dataclass
class Outcome:
    """A budget run to its end: the looks, the verdicts (each finding's first decided one), the models given."""

    looks: list[Look] = field(default_factory=list)
    budget: Budget | None = None

    def verdicts(self) -> list[Verdict]:
        """Per finding: its first decided verdict over the looks, else its latest."""
        final = list(self.looks[-1].verdicts)
        for i in range(len(final)):
            first = next((look.verdicts[i] for look in self.looks if look.verdicts[i].status in DECIDED), None)
            if first is not None:
                final[i] = first
        return final

    def decided_at(self) -> list[int | None]:
        """Per finding: the look that decided it (None: never decided)."""
        return [next((look.index for look in self.looks if look.verdicts[i].status in DECIDED), None)
                for i in range(len(self.looks[-1].verdicts))]


def run_budget(meta: StudyRecord, cells: pl.DataFrame, view: Callable[[Budget], FindingData],
               on_look: Callable[[Look, Budget], None] | None = None,
               planned: Sequence[Sequence[Request]] = ()) -> Outcome:
    """Run an adaptive budget over ``cells`` (every cell of the grid): at each look, ``view`` gives what the budget's
    seeds have produced, the findings are checked and the undecided ones ask for seeds. ``planned``: requests a run
    already recorded (a resumed study replays them instead of deciding again). ``on_look`` sees each look."""
    budget = Budget.start(cells, meta)
    outcome = Outcome(budget=budget)
    for index in range(1, meta.looks + 1):
        verdicts = evaluate_findings(meta, view(budget), look=index)
        last = index == meta.looks
        requests = [] if last else list(planned[index - 1]) if index - 1 < len(planned) else plan_round(
            [v if not _decided_before(outcome, i) else _closed(v) for i, v in enumerate(verdicts)], budget)
        look = Look(index, tuple(verdicts), tuple(requests))
        outcome.looks.append(look)
        if on_look is not None:
            on_look(look, budget)
        if not requests:
            break
        budget.give(requests)
    return outcome


def _decided_before(outcome: Outcome, finding: int) -> bool:
    return any(look.verdicts[finding].status in DECIDED for look in outcome.looks)


def _closed(verdict: Verdict) -> Verdict:
    """A verdict an earlier look decided: it asks for nothing more."""
    return Verdict(verdict.finding, verdict.metric, PASS if verdict.status == UNDECIDED else verdict.status)


def study_verdicts(meta: StudyRecord, data: FindingData) -> list[Verdict]:
    """The verdicts of a study on its rows. An adaptive study's are taken at the last look it took (its error budget
    spent so far), and a finding a look decided keeps that look's verdict (the run's, recorded in study.json
    ``looks_taken``), with what all the seeds now say beside it if it differs: a verdict is each finding's first
    decided one over the looks."""
    looks = meta.looks_taken if meta.budget == "adaptive" else ()
    if not looks:
        return evaluate_findings(meta, data)
    now = evaluate_findings(meta, data, look=len(looks))
    kept = []
    for index, verdict in enumerate(now):
        first = first_decided(looks, index)
        status = first.statuses[index] if first is not None else verdict.status
        if first is None or status == verdict.status:
            kept.append(verdict)
            continue
        said = f"decided {status} at look {first.look} ({first.models} models); on every seed now (look " \
               f"{len(looks)}): {verdict.status}"
        kept.append(replace(verdict, status=status, reason="; ".join(t for t in (said, verdict.reason) if t)))
    return kept


def first_decided(looks: Sequence[BudgetLook], finding: int) -> BudgetLook | None:
    """The first look a study took (study.json ``looks_taken``) that decided its ``finding``-th finding, or None."""
    return next((look for look in looks if finding < len(look.statuses) and look.statuses[finding] in DECIDED), None)
