"""A study's verdicts: what its findings are checked on, and the one function that checks them.

:func:`study_verdicts` is behind every verdict the project shows or acts on: each look of an adaptive budget
(:func:`analysis.stats.budget.next_look`), the end of `study run`, `study findings` and the report. Its data comes from
:func:`finding_data`, the same at each of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from analysis.stats.findings import FAIL, PARTIAL, PASS, FindingData, Verdict, evaluate_findings
from search_spaces.record import BudgetLook, StudyRecord

if TYPE_CHECKING:
    from analysis.stats.training_stats import TrainingStats

#: Verdicts that more seeds cannot change: a pass, a fail, or a pass of the part of the claim the data can check.
DECIDED = (PASS, FAIL, PARTIAL)


def finding_data(meta: StudyRecord, stats: TrainingStats | None, missing_note: str = "") -> FindingData:
    """What a study's findings are checked on: its cells (``stats`` None or empty: none yet), every cell its grid
    will have (a cell not run leaves a bound on it open), its seeds; ``missing_note`` names what is missing."""
    from analysis.stats.coverage import expected_cells

    if stats is None:
        return FindingData(cells={}, panel=meta.plot.panel or "", select_metric=meta.metric,
                           expected=expected_cells(meta, list(meta.axes)), max_seeds=len(meta.seeds),
                           missing_note=missing_note)
    return FindingData(cells={} if stats.empty else stats.finding_cells(), panel=stats.axes.panel,
                       select_metric=stats.metrics.select, expected=expected_cells(meta, stats.axes.by),
                       max_seeds=len(meta.seeds), missing_note=missing_note, evaluations=stats.evaluations)


def study_verdicts(meta: StudyRecord, data: FindingData, at: int | None = None) -> list[Verdict]:
    """The verdicts of a study's findings on ``data``: the one function behind the budget's looks, `study findings`,
    `study run` and the report. A fixed budget's are taken at one look. An adaptive study's are taken at look ``at``
    (None: the last look it took, its error budget spent so far), and a finding an earlier look decided keeps that
    look's verdict (study.json ``looks_taken``), with what the seeds now say beside it if it differs: a verdict is each
    finding's first decided one over the looks."""
    looks = meta.looks_taken if meta.budget == "adaptive" else ()
    if at is None:
        if not looks:
            return evaluate_findings(meta, data)
        at = len(looks)
    kept = []
    for index, verdict in enumerate(evaluate_findings(meta, data, look=at)):
        first = first_decided(looks, index)
        status = first.statuses[index] if first is not None else verdict.status
        if first is None or status == verdict.status:
            kept.append(verdict)
            continue
        said = f"decided {status} at look {first.look} ({first.models} models); on every seed now (look {at}): " \
               f"{verdict.status}"
        kept.append(replace(verdict, status=status, reason="; ".join(t for t in (said, verdict.reason) if t)))
    return kept


def first_decided(looks: Sequence[BudgetLook], finding: int) -> BudgetLook | None:
    """The first look a study took (study.json ``looks_taken``) that decided its ``finding``-th finding, or None."""
    return next((look for look in looks if finding < len(look.statuses) and look.statuses[finding] in DECIDED), None)
