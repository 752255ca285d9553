"""A study's findings checked against its numbers: PASS, FAIL, UNDECIDED, PARTIAL or NOT CHECKED, each number with
its interval, the confidence and the seeds behind it.

Each finding (:class:`search_spaces.finding.Finding`) states bounds of the kinds in :mod:`analysis.stats.kinds` (one
class per kind: its number, its interval, its state). A bound is decided only where the interval clears it:
**holds** - the whole interval satisfies the bound; **fails** - the whole interval violates it; else **undecided**.
PASS needs every bound to hold, FAIL one bound to fail; anything else is UNDECIDED, with the intervals.

* **confidence** - a wrong PASS or a wrong FAIL of the finding happens with probability at most ``alpha = 1 -
  confidence`` (the study's, default 95%): each end of an interval that can fail the finding gets ``alpha / ends``
  (each kind says how many ends it has), shared over the cells where any cell could make that end wrong, and an
  adaptive budget spends it over each cell's seed counts (a mean's or a spread's over the looks):
  :func:`analysis.stats.intervals.errors.error_budget`; docs/budget.md states it once. Without any measured seed
  noise (a published table printing no spread) no confidence is stated: the numbers decide alone, and the basis
  line says so;
* **cells not run** - a cell the grid has but the rows lack spans the metric's range: a bound it could flip stays
  undecided, what it cannot change is decided;
* **scales** - a finding whose ``scales`` do not include the study's scale, or whose region this scale's grid has
  no cell in, is NOT CHECKED, never FAIL;
* **absent panel values** - on data with only some panel values (the release ships BERT alone for Fig. 3), bounds on
  the others are left out and named; what holds is PARTIAL, never PASS; with no bound left it is NOT CHECKED;
* **exit codes** - a FAIL is what makes ``study report`` / ``study run --report`` / ``study findings`` exit with
  ``study.cli.common.FINDING_FAILED_EXIT`` (3; 1 is an error).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from analysis.stats.intervals.errors import error_budget
from analysis.stats.kinds.base import Check, Reading, State, bounds_of, reads_time_axis
from analysis.stats.metric import metric_range
from analysis.stats.noise import NoiseModel
from analysis.stats.region import outside_grid
from analysis.stats.table import CellTable, cell_table, rows
from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.status import Status
from search_spaces.finding import Finding, is_probe
from search_spaces.record import StudyRecord


@dataclass(frozen=True)
class Verdict:
    """A finding's outcome and the checks behind it (no checks when NOT CHECKED)."""

    finding: Finding
    metric: str
    status: Status
    checks: tuple[Check, ...] = ()
    reason: str = ""
    #: how the intervals were taken: ``95% confidence (a wrong PASS or FAIL at most 5%; one look) ...``
    basis: str = ""

    def lines(self) -> list[str]:
        """Summary lines: the verdict and description, then one line per bound, the reason and the basis."""
        head = f"  {self.status}: {self.finding.description}"
        detail = [f"      {c.text()}" for c in self.checks]
        detail += [f"      {text}" for text in (self.reason, self.basis, self.chosen()) if text]
        return [head, *detail]

    def chosen(self) -> str:
        """The finding's numbers of the project's choosing, in one line ("" when it names none)."""
        return "the project's numbers, not the paper's: " + "; ".join(self.finding.chosen) if self.finding.chosen \
            else ""

    def contention(self, futility: bool = False) -> pl.DataFrame | None:
        """The cells whose further seeds could decide this finding (None: none can, or it is decided). With
        ``futility``, a bound whose number sits so close to it that even every seed would leave it undecided asks for
        nothing (:meth:`Check.hopeless`), and once one bound is so, the finding can no longer PASS: only the bounds
        whose numbers point to failing still ask."""
        if self.status != Status.UNDECIDED:
            return None
        open_ = [c for c in self.checks if c.state == State.UNDECIDED]
        if futility:
            stuck = any(c.hopeless() for c in open_)
            open_ = [c for c in open_ if not c.hopeless() and (not stuck or c.points_to_failing())]
        frames = [f for f in (c.contention() for c in open_) if f is not None and f.height]
        return _distinct(pl.concat(frames, how="diagonal_relaxed")) if frames else None


#: Stands for NaN in a row's values (equal to itself, as two NaNs are in a frame's unique rows).
_NAN = object()


