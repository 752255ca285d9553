"""The one function behind every verdict the project shows or acts on (:func:`study_verdicts`): each look of an
adaptive budget (:func:`analysis.stats.budget.adaptive.next_look`), the end of `study run`, `study findings` and the
report. Its data comes from :func:`analysis.stats.verdicts.data.finding_data`, the same at each of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.evaluate import Verdict, evaluate_findings
from analysis.stats.verdicts.status import DECIDED, Status
from search_spaces.record import BudgetLook, StudyRecord


def study_verdicts(meta: StudyRecord, data: FindingData, at: int | None = None) -> list[Verdict]:
    """The verdicts of a study's findings on ``data``. A fixed budget's are taken at one look. An adaptive study's are
    taken at look ``at`` (None: the last look it took, its error budget spent so far), and a finding an earlier look
    decided keeps that look's verdict (study.json ``looks_taken``), with what the seeds now say beside it if it
    differs: a verdict is each finding's first decided one over the looks."""
    looks = meta.looks_taken if meta.budget == "adaptive" else ()
    if at is None:
        if not looks:
            return evaluate_findings(meta, data)
        at = len(looks)
    kept = []
    for index, verdict in enumerate(evaluate_findings(meta, data, look=at)):
        first = first_decided(looks, index)
        status = Status(first.statuses[index]) if first is not None else verdict.status
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
