"""The findings section and the summaries: the same verdicts at the top of the page and on the command line.

``findings``: each finding's verdict (PASS / FAIL / UNDECIDED / NOT CHECKED) with the bound it tests.
:func:`glance_html` (top of the page) and :func:`summary_lines` (``summary.txt``, the CLI) say what the
numbers are computed from and what they lack.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from analysis.render.page import Page
from analysis.report.sections import ReportContext, section
from analysis.stats.order import in_paper_order
from analysis.stats.training_stats import describe
from analysis.stats.verdicts.evaluate import Verdict
from analysis.stats.verdicts.status import Status

#: At most this many unreadable files / failed trials are named in the text summary (the page lists all).
MAX_LISTED = 10


_VERDICT_CLASS = {Status.PASS: "pass", Status.UNDECIDED: "undecided", Status.PARTIAL: "undecided",
                  Status.NOT_CHECKED: "unchecked"}


def verdicts_of(ctx: ReportContext) -> list[Verdict]:
    """The findings' verdicts on this study's numbers, with their intervals, what is missing named (an adaptive
    study's as its looks decided them): analysis.stats.verdicts.study, the same as each look and `study findings`."""
    from analysis.stats.verdicts.data import finding_data
    from analysis.stats.verdicts.study import study_verdicts

    return study_verdicts(ctx.meta, finding_data(ctx.meta, ctx.training, ctx.coverage.missing_text()))


def _verdict_html(v: Verdict) -> str:
    cls = _VERDICT_CLASS.get(v.status, "fail")
    detail = "; ".join(c.text() for c in v.checks) + (f" — {v.reason}" if v.reason else "")
    notes = (text for text in (v.finding.quote, v.chosen()) if text)
    quote = "".join(f"<br><span class='note'>{html.escape(text)}</span>" for text in notes)
    return (f"<p><span class='{cls}'>{v.status}</span> {html.escape(v.finding.description)} "
            f"<span class='note'>[{html.escape(v.metric)}: {html.escape(detail.lstrip('; '))}]</span>{quote}</p>")


@section("findings")
def findings_section(page: Page, ctx: ReportContext) -> list[str]:
    """Each finding's verdict with the numbers and exactly the bound it tests (the CLI's exit status); a measurement
    study's too (Fig. 1, Sec. 3's context share: no learning rate, the same verdicts as `study findings`)."""
    if not ctx.meta.findings:
        return []
    ctx.verdicts = verdicts_of(ctx)
    page.h(2, "Findings")
    page.p("A finding bounds a statistic of a metric's G (mean over seeds, maximised over training) per panel "
           "value: by default the best cell of the grid, else the one named beside the panel value (worst, mean, "
           "or the share of cells reaching a level, over a region of the grid). Each number has its interval from "
           "seed variation [low, high] and the seeds behind it; the line under a finding says the confidence, over "
           "how many intervals and looks it is simultaneous, and the seed noise. 'required <=' is at most, '>=' at "
           "least (or more than another panel value's number plus a margin: the lead's interval must clear the "
           "margin). PASS / FAIL: every interval clears its bound / one lies wholly on the wrong side. UNDECIDED: an "
           "interval holds a bound (more seeds, or cells not run yet, could decide it). NOT CHECKED: the study's "
           "scale is too small to show it. PARTIAL: the bounds checked hold, but the data lacks some of the panel "
           "values the finding names (they are named).", "note")
    page.raw("".join(_verdict_html(v) for v in ctx.verdicts))
    return []


def glance_html(ctx: ReportContext) -> str:
    """The box under the title: coverage, best G per panel, the findings' verdicts."""
    parts = []
    if not ctx.coverage.complete:
        parts.append(f"<p class='fail'>Incomplete: {html.escape(ctx.coverage.note())}.</p>")
    if ctx.trained and not ctx.training.empty:
        stats, a = ctx.training, ctx.training.axes
        parts.append(f"<p><b>Best {html.escape(stats.metrics.select)} G</b> (mean over seeds, best combination):"
                     "</p><ul>")
        for row in in_paper_order(stats.best[stats.metrics.select], a.keys, a.panel_order).iter_rows(named=True):
            parts.append(f"<li>{html.escape(describe(row, a.keys))}: <b>{100 * row['g']:.1f}%</b> "
                         f"<span class='note'>at {html.escape(describe(row, [a.x, a.y]))}</span></li>")
        parts.append("</ul>")
    for v in ctx.verdicts:
        parts.append(f"<p><span class='{_VERDICT_CLASS.get(v.status, 'fail')}'>{v.status}</span> "
                     f"{html.escape(v.finding.description)}</p>")
    return "<div class='glance'>" + "".join(parts) + "</div>" if parts else ""


def summary_lines(ctx: ReportContext, extra: Sequence[str]) -> list[str]:
    """The text summary (``summary.txt``, echoed by the CLI): coverage, best G per panel, verdicts, extras."""
    note = ctx.coverage.note()
    lines = [f"{ctx.name}: INCOMPLETE, {note}"] if note else []
    lines += [f"  unreadable trial file: {p}" for p in ctx.coverage.unreadable[:MAX_LISTED]]
    lines += [f"  failed trial: {k} (failed/{k}.json)" for k in ctx.coverage.failed[:MAX_LISTED]]
    if ctx.trained:
        stats, a = ctx.training, ctx.training.axes
        if stats.empty:
            return [*lines, f"{ctx.name}: no data yet", *extra]
        lines.append(f"{ctx.name}: best {stats.metrics.select} G per {a.panel}")
        for row in in_paper_order(stats.best[stats.metrics.select], a.keys, a.panel_order).iter_rows(named=True):
            lines.append(f"  {describe(row, a.keys)}: {100 * row['g']:.1f}% at {describe(row, [a.x, a.y])}")
    for v in ctx.verdicts:
        lines += v.lines()
    return [*lines, *extra]
