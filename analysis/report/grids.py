"""The ``grids`` section: the interactive RGB grids per facet and metric, the published grid beside them, the
case grids, and the legend that says how to read them.

Nothing here computes a statistic: it comes from :class:`analysis.report.sections.ReportContext`.
"""

from __future__ import annotations

import html
from typing import Any

import polars as pl

from analysis.data.scalars import as_int
from analysis.render import interactive
from analysis.render.grids import CASE_CAPTION, GridPainter
from analysis.render.page import Page
from analysis.render.tables import to_html
from analysis.report.progress import coverage_warning
from analysis.report.sections import ReportContext, section, trained
from analysis.stats.hover import cell_data, hover_table, seed_curves
from analysis.stats.training_stats import TrainingStats, facet_filter
from search_spaces.axes import show_value

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


def _safe(text: object) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(text))


def _interactive_grid(page: Page, painter: GridPainter, stats: TrainingStats, metric: str,
                      cells_of_metric: pl.DataFrame, facet: dict[str, Any], curves: pl.DataFrame | None, title: str,
                      name: str) -> str:
    """One reproduced RGB grid with its hover / click data (``cells_of_metric``:
    :func:`analysis.stats.hover.hover_table`)."""
    a = stats.axes
    grid = painter.paint(facet_filter(stats.rgb[metric], facet), a.panel, a.x, a.y, title, panel_order=a.panel_order)
    table = facet_filter(cells_of_metric, facet)
    sub_curves = facet_filter(curves, facet) if curves is not None else None
    cells = interactive.rekey(cell_data(table, sub_curves, metric, a.by))
    img = page.png(grid.png, name, f"RGB grid {title}")
    payload = interactive.grid_payload(grid, cells, x=a.x, y=a.y, metric=metric)
    page.interactive = True
    return interactive.grid_html(img, payload, f"cells-{name}")


@section("grids", applies=trained)
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
    seeds = len(ctx.meta.seeds) or as_int(stats.select_rgb.get_column("n_seeds").max(), "n_seeds")
    n_rows = stats.step_rows * max(1, seeds)
    curves = seed_curves(ctx.lf, stats.metrics.grids, a.by, n_rows)
    cells = {m: hover_table(stats.rgb[m], stats.per_seed, stats.best_steps[m], a.by) for m in stats.metrics.grids}
    painter = GridPainter(page.dpi)  # one figure per layout, drawn once; each grid paints its cells on it
    for facet in stats.facets:
        suffix = "" if not facet else " · " + ", ".join(f"{k}={show_value(v)}" for k, v in facet.items())
        tag = "" if not facet else "_" + "_".join(f"{k}-{_safe(v)}" for k, v in facet.items())
        if facet:
            page.h(3, suffix.removeprefix(" · "))
        for m in stats.metrics.grids:
            title = f"{ctx.name} · {m}{suffix}"
            imgs = [_interactive_grid(page, painter, stats, m, cells[m], facet, curves, title, f"grid_{m}{tag}")]
            if reference is not None and m in reference.rgb and not reference.restricts(facet):
                grid = painter.paint(reference.rgb[m], a.panel, a.x, a.y, f"published · {m}", panel_order=a.panel_order)
                imgs.append(page.png(grid.png, f"published_{m}{tag}", f"published grid {m}"))
            page.raw('<div class="row">' + "".join(imgs) + "</div>")
        for split, frame in stats.case_rgb.items():
            acc = f"{split}_accuracy"
            best = facet_filter(stats.best[acc], facet) if acc in stats.best else None
            grid = painter.paint(facet_filter(frame, facet), a.panel, a.x, a.y, f"case accuracy · {split}{suffix}",
                                 best=best, caption=CASE_CAPTION + f"; x = best {acc} G", panel_order=a.panel_order)
            page.raw(page.png(grid.png, f"cases_{split}{tag}", f"case grid {split}{suffix}"))
    if reference is not None:
        page.h(3, "Best G: reproduced vs published")
        page.table(to_html(reference.compare(stats.best, a)))
    return []


