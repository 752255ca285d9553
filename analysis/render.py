"""Renderers of the report's opening and grid sections: they draw and write HTML from computed statistics.

Sections registered here: ``progress`` (counts and bar: what the numbers are computed from), ``grids``
(the interactive RGB grids, the published grid beside them, case grids) and ``pooling_scale`` (measurement
studies). :func:`header_html` writes the title, goal, deviations and search space. Nothing here computes a
statistic: it comes from :class:`analysis.sections.ReportContext`.
"""

from __future__ import annotations

import html
from typing import Any

import polars as pl

from analysis import interactive
from analysis.cells import cell_data, cell_table, seed_curves
from analysis.coverage import Coverage
from analysis.grids import CASE_CAPTION, GridPainter
from analysis.meta import StudyMeta
from analysis.page import Page
from analysis.plots import format_value, order_panels, pooling_scale_figure
from analysis.sections import ReportContext, section
from analysis.tables import to_html
from analysis.training import TrainingStats, facet_filter

#: The RGB legend: what a pixel's colour says about the seeds (R = worst, G = mean, B = best seed).
_RGB_EXAMPLES: tuple[tuple[tuple[float, float, float], str], ...] = (
    ((1.0, 1.0, 1.0), "white: every seed learns (worst, mean and best high)"),
    ((0.0, 0.0, 0.0), "black: no seed learns"),
    ((0.5, 0.5, 0.5), "grey: every seed reaches the same middling accuracy"),
    ((0.0, 0.0, 1.0), "blue: only the best seed learns"),
    ((0.0, 0.6, 1.0), "light blue: most seeds learn, the worst one fails"),
    ((0.3, 0.5, 0.7), "bluish grey: seeds disagree"),
)


def _rgb_legend() -> str:
    """Colour swatches explaining R / G / B (the paper's grids) and the hatching of cells not run."""
    items = "".join(
        f"<div><span class='sw' style='background:rgb({round(255 * r)},{round(255 * g)},{round(255 * b)})'>"
        f"</span>{html.escape(text)}</div>"
        for (r, g, b), text in _RGB_EXAMPLES
    ) + "<div><span class='sw hatch'></span>hatched: not run</div>"
    return (
        "<p><b>Reading the grids.</b> One pixel per (x, learning rate). Its colour mixes three numbers, "
        "each the accuracy over the seeds of that combination, maximised over training: "
        "<b style='color:#cf222e'>R = worst seed</b> (min), <b style='color:#1a7f37'>G = mean</b> over seeds, "
        "<b style='color:#0969da'>B = best seed</b> (max). Since worst &le; mean &le; best, a pixel is white "
        "when the combination is reliably good, and turns blue as fewer seeds succeed. Hatched cells: "
        "not run. The cross marks the highest G of each panel; the panel title gives that G. "
        "<b>Hover</b> a cell of a reproduced grid for its numbers; <b>click</b> it for its seeds' learning "
        "curves.</p>"
        f"<div class='legend'>{items}</div>"
    )


def _chips(items: list[tuple[str, object]]) -> str:
    return "<div class='chips'>" + "".join(
        f"<span class='chip'>{html.escape(k)}: {html.escape(str(v))}</span>" for k, v in items) + "</div>"


def _search_space_html(meta: StudyMeta) -> str:
    rows = []
    for kind, axes in (("scientific", meta.scientific), ("nuisance", meta.nuisance)):
        for name, values in axes.items():
            shown = (", ".join(format_value(v, name) for v in values) if isinstance(values, list)
                     else format_value(values, name))
            rows.append(f"<tr><td>{kind}</td><td>{html.escape(name)}</td>"
                        f"<td style='text-align:left'>{html.escape(shown)}</td></tr>")
    if meta.seeds:
        rows.append(f"<tr><td>seeds</td><td>seed</td><td style='text-align:left'>{list(meta.seeds)}</td></tr>")
    chips = "".join(f"<span class='chip'>{html.escape(k)} = {html.escape(format_value(v, k))}</span>"
                    for k, v in meta.fixed.items())
    return (
        "<p class='note'>Scientific hyperparameters are what the study asks about; nuisance ones are tuned "
        "away (the best value is taken); fixed ones are the same for every trial.</p>"
        '<table class="data"><thead><tr><th>kind</th><th>hyperparameter</th><th>values</th></tr></thead>'
        "<tbody>" + "".join(rows) + "</tbody></table>"
        + (f"<p><b>fixed:</b></p><div class='chips'>{chips}</div>" if chips else "")
    )


