"""A study's findings checked against its numbers: PASS, FAIL, UNDECIDED, PARTIAL or NOT CHECKED, each number with
its interval, the confidence and the seeds behind it.

Each finding (:class:`search_spaces.finding.Finding`) computes one number per panel value - a statistic (best G by
default) of a metric over a region of the grid - and bounds it: ``below`` means *at most* the threshold, ``above``
*at least*, ``ahead`` at least another panel value's number plus ``margin``. Every number has an interval from seed
variation (:mod:`analysis.stats.finding_intervals`, :mod:`analysis.stats.seed_noise`). A bound is decided only where
the interval clears it:

* **holds** - the whole interval satisfies the bound; **fails** - the whole interval violates it; else
  **undecided**. PASS needs every bound to hold, FAIL one bound to fail; anything else is UNDECIDED, with the
  intervals. A strict lead (``ahead`` with ``margin >= 0``: "more", "better") holds when the lower end of the lead
  exceeds the margin and fails when its upper end does not; a negative margin ("within 2 points") is a bound as it is;
  ``level_with`` and ``not_ahead`` are equivalence, tested against the finding's ``equivalence_margin`` (two one-sided
  tests: inside holds, wholly outside fails); ``below`` and ``above`` on one panel value are a two-sided level (PASS
  inside both, FAIL wholly outside either); ``worst_beats_best`` is the NAP paper's criterion with the chance of its
  separation and the lead's interval (:func:`analysis.stats.finding_extremes.worst_beats_best`); the time axis
  (``reached_by``, ``still_holds``, ``learned_then_unlearned``, ``faster_than``) is
  :mod:`analysis.stats.finding_time`'s;
* **confidence** - a wrong PASS or a wrong FAIL of the finding happens with probability at most ``alpha = 1 -
  confidence`` (the study's, default 95%): each end of an interval is a one-sided bound at ``alpha / ends``, shared
  over the cells where any cell could make that end wrong, and an adaptive budget spends it over each cell's seed
  counts (a mean's or a spread's over the looks): :func:`analysis.stats.finding_intervals.error_budget`;
  docs/budget.md states it once, with what a study of many findings promises;
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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from analysis.stats.finding_any_cell import any_cell_checks
from analysis.stats.finding_cells import (
    VALUES,
    cell_table,
    in_region,
    is_accuracy,
    outside_grid,
    with_expected,
)
from analysis.stats.finding_check import Check, check_state, subject_text
from analysis.stats.finding_extremes import worst_beats_best
from analysis.stats.finding_intervals import Errors, Estimate, error_budget, estimate
from analysis.stats.finding_time import Curves, best_curves, time_checks, time_ends
from analysis.stats.seed_noise import NoiseModel
from analysis.stats.verdict_text import percent_text
from search_spaces.finding import Finding
from search_spaces.record import StudyRecord

PASS, FAIL, UNDECIDED, PARTIAL, NOT_CHECKED = "PASS", "FAIL", "UNDECIDED", "PARTIAL", "NOT CHECKED"
@dataclass(frozen=True)
class Verdict:
    """A finding's outcome and the checks behind it (no checks when NOT CHECKED)."""

    finding: Finding
    metric: str
    status: str
    checks: tuple[Check, ...] = ()
    reason: str = ""
    #: how the intervals were taken: ``95% confidence (a wrong PASS or FAIL at most 5%; one look); seed noise ...``
    basis: str = ""

    def lines(self) -> list[str]:
        """Summary lines: the verdict and description, then one line per bound, the reason and the basis."""
        head = f"  {self.status}: {self.finding.description}"
        detail = [f"      {c.text()}" for c in self.checks]
        detail += [f"      {text}" for text in (self.reason, self.basis) if text]
        return [head, *detail]

    def contention(self, futility: bool = False) -> pl.DataFrame | None:
        """The cells whose further seeds could decide this finding (None: none can, or it is decided). With
        ``futility``, a bound whose number sits so close to it that even every seed would leave it undecided asks for
        nothing (:meth:`Check.hopeless`), and once one bound is so, the finding can no longer PASS: only the bounds
        whose numbers point to failing still ask."""
        if self.status != UNDECIDED:
            return None
        open_ = [c for c in self.checks if c.state == "undecided"]
        if futility:
            stuck = any(c.hopeless() for c in open_)
            open_ = [c for c in open_ if not c.hopeless() and (not stuck or c.points_to_failing())]
        found = [c.estimate.contention(c.threshold if c.relation in ("below", "above") else None) for c in open_]
        frames = [f for f in found if f is not None and f.height]
        return pl.concat(frames, how="diagonal_relaxed").unique(maintain_order=True) if frames else None


