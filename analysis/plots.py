"""Figures of the published kind: ``DataFrame -> matplotlib Figure`` (Agg backend, no display).

* :func:`rgb_grid_figure` - the paper's RGB hyperparameter grids (one panel per architecture,
  one pixel per (x, learning rate), R/G/B = worst/mean/best seed, a cross on the best combination).
* :func:`robustness_figure` - best-first sorted G values per architecture.
* :func:`learning_curve_figure` - mean over seeds with a min-max band, per architecture.
* :func:`pooling_scale_figure` - output std / norm of each pooling vs sequence length (Fig. 1 right).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.patheffects as pe  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

RGB_CAPTION = "R = min over seeds, G = mean, B = max (each maxed over training); x = best G"
CASE_CAPTION = "R = argmin, G = first, B = argmax case accuracy (mean over seeds, maxed over training)"

#: Panel order of the paper's figures; unknown names follow, sorted.
PAPER_ORDER: tuple[str, ...] = ("BERT", "MTE", "NAP", "NON", "sum", "max")


def order_panels(values: Sequence[object]) -> list[object]:
    """Panel values in the paper's order (BERT, MTE, NAP, NON, sum, max), then the rest sorted."""
    unique = list(dict.fromkeys(values))
    known = [v for v in PAPER_ORDER if v in unique]
    rest = sorted((v for v in unique if v not in PAPER_ORDER), key=lambda v: (str(type(v)), v))
    return [*known, *rest]


def format_value(value: object, column: str = "") -> str:
    """A hyperparameter value as a tick label: ints plain, learning rates like ``3.0e-01``."""
    if isinstance(value, float):
        if "learning_rate" in column or column in ("lr", "l2_weight") or (value != 0 and abs(value) < 0.01):
            return f"{value:.1e}"
        if value.is_integer():
            return str(int(value))
        return f"{value:.3g}"
    return str(value)


def _grid_shape(n: int, max_cols: int = 3) -> tuple[int, int]:
    ncols = max(1, min(n, max_cols))
    return math.ceil(n / ncols), ncols


def rgb_grid_figure(
    rgb_df: pl.DataFrame,
    panel: str,
    x: str,
    y: str,
    title: str = "",
    *,
    best: pl.DataFrame | None = None,
    caption: str = RGB_CAPTION,
    value: str = "g",
    x_values: Sequence[object] | None = None,
    y_values: Sequence[object] | None = None,
    max_cols: int = 3,
) -> Figure:
    """The paper's RGB grid: one panel per ``panel`` value, one pixel per (``x``, ``y``).

    ``rgb_df`` has columns ``panel, x, y, r, g, b`` (values in [0, 1], e.g. from
    :func:`analysis.stats.epochwise_rgb` or :func:`analysis.stats.case_rgb`). ``y`` grows upwards (the
    highest learning rate is the top row, as in the paper); missing cells are grey. The best
    combination of each panel (``best``: rows ``panel, x, y, value``; by default the argmax of
    ``value`` in ``rgb_df``) is marked with a cross and its ``value`` printed in the panel title.
    """
    panels = order_panels(rgb_df.get_column(panel).to_list())
    xs = sorted(set(x_values) if x_values is not None else set(rgb_df.get_column(x).to_list()))
    ys = sorted(set(y_values) if y_values is not None else set(rgb_df.get_column(y).to_list()), reverse=True)
    if best is None:
        best = (
            rgb_df.filter(pl.col(value).is_not_null())
            .sort(value, descending=True)
            .group_by(panel, maintain_order=True)
            .first()
        )
    best_of = {row[panel]: row for row in best.iter_rows(named=True)}
    x_index = {v: i for i, v in enumerate(xs)}
    y_index = {v: i for i, v in enumerate(ys)}

    nrows, ncols = _grid_shape(max(1, len(panels)), max_cols)
    cell = 0.32
    width = ncols * (cell * len(xs) + 1.3) + 0.4
    height = nrows * (cell * len(ys) + 1.5) + 0.9
    fig_width = max(width, 4.0)
    fig = Figure(figsize=(fig_width, max(height, 3.0)), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for k, ax in enumerate(axes.flat):
        if k >= len(panels):
            ax.set_axis_off()
            continue
        pv = panels[k]
        img = np.zeros((len(ys), len(xs), 4))
        sub = rgb_df.filter(pl.col(panel) == pv).select(x, y, "r", "g", "b")
        for xv, yv, r, g, b in sub.iter_rows():
            if xv in x_index and yv in y_index:
                rgb = [0.0 if c is None or not math.isfinite(c) else min(max(c, 0.0), 1.0) for c in (r, g, b)]
                img[y_index[yv], x_index[xv]] = [*rgb, 1.0]
        ax.set_facecolor("#bdbdbd")
        ax.imshow(img, origin="upper", interpolation="nearest", aspect="equal")
        label = str(pv)
        row = best_of.get(pv)
        if row is not None and row[x] in x_index and row[y] in y_index and row[value] is not None:
            ax.plot(
                x_index[row[x]],
                y_index[row[y]],
                marker="x",
                markersize=9,
                markeredgewidth=2.2,
                color="white",
                path_effects=[pe.Stroke(linewidth=4, foreground="black"), pe.Normal()],
            )
            label = f"{pv} {100 * row[value]:.1f}%"
        ax.set_title(label, fontsize=10)
        ax.set_xticks(range(len(xs)), [format_value(v, x) for v in xs], rotation=90, fontsize=7)
        ax.set_yticks(range(len(ys)), [format_value(v, y) for v in ys], fontsize=7)
        ax.set_xlabel(x, fontsize=8)
        if k % ncols == 0:
            ax.set_ylabel(y, fontsize=8)
        ax.tick_params(length=2)
    if title:
        fig.suptitle(title, fontsize=11)
    if caption:
        wrapped = textwrap.fill(caption, width=int(fig_width * 15))
        bottom = 0.04 * (wrapped.count("\n") + 1)
        fig.get_layout_engine().set(rect=(0, bottom + 0.01, 1, 0.99 - bottom))
        fig.text(0.5, 0.01, wrapped, ha="center", va="bottom", fontsize=7.5)
    return fig


def robustness_figure(
    curve_df: pl.DataFrame, panel: str, title: str = "", *, value: str = "g", x: str = "rank"
) -> Figure:
    """Robustness curves: each panel's ``value`` sorted best first against ``x`` (``rank`` or
    ``fraction``), from :func:`analysis.stats.robustness_curve`."""
    fig = Figure(figsize=(6.0, 4.0), layout="constrained")
    ax = fig.subplots()
    order = [str(v) for v in order_panels(curve_df.get_column(panel).to_list())]
    data = curve_df.select(pl.col(panel).cast(pl.String), x, (pl.col(value) * 100).alias(value)).to_pandas()
    sns.lineplot(data=data, x=x, y=value, hue=panel, hue_order=order, ax=ax, drawstyle="steps-post")
    ax.set_ylabel(f"{value} (mean over seeds, %)")
    ax.set_xlabel("configurations, best first" if x == "rank" else "fraction of configurations, best first")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title, fontsize=10)
    return fig


