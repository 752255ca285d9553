"""Report section of Richter & Wattenhofer 2020's measurement studies (Fig. 1 right, App. B; Sec. 3; no training).

* ``pooling_scale``: the output scale (std and norm) of each pooling at initialisation against the sequence
  length, on log-log axes, with the mean per (pooling, length) as a table; the same for the share of context in a
  first layer's e^i (``richter2020.context_share``).

Pure polars + matplotlib; never imports torch or ray.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl
from matplotlib.figure import Figure

from analysis.render.page import Page
from analysis.render.plots import legend_outside, mean_with_band, panel_color
from analysis.render.tables import to_html
from analysis.report.sections import ReportContext, section
from analysis.stats.order import order_panels


def pooling_scale_figure(
    df: pl.DataFrame,
    hue: str = "architecture",
    x: str = "seq_len",
    metrics: Sequence[str] = ("output_std", "output_norm"),
    title: str = "",
) -> Figure:
    """Measurement studies (paper Fig. 1 right): each metric vs ``x`` per pooling, log-log axes.

    Rows are averaged over seeds; the band is min-max over seeds.
    """
    metrics = [m for m in metrics if m in df.columns]
    fig = Figure(figsize=(5.0 * max(len(metrics), 1), 4.2), layout="constrained")
    axes = fig.subplots(1, max(len(metrics), 1), squeeze=False)[0]
    panels = order_panels(df.get_column(hue).to_list())
    for ax, m in zip(axes, metrics, strict=False):
        agg = (
            df.group_by(hue, x)
            .agg(pl.col(m).mean().alias("mean"), pl.col(m).min().alias("min"), pl.col(m).max().alias("max"))
            .sort(x)
        )
        for pv in panels:
            d = agg.filter(pl.col(hue) == pv)
            mean_with_band(ax, d, x, panel_color(pv), str(pv), band_linewidth=None, marker="o", markersize=3)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(x)
        ax.set_ylabel(m)
        ax.grid(alpha=0.3, which="both")
    legend_outside(fig, axes[0], ncols=6)
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


#: The columns of a pooling measurement's rows (trainables/pooling_scale): the section is drawn when they are there.
MEASURED = ("output_std", "output_norm", "context_share")


def measured(ctx: ReportContext) -> bool:
    """Whether the rows are pooling measurements: a sequence length and an output scale."""
    return "seq_len" in ctx.columns and any(m in ctx.columns for m in MEASURED)


@section("pooling_scale", applies=measured)
def pooling_scale_section(page: Page, ctx: ReportContext) -> list[str]:
    """Pooling measurements (Fig. 1 right): output scale of each pooling vs sequence length."""
    lf, meta = ctx.lf, ctx.meta
    columns = lf.collect_schema().names()
    hue = meta.plot.panel or next((c for c in ("pooling", "mixer", "architecture") if c in columns), None)
    x = meta.plot.x or ("seq_len" if "seq_len" in columns else None)
    metrics = [m for m in MEASURED if m in columns]
    if hue is None or x is None or not metrics:
        raise ValueError(f"{meta.source}: the pooling_scale section needs a pooling column, seq_len and "
                         f"one of {', '.join(MEASURED)}; got {columns}")
    df = lf.select(hue, x, "seed", *metrics).collect()
    what = "share of context" if "context_share" in metrics else "output scale"
    page.h(2, "Share of context in e^i vs sequence length (Sec. 3)" if "context_share" in metrics
           else "Output scale of each pooling vs sequence length (paper Fig. 1 right)")
    fig = pooling_scale_figure(df, hue=hue, x=x, metrics=metrics, title=f"{meta.name}: {what} at initialisation")
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