@dataclass(frozen=True)
class FindingData:
    """What findings are checked on.

    Attributes:
        cells: metric column (or combination) -> per grid cell its configuration columns, ``g`` (G) and, where
            known, ``r`` / ``b`` (worst / best seed), ``sd`` (seed noise) and ``n`` or ``n_seeds`` (seeds).
        panel: the panel column the findings name values of.
        select_metric: the metric of a finding that names none.
        expected: every cell the grid will have (configuration columns); None: the cells there are are all.
        max_seeds: the most seeds a cell gets (the study's).
        missing_note: what is missing (e.g. ``1 unreadable``), quoted where cells not run leave a verdict open.
        present: the panel values the data has at all (published results of some architectures only): bounds on
            others are left out and named; None: every panel value counts (a missing one has no data).
    """

    cells: Mapping[str, pl.DataFrame]
    panel: str
    select_metric: str
    expected: pl.DataFrame | None = None
    max_seeds: int = 1
    missing_note: str = ""
    present: set[str] | None = None
    #: the seed-noise model fitted to a metric's cells (None: :meth:`NoiseModel.fit`; the calibration's negative
    #: controls put a wrong one here)
    noise: Callable[[pl.DataFrame], NoiseModel] | None = field(default=None, compare=False)
    #: one row per evaluation (configuration columns, ``seed``, ``step``, ``epoch``, the metrics' columns) for the
    #: time-axis bounds; None: the data has none (a finding with such a bound is NOT CHECKED)
    evaluations: pl.DataFrame | None = field(default=None, compare=False)



def evaluate_findings(meta: StudyRecord, data: FindingData, look: int | None = None) -> list[Verdict]:
    """The :class:`Verdict` of every finding of ``meta`` at look ``look`` of the study's
    (:attr:`search_spaces.study.Study.looks`; None: the last)."""
    look = meta.looks if look is None else look
    tables: dict[str, tuple[pl.DataFrame, NoiseModel] | None] = {}
    return [_evaluate(finding, meta, data, look, tables) for finding in meta.findings]


def _evaluate(finding: Finding, meta: StudyRecord, data: FindingData, look: int,
              tables: dict[str, tuple[pl.DataFrame, NoiseModel] | None]) -> Verdict:
    metric = finding.metric_of(data.select_metric)
    if not finding.checked_at(meta.scale):
        reason = f"not checked at this scale ({meta.scale}); checked at: {', '.join(finding.scales)}"
        return Verdict(finding, metric, NOT_CHECKED, reason=reason)
    for region in (finding.where, finding.versus_where or {}):
        empty = outside_grid(region, meta.axis_values)  # nothing there to judge at this scale: no FAIL
        if empty:
            return Verdict(finding, metric, NOT_CHECKED, reason=f"not checked at this scale ({meta.scale}): {empty}")
    if metric not in tables:  # one table and one noise model per metric, whatever the findings reading it
        table = cell_table(data.cells, metric)
        table = None if table is None else with_expected(table, data.expected)
        noise = None if table is None else (data.noise or NoiseModel.fit)(table)
        tables[metric] = None if table is None or noise is None else (noise.annotate(table), noise)
    if tables[metric] is None:
        return _without_column(finding, metric, data)
    if finding.timed() and (data.evaluations is None or finding.time not in data.evaluations.columns):
        return Verdict(finding, metric, NOT_CHECKED, reason=f"its time-axis bounds read the rows of each evaluation "
                                                            f"by {finding.time}, which this data does not have")
    table, noise = tables[metric]
    try:
        checks, basis = _checks(finding, metric, table, data, noise, (meta, look))
    except ValueError as error:  # a region naming a column the data does not have
        return Verdict(finding, metric, FAIL, reason=str(error))
    absent = sorted({k for c in checks for k in _named(c) if data.present is not None and k not in data.present}
                    | {k for c in checks for k in _empty_sides(c) if data.present is not None})
    kept = tuple(c for c in checks if not set(_named(c)) & set(absent))
    if absent and not kept:
        return Verdict(finding, metric, NOT_CHECKED,
                       reason=f"the data has none of the panel values it names ({', '.join(absent)})")
    left_out = f"not in the data, left out: {', '.join(absent)}" if absent else ""
    verdict = _verdict(finding, metric, kept, data.missing_note, left_out, basis)
    if absent and verdict.status == PASS:  # what holds is only part of the claim: never PASS
        checked = sorted({k for c in kept for k in _named(c)})
        return Verdict(finding, metric, PARTIAL, kept, f"checked on {', '.join(checked)} only; {left_out}", basis)
    return verdict