def mean_with_band(ax: Any, d: pl.DataFrame, x: str, color: Any, label: str, *,
                    band_linewidth: float | None, **line: Any) -> None:
    """A mean line over `x` with the min-max band around it (columns mean / min / max of `d`)."""
    xs = d.get_column(x).to_numpy()
    ax.plot(xs, d.get_column("mean").to_numpy(), color=color, label=label, **line)
    ax.fill_between(xs, d.get_column("min").to_numpy(), d.get_column("max").to_numpy(), color=color, alpha=0.2,
                    linewidth=band_linewidth)


def learning_curve_figure(
    curves_df: pl.DataFrame, panel: str, title: str = "", *, label: str | None = None
) -> Figure:
    """Learning curves: mean over seeds (line) and min-max band, one line per panel value.

    ``curves_df`` has columns ``panel, step, mean, min, max`` (from
    :func:`analysis.stats.learning_curves`), optionally ``metric`` (one subplot per metric) and the
    ``label`` column (legend text per panel value, e.g. its configuration).
    """
    metrics = (
        curves_df.get_column("metric").unique(maintain_order=True).to_list()
        if "metric" in curves_df.columns
        else [None]
    )
    fig = Figure(figsize=(5.2 * len(metrics), 3.8), layout="constrained")
    axes = fig.subplots(1, len(metrics), squeeze=False)[0]
    panels = order_panels(curves_df.get_column(panel).to_list())
    colors = dict(zip(panels, sns.color_palette("tab10", max(len(panels), 1)), strict=False))
    for ax, metric in zip(axes, metrics, strict=True):
        sub = curves_df if metric is None else curves_df.filter(pl.col("metric") == metric)
        for pv in panels:
            d = sub.filter(pl.col(panel) == pv).sort("step")
            if d.is_empty():
                continue
            name = str(d.get_column(label)[0]) if label and label in d.columns else str(pv)
            mean_with_band(ax, d, "step", colors[pv], name, band_linewidth=0, linewidth=1.5)
        ax.set_xlabel("step")
        ax.set_ylabel(metric or "value")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


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
    fig = Figure(figsize=(5.0 * max(len(metrics), 1), 3.8), layout="constrained")
    axes = fig.subplots(1, max(len(metrics), 1), squeeze=False)[0]
    panels = order_panels(df.get_column(hue).to_list())
    colors = dict(zip(panels, sns.color_palette("tab10", max(len(panels), 1)), strict=False))
    for ax, m in zip(axes, metrics, strict=False):
        agg = (
            df.group_by(hue, x)
            .agg(pl.col(m).mean().alias("mean"), pl.col(m).min().alias("min"), pl.col(m).max().alias("max"))
            .sort(x)
        )
        for pv in panels:
            d = agg.filter(pl.col(hue) == pv)
            mean_with_band(ax, d, x, colors[pv], str(pv), band_linewidth=None, marker="o", markersize=3)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(x)
        ax.set_ylabel(m)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=11)
    return fig
