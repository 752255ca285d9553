"""Renderers of the report's result sections and its summaries, from computed statistics.

Sections registered here: ``robustness``, ``learning_curves``, ``paper_table`` (per panel, and in the
paper's own shape when the study declares ``table_by``, e.g. Table 5 per vocabulary size) and
``findings`` (verdicts with the bound each one tests). :func:`glance_html` and :func:`summary_lines` say
the same things at the top of the page and on the command line, with what the numbers lack.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from analysis.coverage import complete_panels
from analysis.findings import NOT_CHECKED, PASS, UNDECIDED, Verdict, evaluate_findings
from analysis.page import Page
from analysis.plots import in_paper_order, learning_curve_figure, robustness_figure
from analysis.sections import ReportContext, section
from analysis.tables import per_x_table, to_html, to_markdown
from analysis.training import TrainingStats, describe

#: At most this many unreadable files / failed trials are named in the text summary (the page lists all).
MAX_LISTED = 10
_ROBUST_PERCENT = ["best_g", "median_g", "share_g_at_least_50", "share_within_5pp_of_best"]
_VERDICT_CLASS = {PASS: "pass", UNDECIDED: "undecided", NOT_CHECKED: "unchecked"}


def _note(ctx: ReportContext) -> str:
    """`` (computed from 8 of 9 trials: ...)`` when trials are missing, else ``""``."""
    note = ctx.coverage.note()
    return f" ({note})" if note else ""


@section("robustness")
def robustness_section(page: Page, ctx: ReportContext) -> list[str]:
    """Robustness curves (every combination's G, best first) and the robustness table."""
    stats = ctx.training
    if stats.empty:
        return []
    m = stats.metrics.select
    page.h(2, "Robustness")
    fig = robustness_figure(stats.robustness_curve(), stats.axes.panel,
                            f"robustness · {m} (G per combination, best first)", x="fraction")
    page.raw(page.figure(fig, "robustness", "robustness curves"))
    page.p(f"Every combination of the grid{' (all facets)' if stats.axes.varying else ''}, sorted by G (mean over "
           f"seeds): a curve that stays high for longer means an architecture that works across more "
           f"hyperparameters.{_note(ctx)}", "note")
    page.table(to_html(stats.robustness_table(), percent_columns=_ROBUST_PERCENT))
    return []


@section("learning_curves")
def learning_curves_section(page: Page, ctx: ReportContext) -> list[str]:
    """Mean / min-max learning curves of the best combination of each panel value."""
    stats = ctx.training
    if stats.empty:
        return []
    page.h(2, "Learning curves of the best combinations")
    fig = learning_curve_figure(stats.learning_curves(), "label", "mean over seeds, band = min-max over seeds",
                                color_by=stats.axes.panel)
    page.raw(page.figure(fig, "learning_curves", "learning curves"))
    return []


@section("paper_table")
def paper_table_section(page: Page, ctx: ReportContext) -> list[str]:
    """The best combination per panel value; and the paper's table per ``table_by`` when the study has one."""
    stats, a = ctx.training, ctx.training.axes
    if stats.empty:
        return []
    lines: list[str] = []
    if ctx.meta.table_by:
        lines = _per_x_table(page, ctx, stats)
    page.h(2, "Best combination per panel (paper-style table)")
    page.p(f"Best = argmax over ({a.x}, {a.y}) of G ({stats.metrics.select}); min/mean/max over seeds per "
           f"evaluation, each maximised over training. Case columns: mean case accuracy, maximised over "
           f"training.{_note(ctx)}", "note")
    table = stats.paper_table()
    page.table(to_html(table))
    page.raw(f"<details><summary>Markdown</summary><pre>{html.escape(to_markdown(table))}</pre></details>")
    return lines


def _per_x_table(page: Page, ctx: ReportContext, stats: TrainingStats) -> list[str]:
    by = ctx.meta.table_by
    missing = [c for c in by if c not in stats.select_rgb.columns]
    if missing:
        raise ValueError(f"{ctx.meta.source}: table_by names {missing}, not columns of the results; "
                         f"allowed: {[c for c in stats.axes.by if c != stats.axes.panel]}")
    table = stats.per_x_table(by)
    keys = [stats.axes.panel, *stats.axes.varying]
    values = [c for c in table.columns if c not in keys]
    page.h(2, f"The paper's table: best {stats.metrics.select} G per {', '.join(by)}")
    page.p(f"One cell per ({', '.join(keys)}, {', '.join(by)}): the best G (mean over seeds, maximised over "
           f"training) over the other axes ({stats.axes.y}), in %.{_note(ctx)}", "note")
    page.table(to_html(table, percent_columns=values))
    published = ctx.published
    if published is not None and stats.metrics.select in published.full_rgb:
        pub = per_x_table(published.full_rgb[stats.metrics.select], [stats.axes.panel], by)
        page.p(f"The same statistic of the published results ({published.name}, their whole grid):", "note")
        page.table(to_html(pub, percent_columns=[c for c in pub.columns if c != stats.axes.panel]))
    lines = [f"  {stats.metrics.select} G per {', '.join(by)} ({' / '.join(v.partition('=')[2] for v in values)}):"]
    for row in table.iter_rows(named=True):
        cells = " / ".join("–" if row[v] is None else f"{100 * row[v]:.1f}" for v in values)
        lines.append(f"    {describe(row, keys)}: {cells}")
    return lines


def verdicts_of(ctx: ReportContext) -> list[Verdict]:
    """The findings' verdicts on this study's numbers (UNDECIDED where missing cells could change them)."""
    stats = ctx.training
    complete: set[str] | None = None  # the whole study: every bound decided
    if stats.empty:
        complete = set()
    elif not ctx.coverage.complete:
        complete = complete_panels(stats.select_rgb, ctx.meta, stats.axes.panel, stats.axes.by, ctx.coverage)
    return evaluate_findings(ctx.meta, stats.finding_rgb, stats.axes.panel, stats.metrics.select, complete,
                             ctx.coverage.missing_text())


def _verdict_html(v: Verdict) -> str:
    cls = _VERDICT_CLASS.get(v.status, "fail")
    detail = "; ".join(c.text() for c in v.checks) + (f" — {v.reason}" if v.reason else "")
    quote = f"<br><span class='note'>{html.escape(v.finding.quote)}</span>" if v.finding.quote else ""
    return (f"<p><span class='{cls}'>{v.status}</span> {html.escape(v.finding.description)} "
            f"<span class='note'>[{html.escape(v.metric)}: {html.escape(detail.lstrip('; '))}]</span>{quote}</p>")


@section("findings")
def findings_section(page: Page, ctx: ReportContext) -> list[str]:
    """Each finding's verdict with the numbers and exactly the bound it tests (the CLI's exit status)."""
    if not ctx.meta.findings:
        return []
    ctx.verdicts = verdicts_of(ctx)
    page.h(2, "Findings")
    page.p("A finding bounds a statistic of a metric's G (mean over seeds, maximised over training) per panel "
           "value: by default the best cell of the grid, else the one named beside the panel value (worst, mean, "
           "or the share of cells reaching a level, over a region of the grid). 'required <=' is at most, '>=' at "
           "least (or at least another panel value's number plus a margin). NOT CHECKED: the study's scale is too "
           "small to show it. UNDECIDED: cells are missing that could change the outcome.", "note")
    page.raw("".join(_verdict_html(v) for v in ctx.verdicts))
    return []


def glance_html(ctx: ReportContext) -> str:
    """The box under the title: coverage, best G per panel, the findings' verdicts."""
    parts = []
    if not ctx.coverage.complete:
        parts.append(f"<p class='fail'>Incomplete: {html.escape(ctx.coverage.note())}.</p>")
    if ctx.meta.kind == "training" and not ctx.training.empty:
        stats, a = ctx.training, ctx.training.axes
        parts.append(f"<p><b>Best {html.escape(stats.metrics.select)} G</b> (mean over seeds, best combination):"
                     "</p><ul>")
        for row in in_paper_order(stats.best[stats.metrics.select], a.keys).iter_rows(named=True):
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
    if ctx.meta.kind == "training":
        stats, a = ctx.training, ctx.training.axes
        if stats.empty:
            return [*lines, f"{ctx.name}: no data yet", *extra]
        lines.append(f"{ctx.name}: best {stats.metrics.select} G per {a.panel}")
        for row in in_paper_order(stats.best[stats.metrics.select], a.keys).iter_rows(named=True):
            lines.append(f"  {describe(row, a.keys)}: {100 * row['g']:.1f}% at {describe(row, [a.x, a.y])}")
    for v in ctx.verdicts:
        lines += v.lines()
    return [*lines, *extra]