def _without_column(finding: Finding, metric: str, data: FindingData) -> Verdict:
    """No cell has ``metric``'s column. Where the grid is not all run and none of the finding's cells has run (a
    study run in part, ``--where``), the column is not there yet: UNDECIDED. Else the results lack it: FAIL."""
    any_metric = next(iter(data.cells.values()), None)
    regions = [finding.where] + ([finding.versus_where] if finding.versus_where is not None else [])
    try:
        ran = any_metric is None or any(in_region(any_metric, region).height for region in regions)
    except ValueError:  # a region naming a column the data does not have: a missing column all the same
        ran = True
    if data.expected is not None and not ran:
        pending = in_region(data.expected, finding.where).height
        return Verdict(finding, metric, UNDECIDED, reason=f"none of its {pending} cell(s) has run yet, so the "
                                                          f"results have no column of {metric} so far")
    return Verdict(finding, metric, FAIL, reason=f"the results have no column of {metric} (columns with a G: "
                                                 f"{', '.join(sorted(data.cells))})")


def _checks(finding: Finding, metric: str, table: pl.DataFrame, data: FindingData, noise: NoiseModel,
            budget: tuple[StudyRecord, int]) -> tuple[list[Check], str]:
    """Every bound of ``finding`` on ``table``, and the words saying how its intervals were taken (``budget``: the
    study, this look)."""
    meta, look = budget
    versus_region = finding.where if finding.versus_where is None else finding.versus_where
    sides: dict[tuple[str, str], pl.DataFrame] = {}

    def side(value: str, region: Mapping[str, Any]) -> tuple[str, str]:
        key = (value, repr(sorted(region.items())))
        if key not in sides:
            sides[key] = in_region(table, region).filter(pl.col(data.panel).cast(pl.String) == value)
        return key

    bounds = [(r, k, t) for r in ("below", "above") for k, t in getattr(finding, r).items()]
    pairs = [(a, b, "ahead") for a, bs in finding.ahead.items() for b in bs]
    pairs += [(a, b, "level") for a, bs in finding.level_with.items() for b in bs]
    pairs += [(a, b, "not_ahead") for a, bs in finding.not_ahead.items() for b in bs]
    pairs += [(a, b, "worst_beats_best") for a, bs in finding.worst_beats_best.items() for b in bs]
    for _, key, _ in bounds:
        side(key, finding.where)
    for a, b, _ in pairs:
        side(a, finding.where), side(b, versus_region)
    ends = len(bounds) + sum(2 if relation == "level" else 1 for *_, relation in pairs) + time_ends(finding)
    errors = error_budget(meta, look, ends)
    numbers: dict[tuple[tuple[str, str], bool], Estimate] = {}

    def number(value: str, region: Mapping[str, Any], halved: bool = False) -> Estimate:
        key = (side(value, region), halved)
        if key not in numbers:
            numbers[key] = estimate(sides[key[0]], finding.statistic, finding.level, metric, noise,
                                    errors.halved() if halved else errors, data.max_seeds)
        return numbers[key]

    percent = is_accuracy(metric)
    checks = [_bound_check(finding, r, k, t, number(k, finding.where), percent) for r, k, t in bounds]
    checks += [_ahead_check(finding, (a, b, relation), (number(a, finding.where, True),
                                                        number(b, versus_region, True)), versus_region, percent)
               for a, b, relation in pairs if relation != "worst_beats_best"]
    checks += [worst_beats_best(finding, (a, b), (number(a, finding.where, True), number(b, versus_region, True)),
                                 (sides[side(a, finding.where)], sides[side(b, versus_region)]),
                                 (errors, data.max_seeds, percent, metric)) for a, b, r in pairs
               if r == "worst_beats_best"]
    if finding.timed() and data.evaluations is not None:
        keys = [c for c in table.columns if c not in VALUES]

        def curves_of(value: str, region: Mapping[str, Any], at: Errors) -> Curves:
            return best_curves(sides[side(value, region)], data.evaluations, keys, metric, finding.time, noise, at)

        checks += any_cell_checks(finding, metric, lambda value: sides[side(value, finding.where)],
                                  (data.evaluations, keys, data.panel), errors, percent, noise) \
            if finding.cell == "any" else time_checks(finding, metric, curves_of, versus_region, errors, percent)
    basis = _basis(meta, ends, (look, meta.looks), noise, finding.statistic)
    if finding.timed():
        basis += ("; a learning curve's seed noise from each evaluation's neighbours (the evaluations before and "
                  "after), at least its cell's in the grid")
    return checks, basis


def _basis(meta: StudyRecord, ends: int, looks: tuple[int, int], noise: NoiseModel, statistic: str) -> str:
    look, total = looks
    when = "one look" if total == 1 else f"look {look} of {total}, spent over the seed counts"
    share = f"; each end of an interval at {100 * (1 - meta.confidence) / ends:.2g}%" if ends > 1 else ""
    caveat = ("; a spread's cells (those whose G reaches its level) are read from the same seeds as its differences, "
              "so this confidence is approximate (docs/budget.md, Calibration)") if statistic == "spread" else ""
    return (f"{100 * meta.confidence:g}% confidence (a wrong PASS or FAIL at most {100 * (1 - meta.confidence):g}%; "
            f"{when}{share}); {noise.text()}{caveat}")