def header_html(page: Page, meta: StudyMeta, name: str) -> tuple[int, int]:
    """Title, goal, chips, deviations and search space; returns the (table of contents, glance) slots."""
    page.h(1, f"Study report: {name}")
    page.raw(f"<div class='goal'><b>Goal.</b> {html.escape(meta.goal or '(no goal stated)')}</div>")
    page.raw(_chips([("scale", meta.scale or "–"), ("task", meta.task or "–"), ("kind", meta.kind),
                     ("sampler", meta.sampler), ("metric", f"{meta.metric} ({meta.mode})"),
                     ("seeds", len(meta.seeds) or "–"), ("published data", meta.reference or "none")]))
    toc, glance = page.slot(), page.slot()
    page.h(2, "Deviations from the paper")
    lead = (f"<p>This run is at the <b>{html.escape(meta.scale)}</b> scale, not the paper's: compare the shapes "
            "of the grids, not the absolute accuracies.</p>" if meta.scale and meta.scale != "paper" else "")
    items = "".join(f"<li>{html.escape(d)}</li>" for d in meta.deviations) or "<li>none stated</li>"
    page.raw(f"{lead}<ul class='deviations'>{items}</ul>")
    page.h(2, "Search space")
    page.raw(_search_space_html(meta))
    return toc, glance


def coverage_warning(coverage: Coverage, *, detail: bool = True) -> str:
    """A red box saying what the numbers below are computed without (empty when complete); ``detail``: the
    files and trials by name (once, in the progress section)."""
    if coverage.complete:
        return ""
    if not detail:
        return f"<div class='warn'><b>Incomplete.</b> These grids are {html.escape(coverage.note())}.</div>"
    files = "".join(f"<li>unreadable: <code>{html.escape(str(p))}</code></li>" for p in coverage.unreadable)
    files += "".join(f"<li>failed for good: {html.escape(k)} (failed/{html.escape(k)}.json)</li>"
                     for k in coverage.failed)
    return (f"<div class='warn'><b>Incomplete.</b> Every number in this report is {html.escape(coverage.note())}."
            + (f"<ul>{files}</ul>" if files else "") + "</div>")


def progress_html(coverage: Coverage) -> str:
    """The line, the bar (trials ok / with a diverged seed / unreadable / failed / pending) and its legend."""
    c, total = coverage, coverage.total
    ok = max(0, c.readable - c.trials_with_diverged)

    def pct(n: int) -> float:
        return 100.0 * n / total if total else 0.0

    parts = [("bar-ok", ok, "done, no seed diverged"), ("bar-div", c.trials_with_diverged, "done, a seed diverged"),
             ("bar-bad", len(c.unreadable), "unreadable trial file"), ("bar-fail", len(c.failed), "failed for good"),
             ("bar-pend", c.pending, "pending")]
    bar = ("<div class='progress' title='trials: ok / with a diverged seed / unreadable / failed / pending'>"
           + "".join(f"<span class='{cls}' style='width:{pct(n):.2f}%'></span>" for cls, n, _ in parts) + "</div>")
    legend = "<div class='legend'>" + "".join(
        f"<div><span class='sw {cls}'></span>{html.escape(text)}: {n}</div>" for cls, n, text in parts) + "</div>"
    line = (f"<p><b>{c.readable} of {total} trials done</b> (readable), {len(c.unreadable)} unreadable, "
            f"{len(c.failed)} failed, {c.pending} pending. Of {c.models} trained models (trial x seed), "
            f"<b>{c.diverged_models} diverged</b> (loss became NaN/inf; they count with accuracy 0 from then on) "
            f"and {c.failed_models} failed.</p>")
    return coverage_warning(coverage) + line + bar + legend


def _counts_table(ctx: ReportContext) -> pl.DataFrame:
    c, counts = ctx.coverage, ctx.counts
    rows = [
        ("trials expected (n_trials)", "–" if c.expected is None else c.expected),
        ("trial files readable", c.readable), ("trial files unreadable", len(c.unreadable)),
        ("trials failed for good (failed/*.json)", len(c.failed)), ("trials pending", c.pending),
        ("seeds", counts.get_column("seed").n_unique() if counts.height else 0),
        ("rows", int(counts.get_column("n_rows").sum()) if counts.height else 0),
        ("trained models (trial x seed)", c.models), ("  status ok", c.models - c.diverged_models - c.failed_models),
        ("  status diverged", c.diverged_models), ("  status failed", c.failed_models),
    ]
    return pl.DataFrame({"count": [r[0] for r in rows], "value": [str(r[1]) for r in rows]})


@section("progress")
def progress_section(page: Page, ctx: ReportContext) -> list[str]:
    """Progress: what exists of the study, and what the numbers below are computed from."""
    page.h(2, "Progress")
    page.raw(progress_html(ctx.coverage))
    page.raw(f"<details><summary>all counts</summary>{to_html(_counts_table(ctx), percent_columns=[])}</details>")
    return []


def _safe(text: object) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(text))


def _interactive_grid(page: Page, painter: GridPainter, stats: TrainingStats, metric: str,
                      cells_of_metric: pl.DataFrame, facet: dict[str, Any], curves: pl.DataFrame | None, title: str,
                      name: str) -> str:
    """One reproduced RGB grid with its hover / click data (``cells_of_metric``: :func:`cell_table`)."""
    a = stats.axes
    grid = painter.paint(facet_filter(stats.rgb[metric], facet), a.panel, a.x, a.y, title)
    table = facet_filter(cells_of_metric, facet)
    sub_curves = facet_filter(curves, facet) if curves is not None else None
    cells = interactive.rekey(cell_data(table, sub_curves, metric, a.by))
    img = page.png(grid.png, name, f"RGB grid {title}")
    payload = interactive.grid_payload(grid, cells, x=a.x, y=a.y, metric=metric)
    page.interactive = True
    return interactive.grid_html(img, payload, f"cells-{name}")


