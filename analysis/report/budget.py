"""The budget section: where an adaptive study spent its seeds, and which look decided each finding.

One picture of seeds per cell, laid out like the RGB grids (one square per cell, its seed count written in it; the
brighter, the more seeds: white is every seed of the study), and per finding the look that decided it with the
models the budget had given by then (study.json's ``looks_taken``: :mod:`analysis.stats.budget.adaptive`).
"""

from __future__ import annotations

import html

import polars as pl

from analysis.render.grids import rgb_grid
from analysis.render.page import Page
from analysis.report.sections import ReportContext, section
from analysis.stats.verdicts.study import first_decided


def caption(frame: pl.DataFrame, seeds: int) -> str:
    """The picture's key, with the count of cells at each number of seeds."""
    counts = frame.group_by("n").len().sort("n", descending=True)
    tally = ", ".join(f"{n} seed(s): {k:,}" for n, k in counts.iter_rows())
    return (f"the number in each cell: its seeds (white = all {seeds} seeds of the study, darker = fewer; hatched = "
            f"not run); cells with {tally}")


def _adaptive(ctx: ReportContext) -> bool:
    return ctx.trained and (ctx.meta.budget == "adaptive" or bool(ctx.meta.looks_taken))


def seeds_frame(ctx: ReportContext) -> pl.DataFrame:
    """Per cell (panel, x, y and facets): its seeds as ``n`` and as a grey level ``r = g = b = n / seeds``."""
    stats, seeds = ctx.training, max(len(ctx.meta.seeds), 1)
    share = (pl.col("n_seeds") / seeds).cast(pl.Float64)
    return stats.select_rgb.select(*stats.axes.by, pl.col("n_seeds").alias("n"), share.alias("r"), share.alias("g"),
                                   share.alias("b"))


def decisions(ctx: ReportContext) -> list[tuple[str, str, int | None, int | None]]:
    """Per finding: (description, status at the last look, the look that decided it, the models given by then)."""
    looks = ctx.meta.looks_taken
    out = []
    for i, finding in enumerate(ctx.meta.findings):
        first = first_decided(looks, i)
        last = looks[-1].statuses[i] if looks and i < len(looks[-1].statuses) else "not looked at"
        out.append((finding.description, first.statuses[i] if first else last, first.look if first else None,
                    first.models if first else None))
    return out


@section("budget", applies=_adaptive)
def budget_section(page: Page, ctx: ReportContext) -> list[str]:
    """Seeds per cell, and the look and models that decided each finding."""
    stats, meta = ctx.training, ctx.meta
    if stats.empty:
        return []
    frame = seeds_frame(ctx)
    given, every = int(frame.get_column("n").sum()), frame.height * len(meta.seeds)
    page.h(2, "Budget")
    looks, giving = len(meta.looks_taken), sum(1 for look in meta.looks_taken if look.requests)
    later = "" if meta.budget == "adaptive" else "; completed to the full grid since"
    head = (f"adaptive budget: {given:,} of {every:,} models ({100 * given / max(every, 1):.1f}%){later}; every cell "
            f"started with {len(meta.starting_seeds)} seed(s); {looks} look(s), of which {giving} gave one more seed "
            f"to the cells an undecided finding depends on.")
    page.p(html.escape(head))
    no_cross = frame.select(stats.axes.panel, stats.axes.x, stats.axes.y, pl.col("g").alias("value")).head(0)
    grid = rgb_grid(frame, stats.axes.panel, stats.axes.x, stats.axes.y, f"{ctx.name} · seeds per cell",
                    best=no_cross, caption=caption(frame, len(meta.seeds)), numbers="n")
    page.raw(page.figure(grid.fig, "budget_seeds", "seeds per cell"))
    rows = "".join(f"<tr><td style='text-align:left'>{html.escape(d)}</td><td>{html.escape(s)}</td>"
                   f"<td>{'–' if at is None else at}</td><td>{'–' if m is None else f'{m:,}'}</td></tr>"
                   for d, s, at, m in decisions(ctx))
    page.table("<table><tr><th>finding</th><th>verdict</th><th>decided at look</th><th>models by then</th></tr>"
               f"{rows}</table>")
    lines = [f"  {head}"]
    lines += [f"  {d[:80]}: {s}" + (f" at look {at} ({m:,} models)" if at else "") for d, s, at, m in decisions(ctx)]
    return lines