def _bound_check(finding: Finding, relation: str, key: str, threshold: float, e: Estimate, percent: bool) -> Check:
    """At most (``below``) or at least (``above``) ``threshold``, decided where the interval clears it; a panel
    value without any cell (not in the data, nothing expected) fails."""
    subject = subject_text(finding, key, finding.where)
    if e.cells == 0:
        return Check(key, relation, threshold, e, "fails", subject, bound=threshold, percent=percent)
    if relation == "below":
        state = check_state(e.high <= threshold, e.low > threshold)
    else:
        state = check_state(e.low >= threshold, e.high < threshold)
    return Check(key, relation, threshold, e, state, subject, bound=threshold, percent=percent)


def _ahead_check(finding: Finding, pair: tuple[str, str, str], numbers: tuple[Estimate, Estimate],
                 versus_region: Mapping, percent: bool) -> Check:
    """``ahead``: A's number >= B's + ``margin`` (strictly more for a margin >= 0: a lead), decided on the interval of
    the lead; ``level``: A and B differ by at most ``equivalence_margin`` either way, ``not_ahead``: A leads B by at
    most ``equivalence_margin`` (equivalence tested as equivalence, two one-sided tests: the interval wholly inside the
    margin holds, wholly outside fails, else undecided - fewer seeds, a wider interval, never a likelier PASS)."""
    (a, b, relation), (mine, theirs) = pair, numbers
    margin = finding.margin if relation == "ahead" else finding.equivalence_margin or 0.0
    unit = " pp" if percent else ""
    shown = f" {'+' if margin >= 0 else '-'} {percent_text(abs(margin), percent).rstrip('%')}{unit}" \
        if margin and relation == "ahead" else ""
    seeds = f" ({theirs.seeds_text()})" if theirs.cells else ""
    against = f"{subject_text(finding, b, versus_region)} {percent_text(theirs.value, percent)}{seeds}{shown}"
    lead = mine.minus(theirs)
    threshold = None if theirs.value is None else theirs.value + (margin if relation == "ahead" else 0.0)
    made = {"subject": subject_text(finding, a, finding.where), "versus": b, "against": against, "mine": mine,
            "bound": margin, "percent": percent}
    if mine.cells == 0 or theirs.cells == 0:
        return Check(a, relation, threshold, lead, "fails", **made)
    return Check(a, relation, threshold, lead, _leadcheck_state(relation, lead, margin), **made)


def _leadcheck_state(relation: str, lead: Estimate, margin: float) -> str:
    if lead.value is None:
        return "undecided"
    if relation == "level":  # |A - B| <= margin: the whole interval inside [-margin, margin]
        return check_state(-margin <= lead.low and lead.high <= margin, lead.low > margin or lead.high < -margin)
    if relation == "not_ahead":  # A - B <= margin
        return check_state(lead.high <= margin, lead.low > margin)
    if margin >= 0:  # "more": the lead must exceed the margin
        return check_state(lead.low > margin, lead.high <= margin)
    return check_state(lead.low >= margin, lead.high < margin)


def _empty_sides(check: Check) -> list[str]:
    """The panel values of a check that have no cell in their region (published data lacking them there)."""
    own = check.mine or check.estimate
    sides = [(check.panel_value, own)] + ([(check.versus, check.estimate.parts[1])] if check.estimate.parts else [])
    return [value for value, e in sides if e.cells == 0]


def _named(check: Check) -> list[str]:
    """The panel values a check is on (and for ``ahead`` the one it is compared with)."""
    return [check.panel_value, *([check.versus] if check.versus else [])]


def _verdict(finding: Finding, metric: str, checks: tuple[Check, ...], missing_note: str, note: str,
             basis: str) -> Verdict:
    if not checks:
        return Verdict(finding, metric, FAIL, reason="the finding names no panel value to check")
    states = {c.state for c in checks}
    if "fails" in states:
        return Verdict(finding, metric, FAIL, checks, note, basis)
    if "undecided" in states:
        not_run = any(c.estimate.not_run for c in checks if c.state == "undecided")
        why = "not decided: an interval holds the bound"
        if not_run:
            why += f"; cells not run yet could move it ({missing_note or 'the grid is incomplete'})"
        return Verdict(finding, metric, UNDECIDED, checks, f"{why}; {note}" if note else why, basis)
    return Verdict(finding, metric, PASS, checks, note, basis)


def failed(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The verdicts that are FAIL (what makes the CLI exit with ``study.cli.common.FINDING_FAILED_EXIT``)."""
    return [v for v in verdicts if v.status == FAIL]
