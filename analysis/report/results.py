"""The report's result sections of a training study, drawn from statistics computed once.

Sections registered here: ``robustness``, ``learning_curves``, ``paper_table`` (per panel, and in the
paper's own shape when the study declares ``table_by``, e.g. Table 5 per vocabulary size) and
``importance`` (which hyperparameter matters, :mod:`analysis.stats.importance`). The findings and the
summaries are :mod:`analysis.report.summary`.
"""

from __future__ import annotations

import html

import polars as pl

from analysis.render.page import Page
from analysis.render.plots import learning_curve_figure, robustness_figure
from analysis.render.tables import to_html, to_markdown
from analysis.report.sections import ReportContext, section, trained
from analysis.stats.importance import MIN_TRIALS, format_importances, importance_table
from analysis.stats.paper_tables import per_x_table
from analysis.stats.training_stats import TrainingStats, describe

_ROBUST_PERCENT = ["best_g", "median_g", "share_g_at_least_50", "share_within_5pp_of_best"]


def _note(ctx: ReportContext) -> str:
    """`` (computed from 8 of 9 trials: ...)`` when trials are missing, else ``""``."""
    note = ctx.coverage.note()
    return f" ({note})" if note else ""


@section("robustness", applies=trained)
def robustness_section(page: Page, ctx: ReportContext) -> list[str]:
    """Robustness curves (every combination's G, best first) and the robustness table."""
    stats = ctx.training
    if stats.empty:
        return []
    m = stats.metrics.select
    page.h(2, "Robustness")
    fig = robustness_figure(stats.robustness_curve(), stats.axes.panel,
                            f"robustness · {m} (G per combination, best first)", x="fraction",
                            panel_order=stats.axes.panel_order)
    page.raw(page.figure(fig, "robustness", "robustness curves"))
    page.p(f"Every combination of the grid{' (all facets)' if stats.axes.varying else ''}, sorted by G (mean over "
           f"seeds): a curve that stays high for longer means an architecture that works across more "
           f"hyperparameters.{_note(ctx)}", "note")
    page.table(to_html(stats.robustness_table(), percent_columns=_ROBUST_PERCENT))
    return []


@section("learning_curves", applies=trained)
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


@section("paper_table", applies=trained)
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


@section("importance", applies=trained)
def importance_section(page: Page, ctx: ReportContext) -> list[str]:
    """Which hyperparameter matters, per panel value (PED-ANOVA over the study's configurations)."""
    stats = ctx.training
    if stats.empty:
        return []
    panel, metric = stats.axes.panel, stats.metrics.select
    # the G per configuration is the report's own RGB frame (no second scan of the rows)
    params = [c for c in stats.axes.by if c != panel and c in ctx.meta.axes]
    table = importance_table(stats.select_rgb, panel, params, ctx.meta.mode, panel_order=stats.axes.panel_order)
    page.h(2, "Which hyperparameter matters")
    page.p(f"Per {panel}: Optuna's PED-ANOVA importance of each hyperparameter for reaching the best G of {metric} "
           f"(each configuration is one trial with value G; importances sum to 1 per {panel}; at least "
           f"{MIN_TRIALS} configurations needed). `study importance {ctx.name}` prints the same.", "note")
    shown = table.with_columns(pl.col("importance").round(3))
    page.table(to_html(shown, percent_columns=[]))
    page.raw(f"<p class='note'>{html.escape(ctx.coverage.note())}</p>" if ctx.coverage.note() else "")
    if table.get_column("importance").is_null().all():
        return []  # nothing computed: the page says why, the summary stays short
    return [f"{ctx.name}: hyperparameter importance (PED-ANOVA, {metric} G) per {panel}",
            *format_importances(table, panel)]
