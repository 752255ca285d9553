"""Figures of the published kind: ``DataFrame -> matplotlib Figure`` (Agg backend, no display).

Every figure colours an architecture / mixer the same way (:func:`panel_color`) and keeps legends off the
data. The paper's RGB hyperparameter grids are drawn by :mod:`analysis.render.grids`.

* :func:`robustness_figure` - best-first sorted G values per architecture.
* :func:`learning_curve_figure` - mean over seeds with a min-max band, per architecture.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")

import polars as pl  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from analysis.stats.order import order_panels  # noqa: E402

#: One colour per architecture / mixer / attention, the same in every figure of every report.
PANEL_COLORS: dict[str, str] = {
    "BERT": "#1f77b4", "MTE": "#ff7f0e", "NAP": "#2ca02c", "NON": "#9467bd", "sum": "#8c564b", "max": "#d62728",
    "EA": "#e377c2", "DPA": "#ff7f0e",
    "softmax": "#ff7f0e", "normalized": "#2ca02c", "no_norm": "#9467bd", "mean": "#bcbd22",
    "expressive": "#e377c2", "average": "#17becf", "bilinear": "#7f7f7f", "sepconv": "#393b79",
    "geometric": "#e7ba52",
}
#: Colours for names without a fixed one: picked by a hash of the name, so stable across figures and runs.
_SPARE_COLORS = ("#637939", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1", "#636363",
                 "#9c9ede", "#cedb9c", "#e7969c", "#de9ed6", "#6baed6", "#fd8d3c", "#74c476", "#a55194")


def panel_color(value: object) -> str:
    """The fixed colour of an architecture / mixer (``PANEL_COLORS``), else a stable hash-picked one."""
    name = str(value)
    if name in PANEL_COLORS:
        return PANEL_COLORS[name]
    digest = hashlib.blake2b(name.encode(), digest_size=2).digest()
    return _SPARE_COLORS[int.from_bytes(digest, "big") % len(_SPARE_COLORS)]


def legend_outside(fig: Figure, ax: Axes, ncols: int = 3) -> None:
    """The axes' legend below the plot, off the data (constrained layout makes room for it)."""
    handles, labels = ax.get_legend_handles_labels()
    if (legend := ax.get_legend()) is not None:
        legend.remove()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncols=min(ncols, len(labels)), fontsize=7,
                   frameon=False)


def robustness_figure(
    curve_df: pl.DataFrame, panel: str, title: str = "", *, value: str = "g", x: str = "rank",
    panel_order: Sequence[object] = (),
) -> Figure:
    """Robustness curves: each panel's ``value`` sorted best first against ``x`` (``rank`` or
    ``fraction``), from :func:`analysis.stats.rgb.robustness_curve`; the legend in ``panel_order`` (the
    study's), then the paper's order."""
    fig = Figure(figsize=(6.0, 4.0), layout="constrained")
    ax = fig.subplots()
    order = [str(v) for v in order_panels(curve_df.get_column(panel).to_list(), panel_order)]
    data = curve_df.select(pl.col(panel).cast(pl.String), x, (pl.col(value) * 100).alias(value)).to_pandas()
    sns.lineplot(data=data, x=x, y=value, hue=panel, hue_order=order, ax=ax, drawstyle="steps-post",
                 palette={v: panel_color(v) for v in order})
    ax.set_ylabel(f"{value} (mean over seeds, %)")
    ax.set_xlabel("configurations, best first" if x == "rank" else "fraction of configurations, best first")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title, fontsize=10)
    legend_outside(fig, ax, ncols=6)
    return fig


def mean_with_band(ax: Axes, d: pl.DataFrame, x: str, color: str, label: str, *,
                    band_linewidth: float | None, **line: Any) -> None:
    """A mean line over `x` with the min-max band around it (columns mean / min / max of `d`)."""
    xs = d.get_column(x).to_numpy()
    ax.plot(xs, d.get_column("mean").to_numpy(), color=color, label=label, **line)
    ax.fill_between(xs, d.get_column("min").to_numpy(), d.get_column("max").to_numpy(), color=color, alpha=0.2,
                    linewidth=band_linewidth)


def learning_curve_figure(
    curves_df: pl.DataFrame, panel: str, title: str = "", *, label: str | None = None, color_by: str | None = None
) -> Figure:
    """Learning curves: mean over seeds (line) and min-max band, one line per panel value.

    ``curves_df`` has columns ``panel, step, mean, min, max`` (from
    :func:`analysis.stats.rgb.learning_curves`), optionally ``metric`` (one subplot per metric) and the
    ``label`` column (legend text per panel value, e.g. its configuration). ``color_by`` (default
    ``panel``) names the column whose value fixes the colour (:func:`panel_color`). The legend sits
    below the plots, off the data.
    """
    metrics = (
        curves_df.get_column("metric").unique(maintain_order=True).to_list()
        if "metric" in curves_df.columns
        else [None]
    )
    fig = Figure(figsize=(5.2 * len(metrics), 4.2), layout="constrained")
    axes = fig.subplots(1, len(metrics), squeeze=False)[0]
    panels = order_panels(curves_df.get_column(panel).to_list())
    key = color_by or panel
    for ax, metric in zip(axes, metrics, strict=True):
        sub = curves_df if metric is None else curves_df.filter(pl.col("metric") == metric)
        for pv in panels:
            d = sub.filter(pl.col(panel) == pv).sort("step")
            if d.is_empty():
                continue
            name = str(d.get_column(label)[0]) if label and label in d.columns else str(pv)
            mean_with_band(ax, d, "step", panel_color(d.get_column(key)[0]), name, band_linewidth=0, linewidth=1.5)
        ax.set_xlabel("step")
        ax.set_ylabel(metric or "value")
        ax.grid(alpha=0.3)
    legend_outside(fig, axes[0], ncols=2)
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