@section("grids")
def grids_section(page: Page, ctx: ReportContext) -> list[str]:
    """The RGB grids per facet and metric (interactive), the published grid beside them, the case grids."""
    stats, a = ctx.training, ctx.training.axes
    if stats.empty:
        page.p("No finished (non-failed) trial data yet.")
        return []
    reference = ctx.published
    page.h(2, "Hyperparameter grids")
    page.raw(coverage_warning(ctx.coverage, detail=False) + _rgb_legend())
    if reference is not None:
        page.p(f"Beside each reproduced grid: the published results ({reference.name}), restricted to the "
               f"architectures and axis values this study ran. {reference.note}", "note")
    n_rows = stats.step_rows * max(1, len(ctx.meta.seeds) or int(stats.select_rgb.get_column("n_seeds").max()))
    curves = seed_curves(ctx.lf, stats.metrics.grids, a.by, n_rows)
    cells = {m: cell_table(stats.rgb[m], stats.per_seed, stats.best_steps[m], a.by) for m in stats.metrics.grids}
    painter = GridPainter(page.dpi)  # one figure per layout, drawn once; each grid paints its cells on it
    for facet in stats.facets:
        suffix = "" if not facet else " · " + ", ".join(f"{k}={format_value(v, k)}" for k, v in facet.items())
        tag = "" if not facet else "_" + "_".join(f"{k}-{_safe(v)}" for k, v in facet.items())
        if facet:
            page.h(3, suffix.removeprefix(" · "))
        for m in stats.metrics.grids:
            title = f"{ctx.name} · {m}{suffix}"
            imgs = [_interactive_grid(page, painter, stats, m, cells[m], facet, curves, title, f"grid_{m}{tag}")]
            if reference is not None and m in reference.rgb and not reference.restricts(facet):
                grid = painter.paint(reference.rgb[m], a.panel, a.x, a.y, f"published · {m}")
                imgs.append(page.png(grid.png, f"published_{m}{tag}", f"published grid {m}"))
            page.raw('<div class="row">' + "".join(imgs) + "</div>")
        for split, frame in stats.case_rgb.items():
            acc = f"{split}_accuracy"
            best = facet_filter(stats.best[acc], facet) if acc in stats.best else None
            grid = painter.paint(facet_filter(frame, facet), a.panel, a.x, a.y, f"case accuracy · {split}{suffix}",
                                 best=best, caption=CASE_CAPTION + f"; x = best {acc} G")
            page.raw(page.png(grid.png, f"cases_{split}{tag}", f"case grid {split}{suffix}"))
    if reference is not None:
        page.h(3, "Best G: reproduced vs published")
        page.table(to_html(reference.compare(stats.best, a)))
    return []


@section("pooling_scale")
def pooling_scale_section(page: Page, ctx: ReportContext) -> list[str]:
    """Measurement studies (Fig. 1 right): output scale of each pooling vs sequence length."""
    lf, meta = ctx.lf, ctx.meta
    columns = lf.collect_schema().names()
    hue = meta.plot.panel or next((c for c in ("pooling", "mixer", "architecture") if c in columns), None)
    x = meta.plot.x or ("seq_len" if "seq_len" in columns else None)
    metrics = [m for m in ("output_std", "output_norm") if m in columns]
    if hue is None or x is None or not metrics:
        raise ValueError(f"{meta.source}: a measurement study needs a pooling column, seq_len and "
                         f"output_std/output_norm; got {columns}")
    df = lf.select(hue, x, "seed", *metrics).collect()
    page.h(2, "Output scale of each pooling vs sequence length (paper Fig. 1 right)")
    fig = pooling_scale_figure(df, hue=hue, x=x, metrics=metrics, title=f"{meta.name}: output scale at initialisation")
    page.raw(page.figure(fig, "pooling_scale", "pooling scale"))
    table = (df.group_by(hue, x)
             .agg(*(pl.col(m).mean().alias(f"{m}_mean") for m in metrics), pl.col("seed").n_unique().alias("n_seeds"))
             .sort(hue, x))
    page.table(to_html(table, percent_columns=[]))
    lines = [f"{ctx.name}: {metrics[0]} at the smallest / largest {x} per {hue}"]
    for pv in order_panels(table.get_column(hue).to_list()):
        d = table.filter(pl.col(hue) == pv).sort(x)
        first, last = d.row(0, named=True), d.row(-1, named=True)
        lines.append(f"  {pv}: {first[f'{metrics[0]}_mean']:.3g} ({x}={first[x]})"
                     f" -> {last[f'{metrics[0]}_mean']:.3g} ({x}={last[x]})")
    return lines
