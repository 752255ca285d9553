"""A study's findings checked against its numbers: PASS, FAIL, UNDECIDED or NOT CHECKED, with the bound quoted.

Each finding (``study.json["findings"]``) bounds the best G of a metric per panel value: ``below`` means
*at most* the threshold, ``above`` *at least*. The verdict says exactly what was tested (``max: 16.1%,
required <= 15.0%``). Three things keep it honest:

* **scales** - a finding whose ``scales`` do not include the study's scale is NOT CHECKED (a smoke run
  trains too little to show anything), never FAIL;
* **missing cells** - the best G is a best over the grid, so a missing trial can only move it one way:
  for accuracies (best = max) a cell not run can raise it. With an incomplete panel an "at most" bound that
  holds so far, or an "at least" bound that fails so far, is UNDECIDED; the opposite outcomes are certain;
* **exit codes** - :data:`FINDING_FAILED_EXIT` is what ``study report`` / ``study run --report`` exit with
  when a checked finding fails (distinct from 1, an error).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from analysis.meta import FindingSpec, StudyMeta
from analysis.stats import findings_from_best

#: Exit status of ``study report`` and ``study run --report`` when a checked finding fails.
FINDING_FAILED_EXIT = 3

PASS, FAIL, UNDECIDED, NOT_CHECKED = "PASS", "FAIL", "UNDECIDED", "NOT CHECKED"


@dataclass(frozen=True)
class Check:
    """One bound of a finding: ``panel_value``'s best G of the metric against ``threshold``."""

    panel_value: str
    relation: str  # "below" (at most) or "above" (at least)
    threshold: float
    value: float | None
    state: str  # "holds", "fails" or "undecided"

    def text(self) -> str:
        """``max: 16.1%, required <= 15.0%: fails`` - the number and exactly the bound tested."""
        sign = "<=" if self.relation == "below" else ">="
        value = "no data" if self.value is None else f"{100 * self.value:.1f}%"
        return f"{self.panel_value}: {value}, required {sign} {100 * self.threshold:.1f}%: {self.state}"


@dataclass(frozen=True)
class Verdict:
    """A finding's outcome and the checks behind it (no checks when NOT CHECKED)."""

    finding: FindingSpec
    metric: str
    status: str
    checks: tuple[Check, ...] = ()
    reason: str = ""

    def lines(self) -> list[str]:
        """Summary lines: the verdict and description, then one line per bound (or the reason)."""
        head = f"  {self.status}: {self.finding.description}"
        detail = [f"      {c.text()}" for c in self.checks] if self.checks else []
        if self.reason:
            detail.append(f"      {self.reason}")
        return [head, *detail]


def _state(relation: str, holds: bool, value: float | None, complete: bool, best_is_max: bool) -> str:
    """holds / fails / undecided for one bound (see the module docstring for the one-way argument)."""
    if complete:
        return "holds" if holds else "fails"
    if value is None:
        return "undecided"
    # A missing cell can only move the best value up (best = max) or down (best = min).
    can_rise = best_is_max
    if relation == "below":
        certain = not holds if can_rise else holds
    else:
        certain = holds if can_rise else not holds
    return ("holds" if holds else "fails") if certain else "undecided"


def evaluate_findings(meta: StudyMeta, best_by_panel: Mapping[str, pl.DataFrame], panel: str,
                      select_metric: str, complete: set[str] | None, missing_note: str = "") -> list[Verdict]:
    """The :class:`Verdict` of every finding of ``meta``.

    Args:
        best_by_panel: metric -> best configuration per panel value (:func:`analysis.stats.best_config`).
        panel: the panel column the findings name values of.
        select_metric: the metric of a finding that names none.
        complete: the panel values (as strings) whose every grid cell has data with every seed; None when the
            whole study is complete (then a panel value without data fails).
        missing_note: what is missing (e.g. ``1 unreadable``), quoted in an UNDECIDED verdict.
    """
    verdicts = []
    for finding in meta.findings:
        metric = finding.metric or select_metric
        if not finding.checked_at(meta.scale):
            reason = (f"not checked at this scale ({meta.scale}); checked at: {', '.join(finding.scales or ())}")
            verdicts.append(Verdict(finding, metric, NOT_CHECKED, reason=reason))
            continue
        as_dict = {"description": finding.description, "metric": metric, "below": finding.below,
                   "above": finding.above}
        rows = findings_from_best(best_by_panel, [as_dict], panel, select_metric).iter_rows(named=True)
        best_is_max = "loss" not in metric
        checks = tuple(
            Check(r["panel_value"], r["relation"], r["threshold"], r["value"],
                  _state(r["relation"], r["holds"], r["value"], complete is None or r["panel_value"] in complete,
                         best_is_max))
            for r in rows
        )
        verdicts.append(_verdict(finding, metric, checks, missing_note))
    return verdicts


def _verdict(finding: FindingSpec, metric: str, checks: tuple[Check, ...], missing_note: str) -> Verdict:
    if not checks:
        return Verdict(finding, metric, FAIL, reason="the finding names no panel value to check")
    states = {c.state for c in checks}
    if "fails" in states:
        return Verdict(finding, metric, FAIL, checks)
    if "undecided" in states:
        why = f"not decided: the grid is incomplete ({missing_note})" if missing_note else \
            "not decided: the grid is incomplete"
        return Verdict(finding, metric, UNDECIDED, checks, why)
    return Verdict(finding, metric, PASS, checks)


def failed(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The verdicts that are FAIL (what makes the CLI exit with :data:`FINDING_FAILED_EXIT`)."""
    return [v for v in verdicts if v.status == FAIL]