def _distinct(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``frame`` (a few cells' keys), each at its first occurrence: ``unique(maintain_order=True)``,
    in Python over its rows rather than a query (an adaptive look asks it of every undecided finding)."""
    if any(dtype.is_nested() or dtype == pl.Object for dtype in frame.dtypes):
        return frame.unique(maintain_order=True)
    seen: set[tuple[Any, ...]] = set()
    first = []
    for row in frame.iter_rows():
        key = tuple(_NAN if isinstance(v, float) and math.isnan(v) else v for v in row)
        first.append(key not in seen)
        seen.add(key)
    return rows(frame, pl.Series(first, dtype=pl.Boolean))


#: Per metric: its cell table (annotated with the noise model's prior), the model, and what its findings read of it
#: (:attr:`Reading.memo`), shared by the findings.
Tables = dict[str, tuple[CellTable, NoiseModel, dict[tuple[Any, ...], Any]] | None]


def evaluate_findings(meta: StudyRecord, data: FindingData, look: int | None = None) -> list[Verdict]:
    """The :class:`Verdict` of every finding of ``meta`` at look ``look`` of the study's
    (:attr:`search_spaces.study.Study.looks`; None: the last)."""
    look = meta.looks if look is None else look
    tables: Tables = {}
    outside: dict[str, str] = {}  # region -> why the grid has no cell in it (empty: some)

    def empty(region: Mapping[str, Any]) -> str:
        key = repr(sorted(region.items()))
        if key not in outside:
            outside[key] = _outside(region, key, meta)
        return outside[key]

    return [_evaluate(finding, meta, data, look, tables, empty) for finding in meta.findings]


#: :func:`outside_grid` by region and the grid's values on its columns, kept over calls: a study's looks and the
#: calibration's replays ask it of the same regions thousands of times (at most :data:`_KEPT` answers kept)
_OUTSIDE: dict[tuple[str, str], str] = {}
_KEPT = 4096


def _outside(region: Mapping[str, Any], key: str, meta: StudyRecord) -> str:
    """Why no cell of ``meta``'s grid lies in ``region`` (``key``: its text), or empty (:func:`outside_grid`)."""
    axes = repr([(column, meta.axis_values(column)) for column in region])
    if (key, axes) not in _OUTSIDE:
        if len(_OUTSIDE) >= _KEPT:
            _OUTSIDE.clear()
        _OUTSIDE[key, axes] = outside_grid(region, meta.axis_values)
    return _OUTSIDE[key, axes]


def _table(metric: str, data: FindingData,
           tables: Tables) -> tuple[CellTable, NoiseModel, dict[tuple[Any, ...], Any]] | None:
    """One cell table and one noise model per metric, whatever the findings reading it."""
    if metric not in tables:
        table = cell_table(data.cells, metric)
        if table is None:
            tables[metric] = None
        else:
            table = table.with_expected(data.expected)
            noise = (data.noise or NoiseModel.fit)(table)
            tables[metric] = (noise.annotate(table), noise, {})
    return tables[metric]


def _other_table(metric: str, data: FindingData, tables: Tables) -> tuple[CellTable, NoiseModel] | None:
    """Another metric's cells and noise model (None: the data has none), for a kind that reads several metrics."""
    found = _table(metric, data, tables)
    return None if found is None else (found[0], found[1])


def _evaluate(finding: Finding, meta: StudyRecord, data: FindingData, look: int, tables: Tables,
              outside: Callable[[Mapping[str, Any]], str]) -> Verdict:
    metric = finding.metric_of(data.select_metric)
    if not finding.checked_at(meta.scale):
        reason = f"not checked at this scale ({meta.scale}); checked at: {', '.join(finding.scales)}"
        return Verdict(finding, metric, Status.NOT_CHECKED, reason=reason)
    for region in (finding.where, finding.versus_where or {}):
        empty = outside(region)  # nothing there to judge at this scale: no FAIL
        if empty:
            return Verdict(finding, metric, Status.NOT_CHECKED,
                           reason=f"not checked at this scale ({meta.scale}): {empty}")
    found = _table(metric, data, tables)
    if found is None:
        return _without_column(finding, metric, data)
    bounds = bounds_of(finding)
    timed = reads_time_axis(finding, bounds)
    if timed and (data.evaluations is None or finding.time not in data.evaluations.columns):
        return Verdict(finding, metric, Status.NOT_CHECKED, reason=f"its time-axis bounds read the rows of each "
                                                                   f"evaluation by {finding.time}, which this data "
                                                                   f"does not have")
    table, noise, memo = found
    ends = sum(b.ends() for b in bounds)
    reading = Reading(finding, metric, table, noise, error_budget(meta, look, ends), data.max_seeds, data.panel,
                      data.evaluations, memo, other=lambda other: _other_table(other, data, tables))
    try:
        checks = [bound.judge(reading) for bound in bounds]
    except ValueError as error:  # a region naming a column the data does not have
        return Verdict(finding, metric, Status.FAIL, reason=str(error))
    basis = _basis(meta, (ends, reading.errors.low), (look, meta.looks), noise, finding, metric, data.select_metric)
    present = data.present
    absent = sorted({k for c in checks for k in c.kind.named() if present is not None and k not in present}
                    | {k for c in checks for k in c.kind.empty_sides(c) if present is not None})
    kept = tuple(c for c in checks if not set(c.kind.named()) & set(absent))
    if absent and not kept:
        return Verdict(finding, metric, Status.NOT_CHECKED,
                       reason=f"the data has none of the panel values it names ({', '.join(absent)})")
    left_out = f"not in the data, left out: {', '.join(absent)}" if absent else ""
    verdict = _verdict(finding, metric, kept, data.missing_note, left_out, basis)
    if absent and verdict.status == Status.PASS:  # what holds is only part of the claim: never PASS
        checked = sorted({k for c in kept for k in c.kind.named()})
        return Verdict(finding, metric, Status.PARTIAL, kept, f"checked on {', '.join(checked)} only; {left_out}",
                       basis)
    return verdict


def _without_column(finding: Finding, metric: str, data: FindingData) -> Verdict:
    """No cell has ``metric``'s column. Where the grid is not all run and none of the finding's cells has run (a
    study run in part, ``--where``), the column is not there yet: UNDECIDED. Else the results lack it: FAIL."""
    any_metric = next(iter(data.cells.values()), None)
    regions = [finding.where] + ([finding.versus_where] if finding.versus_where is not None else [])
    try:
        ran = any_metric is None or any(CellTable.of(any_metric).where(region).height for region in regions)
    except ValueError:  # a region naming a column the data does not have: a missing column all the same
        ran = True
    if data.expected is not None and not ran:
        pending = CellTable.of(data.expected).where(finding.where).height
        return Verdict(finding, metric, Status.UNDECIDED, reason=f"none of its {pending} cell(s) has run yet, so "
                                                                 f"the results have no column of {metric} so far")
    if is_probe(metric):  # no trial asked for it (the authors' release has none): nothing says yes or no
        return Verdict(finding, metric, Status.NOT_CHECKED,
                       reason=f"the results have no column of {metric}: probes are written only by trials that ask "
                              f"for them (the `probes` config field, docs/results.md)")
    return Verdict(finding, metric, Status.FAIL, reason=f"the results have no column of {metric} (columns with a G: "
                                                        f"{', '.join(sorted(data.cells))})")


def _basis(meta: StudyRecord, error: tuple[int, float], looks: tuple[int, int], noise: NoiseModel,
           finding: Finding, metric: str, select_metric: str) -> str:
    """How the finding's intervals were taken, in words: its confidence and each interval end's error (``ends``: how
    many, and the error each was read at, before an adaptive budget's share), and the seed noise they come
    from (none measured: no confidence is stated, the numbers decide alone)."""
    ends, each = error
    look, total = looks
    percent = metric_range(metric)[1] == 1.0
    if not noise.measured:
        return f"no confidence stated: {noise.text(percent)}"
    when = "one look" if total == 1 else f"look {look} of {total}, spent over the seed counts"
    share = f"; each end of an interval at {100 * each:.2g}%" if ends > 1 else ""
    caveat = "" if finding.statistic != "spread" else (
        "; a spread's cells (those whose G reaches its level) are read from the same seeds as its differences, so this "
        "confidence is approximate (docs/budget.md, Calibration)")
    basis = (f"{100 * meta.confidence:g}% confidence (a wrong PASS or FAIL at most {100 * (1 - meta.confidence):g}%; "
             f"{when}{share}); {noise.text(percent)}{caveat}")
    if is_probe(metric):
        basis += (f"; a probe, read at each cell's checkpoint (the evaluation where its {select_metric} seed mean is "
                  f"best)")
    if finding.timed():
        basis += ("; a learning curve's seed noise from each evaluation's neighbours (the evaluations before and "
                  "after), at least its cell's in the grid")
    return basis


def _verdict(finding: Finding, metric: str, checks: tuple[Check, ...], missing_note: str, note: str,
             basis: str) -> Verdict:
    if not checks:
        return Verdict(finding, metric, Status.FAIL, reason="the finding names no panel value to check")
    states = {c.state for c in checks}
    if State.FAILS in states:
        return Verdict(finding, metric, Status.FAIL, checks, note, basis)
    if State.UNDECIDED in states:
        not_run = any(c.estimate.not_run for c in checks if c.state == State.UNDECIDED)
        why = "not decided: " + ", ".join(dict.fromkeys(c.open_because for c in checks if c.state == State.UNDECIDED))
        if not_run:
            why += f"; cells not run yet could move it ({missing_note or 'the grid is incomplete'})"
        return Verdict(finding, metric, Status.UNDECIDED, checks, f"{why}; {note}" if note else why, basis)
    return Verdict(finding, metric, Status.PASS, checks, note, basis)


def failed(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The verdicts that are FAIL (what makes the CLI exit with ``study.cli.common.FINDING_FAILED_EXIT``)."""
    return [v for v in verdicts if v.status == Status.FAIL]
