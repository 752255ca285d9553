"""A study's findings checked against its numbers: PASS, FAIL, UNDECIDED or NOT CHECKED, with the bound quoted.

Each finding (``study.json["findings"]``) computes one number per panel value - a statistic (best G by
default) of a metric over a region of the grid (the whole grid by default; :mod:`analysis.stats.finding_values`)
- and bounds it: ``below`` means *at most* the threshold, ``above`` *at least*, ``ahead`` at least another
panel value's number plus ``margin``. The verdict says exactly what was tested (``max: 16.1%, required <=
15.0%``). Five things keep it honest:

* **scales** - a finding whose ``scales`` do not include the study's scale is NOT CHECKED (a smoke run
  trains too little to show anything), never FAIL;
* **missing cells** - a best over the grid can only rise with more accuracy cells, a worst only fall, a mean
  or share either way. With an incomplete panel a bound that a missing cell could still flip is UNDECIDED;
  the outcomes no missing cell can change are certain;
* **absent panel values** - checked on data that has only some panel values (the release ships BERT alone
  for Fig. 3), bounds on the others are left out and named, and a finding whose checked bounds hold is
  PARTIAL, never PASS (an "only NAP and max ..." is not tested without the others); with no bound left it is
  NOT CHECKED;
* **a lead is more than seed noise** - an ``ahead`` with ``margin >= 0`` is a strict claim ("more", "better",
  "the largest"): it must hold by at least twice the standard error of the difference of the two numbers,
  derived from the seeds of the cells that make them (:func:`noise_margin`), or by ``margin`` when that is
  larger; the verdict names the margin it used. A tie or a noise-level lead fails. A negative margin
  ("similar: within 2 points") is used as it is;
* **exit codes** - :data:`FINDING_FAILED_EXIT` is what ``study report`` / ``study run --report`` / ``study
  findings`` exit with when a checked finding fails (distinct from 1, an error).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from analysis.data.meta import FindingSpec, StudyMeta
from analysis.stats.finding_noise import noise_margin
from analysis.stats.finding_values import (
    PanelValue,
    cell_values,
    in_region,
    outside_grid,
    panel_statistic,
    region_text,
    spread_values,
)

#: Exit status of ``study report``, ``study run --report`` and ``study findings`` when a checked finding fails.
FINDING_FAILED_EXIT = 3

PASS, FAIL, UNDECIDED, PARTIAL, NOT_CHECKED = "PASS", "FAIL", "UNDECIDED", "PARTIAL", "NOT CHECKED"
_SIGN = {"below": "<=", "above": ">=", "ahead": ">="}


@dataclass(frozen=True)
class Check:
    """One bound of a finding: ``panel_value``'s number against ``threshold`` (``ahead``: ``versus``'s + margin)."""

    panel_value: str
    relation: str  # "below" (at most), "above" (at least) or "ahead" (at least another's number + margin)
    threshold: float | None
    value: float | None
    state: str  # "holds", "fails" or "undecided"
    subject: str = ""  # the panel value with the statistic and region, when not the best over the whole grid
    versus: str = ""  # ahead: the panel value compared with
    against: str = ""  # ahead: ``BERT 72.1% + 5.0 pp``

    def text(self) -> str:
        """``max: 16.1%, required <= 15.0%: fails`` - the number and exactly the bound tested."""
        bound = _percent(self.threshold)
        if self.against:
            bound = f"{self.against} = {bound}" if self.threshold is not None else self.against
        return f"{self.subject or self.panel_value}: {_percent(self.value)}, required {_SIGN[self.relation]} " \
               f"{bound}: {self.state}"


def _percent(x: float | None) -> str:
    return "no data" if x is None else f"{100 * x:.1f}%"


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


def _state(holds: bool, value: PanelValue, rises_help: bool) -> str:
    """holds / fails / undecided: decided unless a missing cell could move the number across the bound.

    ``rises_help``: a higher number helps the bound (``above``, ``ahead``); for ``below`` a lower one does.
    No number at all fails when nothing is missing, else is undecided.
    """
    if value.value is None:
        return "undecided" if value.may_rise or value.may_fall else "fails"
    could_help = value.may_rise if rises_help else value.may_fall
    could_hurt = value.may_fall if rises_help else value.may_rise
    if holds:
        return "undecided" if could_hurt else "holds"
    return "undecided" if could_help else "fails"


def _subject(finding: FindingSpec, panel_value: str, region: Mapping) -> str:
    if finding.statistic == "best" and not region:
        return panel_value
    stat = {"share": f"share of cells with G >= {100 * finding.level:.0f}%",
            "spread": f"mean seed spread B - R where a seed reaches {100 * finding.level:.0f}%"
            }.get(finding.statistic, finding.statistic)
    where = region_text(region)
    return f"{panel_value} ({stat}{' at ' + where if where else ''})"


def _values(frames: Mapping[str, pl.DataFrame], finding: FindingSpec, metric: str, panel: str,
            region: Mapping, complete: set[str] | None) -> dict[str, PanelValue]:
    cells = spread_values(frames, metric, finding.level) if finding.statistic == "spread" else \
        cell_values(frames, metric)
    if cells is None:
        return {}
    return panel_statistic(in_region(cells, region), panel, finding.statistic, finding.level, metric, complete)


@dataclass(frozen=True)
class _Data:
    """What a finding is checked on: the G frames, the seed noise (:func:`noise_margin`), the panel column and the
    panel values whose every cell has data (None: all)."""

    frames: Mapping[str, pl.DataFrame]
    noise: Mapping[str, pl.DataFrame] | None
    panel: str
    complete: set[str] | None


def _checks(finding: FindingSpec, metric: str, data: _Data) -> list[Check]:
    """Every bound of ``finding`` on the data (panel values without data: ``no data``)."""
    frames, panel, complete = data.frames, data.panel, data.complete
    mine = _values(frames, finding, metric, panel, finding.where, complete)
    versus_region = finding.where if finding.versus_where is None else finding.versus_where
    theirs = mine if finding.versus_where is None else _values(frames, finding, metric, panel, versus_region,
                                                               complete)

    def get(values: dict[str, PanelValue], key: str) -> PanelValue:
        done = complete is None or key in complete
        return values.get(key, PanelValue(None, not done, not done))

    checks = []
    for relation in ("below", "above"):
        for key, threshold in getattr(finding, relation).items():
            v = get(mine, key)
            holds = v.value is not None and (v.value <= threshold if relation == "below" else v.value >= threshold)
            checks.append(Check(key, relation, threshold, v.value, _state(holds, v, relation == "above"),
                                _subject(finding, key, finding.where)))
    for a, bs in finding.ahead.items():
        for b in bs:
            margin, why = finding.margin, ""
            if finding.margin >= 0 and data.noise is not None:  # a strict claim: more than seed noise
                noise = noise_margin(frames, data.noise, finding, metric, panel, (a, finding.where),
                                     (b, versus_region))
                if noise is not None and noise > margin:
                    margin, why = noise, " (2 x the seed noise of the difference)"
                elif noise is None and finding.statistic != "spread":  # a spread is the seeds' noise itself
                    why = " (no seed noise: one seed)"
            checks.append(_ahead_check(finding, a, b, get(mine, a), get(theirs, b), versus_region, margin, why))
    return checks


def _ahead_check(finding: FindingSpec, a: str, b: str, va: PanelValue, vb: PanelValue, versus_region: Mapping,
                 margin: float, why: str) -> Check:
    """A's number >= B's + ``margin``; decided unless a missing cell of A or B could flip it."""
    shown = f" {'+' if margin >= 0 else '-'} {100 * abs(margin):.1f} pp{why}" if margin or why else ""
    against = f"{_subject(finding, b, versus_region)} {_percent(vb.value)}{shown}"
    subject = _subject(finding, a, finding.where)
    if vb.value is None or va.value is None:
        state = _state(False, va if va.value is None else vb, True)
        return Check(a, "ahead", None, va.value, state, subject, b, against)
    threshold = vb.value + margin
    diff = PanelValue(va.value - vb.value, va.may_rise or vb.may_fall, va.may_fall or vb.may_rise)
    holds = va.value > threshold if finding.margin >= 0 else va.value >= threshold  # a lead exceeds its margin
    return Check(a, "ahead", threshold, va.value, _state(holds, diff, True), subject, b, against)


def evaluate_findings(meta: StudyMeta, frames: Mapping[str, pl.DataFrame], panel: str, select_metric: str,
                      complete: set[str] | None, missing_note: str = "",
                      present: set[str] | None = None, noise: Mapping[str, pl.DataFrame] | None = None
                      ) -> list[Verdict]:
    """The :class:`Verdict` of every finding of ``meta``.

    Args:
        frames: metric column -> RGB frame per configuration (grid cell), with ``g`` (G) and the cell's columns.
        noise: metric column -> per configuration ``sd`` (over seeds of each seed's best) and ``n`` (seeds):
            what a strict lead must exceed (``TrainingStats.seed_noise``); None: no seed noise is known.
        panel: the panel column the findings name values of.
        select_metric: the metric of a finding that names none.
        complete: the panel values (as strings) whose every grid cell has data with every seed; None when the
            whole study is complete (then a panel value without data fails).
        missing_note: what is missing (e.g. ``1 unreadable``), quoted in an UNDECIDED verdict.
        present: the panel values the data has at all (published results of some architectures only): bounds
            on others are left out and named; None: every panel value counts (a missing one has no data).
    """
    data = _Data(frames, noise, panel, complete)
    return [_evaluate(finding, meta, finding.metric or select_metric, data, missing_note, present)
            for finding in meta.findings]


def _evaluate(finding: FindingSpec, meta: StudyMeta, metric: str, data: _Data, missing_note: str,
              present: set[str] | None) -> Verdict:
    frames = data.frames
    if not finding.checked_at(meta.scale):
        reason = f"not checked at this scale ({meta.scale}); checked at: {', '.join(finding.scales or ())}"
        return Verdict(finding, metric, NOT_CHECKED, reason=reason)
    for region in (finding.where, finding.versus_where or {}):
        empty = outside_grid(region, lambda c: _swept(meta, c))  # nothing there to judge at this scale: no FAIL
        if empty:
            return Verdict(finding, metric, NOT_CHECKED, reason=f"not checked at this scale ({meta.scale}): {empty}")
    if cell_values(frames, metric) is None:
        return Verdict(finding, metric, FAIL, reason=f"the results have no column of {metric} (columns with a G: "
                                                     f"{', '.join(sorted(frames))})")
    try:
        checks = _checks(finding, metric, data)
    except ValueError as error:  # a region naming a column the grid does not have: the encoding is wrong
        return Verdict(finding, metric, FAIL, reason=str(error))
    absent = sorted({k for c in checks for k in _named(c) if present is not None and k not in present})
    kept = tuple(c for c in checks if not set(_named(c)) & set(absent))
    if absent and not kept:
        return Verdict(finding, metric, NOT_CHECKED,
                       reason=f"the data has none of the panel values it names ({', '.join(absent)})")
    verdict = _verdict(finding, metric, kept, missing_note, f"not in the data, left out: {', '.join(absent)}"
                       if absent else "")
    if absent and verdict.status == PASS:  # what holds is only part of the claim: never PASS
        checked = sorted({k for c in kept for k in _named(c)})
        return Verdict(finding, metric, PARTIAL, kept, f"checked on {', '.join(checked)} only; not in the data, "
                                                       f"left out: {', '.join(absent)}")
    return verdict


def _swept(meta: StudyMeta, column: str) -> list | None:
    """The values a plain axis takes, which are the column's values (a Linked axis's labels need not be)."""
    axis = meta.axes.get(column)
    return axis if isinstance(axis, list) and not any(isinstance(v, list | dict) for v in axis) else None


def _named(check: Check) -> list[str]:
    """The panel values a check is on (and for ``ahead`` the one it is compared with)."""
    return [check.panel_value, *([check.versus] if check.versus else [])]


def _verdict(finding: FindingSpec, metric: str, checks: tuple[Check, ...], missing_note: str,
             note: str = "") -> Verdict:
    if not checks:
        return Verdict(finding, metric, FAIL, reason="the finding names no panel value to check")
    states = {c.state for c in checks}
    if "fails" in states:
        return Verdict(finding, metric, FAIL, checks, note)
    if "undecided" in states:
        why = f"not decided: the grid is incomplete ({missing_note})" if missing_note else \
            "not decided: the grid is incomplete"
        return Verdict(finding, metric, UNDECIDED, checks, f"{why}; {note}" if note else why)
    return Verdict(finding, metric, PASS, checks, note)


def failed(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The verdicts that are FAIL (what makes the CLI exit with :data:`FINDING_FAILED_EXIT`)."""
    return [v for v in verdicts if v.status == FAIL]
