"""Report sections of the Gros 2024 studies (expressive attention vs dot-product attention on NT tasks).

* ``expressive_curves``: learning curves (greedy accuracy and training loss vs epoch), mean over seeds with
  the min-max band, DPA (maroon) beside EA (blue) as in the paper's figures, and a table per configuration:
  early plateau, best and final levels, the first epoch at which the seed mean reaches 99% / each seed 100%,
  the final accuracy on the large final evaluation and the parameter count.
* ``expressive_attention``: the final attention matrices saved by the trials (artifact ``attention``) in
  log10 scale, EA beside DPA (paper Fig. 4 bottom), and their dynamic range.
* ``expressive_ladder``: the complexity ladder: per (N, tau) the smallest N_con whose mean final greedy
  accuracy over seeds reaches :data:`LADDER_THRESHOLD`, DPA beside EA, as a heatmap and a table.

Pure polars + matplotlib; never imports torch or ray.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import repeat
from typing import Any

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from analysis.data.rows import scan_artifacts
from analysis.data.scalars import as_float, as_int
from analysis.render.page import Page
from analysis.render.plots import mean_with_band, panel_color
from analysis.render.tables import to_html
from analysis.report.sections import ReportContext, section
from analysis.stats.rgb import learning_curves
from search_spaces.record import StudyRecord

#: The project's fixed colours of DPA (softmax) and EA, the same as in every other figure.
COLORS = {"dpa": panel_color("DPA"), "ea": panel_color("EA")}
#: "Reaches 100%": the mean over seeds of the final greedy accuracy is at least this.
LADDER_THRESHOLD = 0.999
#: The early plateau is read at this fraction of training (the paper's "rapid rise, then a plateau").
PLATEAU_FRACTION = 0.1
MAX_CURVE_PANELS = 8
_MIX = ("val_accuracy_nt", "val_accuracy_nt_s")


def _config_columns(meta: StudyRecord, columns: Sequence[str]) -> list[str]:
    """The scientific axes other than ``attention`` (the configuration a curve belongs to)."""
    return [c for c in meta.scientific if c != "attention" and c in columns]


def _ok(lf: pl.LazyFrame) -> pl.LazyFrame:
    return lf.filter(pl.col("status") != "failed")


def seed_curves(lf: pl.LazyFrame, metrics: Sequence[str], by: Sequence[str]) -> pl.DataFrame:
    """Long form, per (metric, by, step = epoch): mean / min / max over seeds (:func:`stats.learning_curves`)."""
    return pl.concat([learning_curves(_ok(lf), m, by).with_columns(metric=pl.lit(m)) for m in metrics]).collect()


def summary_table(lf: pl.LazyFrame, by: Sequence[str], n_epochs: int | None) -> pl.DataFrame:
    """Per configuration: plateau / best / final levels of the seed-mean greedy accuracy, convergence epochs,
    the final evaluation (mean, min, max over seeds; seeds at 100%) and the parameter count."""
    ok = _ok(lf)
    curves = ok.group_by([*by, "epoch"]).agg(pl.col("val_accuracy").mean().alias("acc"),
                                             pl.col("train_accuracy").mean().alias("tf")).collect()
    last = curves.group_by(by).agg(pl.col("epoch").max().alias("last_epoch"))
    plateau_at = (pl.col("last_epoch") * PLATEAU_FRACTION).round().cast(pl.Int64)
    stats = (
        curves.join(last, on=by)
        .group_by(by)
        .agg(
            pl.col("acc").sort_by("epoch").filter(pl.col("epoch").sort() >= plateau_at).first().alias("plateau_acc"),
            pl.col("acc").max().alias("best_mean_acc"),
            pl.col("acc").sort_by("epoch").last().alias("last_mean_acc"),
            pl.col("tf").sort_by("epoch").filter(pl.col("epoch").sort() >= plateau_at).first().alias("tf_plateau_acc"),
            pl.col("tf").sort_by("epoch").last().alias("tf_last_mean_acc"),
            pl.col("epoch").filter(pl.col("acc") >= 0.99).min().alias("epoch_mean_99"),
            pl.col("epoch").max().alias("epochs"),
        )
    )
    per_seed = (
        ok.group_by([*by, "seed"])
        .agg(
            pl.col("epoch").filter(pl.col("val_accuracy") >= 1.0).min().alias("first_100"),
            pl.col("final_accuracy").drop_nulls().last().alias("final"),
            pl.col("n_params").first().alias("n_params"),
        )
        .collect()
    )
    seeds = per_seed.group_by(by).agg(
        pl.col("first_100").median().alias("median_epoch_seed_100"),
        pl.col("first_100").is_not_null().sum().alias("seeds_reaching_100"),
        pl.col("final").mean().alias("final_mean"),
        pl.col("final").min().alias("final_min"),
        pl.col("final").max().alias("final_max"),
        (pl.col("final") >= 1.0).sum().alias("seeds_final_100"),
        pl.len().alias("n_seeds"),
        pl.col("n_params").first().alias("n_params"),
    )
    table = stats.join(seeds, on=by)
    columns = lf.collect_schema().names()
    if all(f"final_{m.removeprefix('val_')}" in columns for m in _MIX):  # the mixture: each task on its own
        parts = ok.group_by([*by, "seed"]).agg(
            *(pl.col(m).sort_by("epoch").last().alias(m) for m in _MIX),
            *(pl.col(f"final_{m.removeprefix('val_')}").drop_nulls().last().alias(f"final_{m.removeprefix('val_')}")
              for m in _MIX),
        ).group_by(by).agg(
            *(pl.col(m).mean().alias(f"last_mean_{m.removeprefix('val_')}") for m in _MIX),
            *(pl.col(f"final_{m.removeprefix('val_')}").mean().alias(f"final_mean_{m.removeprefix('val_')}")
              for m in _MIX),
        ).collect()
        if parts.select(pl.col("last_mean_accuracy_nt").is_not_null().any()).item():
            table = table.join(parts, on=by)
    return table.sort(by)


def _label(row: dict[str, Any], cols: Sequence[str]) -> str:
    return ", ".join(f"{c}={row[c]}" for c in cols) or "all"


def curves_figure(curves: pl.DataFrame, configs: list[dict[str, Any]], cols: Sequence[str],
                  acc_metrics: Sequence[str], title: str) -> Figure:
    """One row per configuration: accuracy (left) and training loss (right) vs epoch, DPA and EA."""
    fig = Figure(figsize=(10.5, 2.9 * len(configs) + 0.6), layout="constrained")
    axes = fig.subplots(len(configs), 2, squeeze=False)
    styles = ["-", "--", ":"] if len(acc_metrics) == 3 else ["-", ":"]
    for row_axes, config in zip(axes, configs, strict=True):
        sub = curves
        for c in cols:
            sub = sub.filter(pl.col(c) == config[c])
        positive_loss, no_loss = False, []
        for att in ("dpa", "ea"):
            for ax, style, m in [*zip(repeat(row_axes[0]), styles, acc_metrics), (row_axes[1], "-", "train_loss")]:
                d = sub.filter((pl.col("attention") == att) & (pl.col("metric") == m)).sort("step")
                if d.get_column("mean").drop_nulls().is_empty():  # e.g. every seed diverged: nothing to draw
                    no_loss += [att.upper()] if m == "train_loss" and not d.is_empty() else []
                    continue
                mean_with_band(ax, d, "step", COLORS[att], f"{att.upper()} {m}", band_linewidth=0,
                               linestyle=style, linewidth=1.4)
                positive_loss |= m == "train_loss" and bool((d.get_column("mean") > 0).any())
        row_axes[0].set_ylim(0, 1.02)
        row_axes[0].set_ylabel("accuracy (solid: greedy, dotted: teacher-forced)", fontsize=8)
        row_axes[0].set_title(_label(config, cols), fontsize=9)
        row_axes[1].set_ylabel("training loss (MSE)")
        if positive_loss:  # a log axis needs positive values (every seed of a configuration may have diverged)
            row_axes[1].set_yscale("log")
        if no_loss:  # an empty panel says why
            row_axes[1].text(0.5, 0.5, f"{' and '.join(no_loss)}: no finite training loss (every seed diverged)",
                             transform=row_axes[1].transAxes, ha="center", va="center", fontsize=8)
        for ax in row_axes:
            ax.set_xlabel("epoch")
            ax.grid(alpha=0.3)
    handles = [h for ax in axes[0] for h in ax.get_legend_handles_labels()[0]]
    labels = [lab for ax in axes[0] for lab in ax.get_legend_handles_labels()[1]]
    if handles:  # one legend for every row, below the plots (off the data)
        fig.legend(handles, labels, loc="outside lower center", ncols=min(4, len(labels)), fontsize=7, frameon=False)
    fig.suptitle(title, fontsize=11)
    return fig


@section("expressive_curves")
def curves_section(page: Page, ctx: ReportContext) -> list[str]:
    """Learning curves (mean and min-max band over seeds) and the per-configuration summary table."""
    lf, meta = ctx.lf, ctx.meta
    columns = lf.collect_schema().names()
    cols = _config_columns(meta, columns)
    by = ["attention", *cols]
    mix = [m for m in _MIX if m in columns and lf.select(pl.col(m).is_not_null().any()).collect().item()]
    acc_metrics = [*(mix or ["val_accuracy"]), "train_accuracy"]  # train_accuracy: teacher-forced, fresh series
    curves = seed_curves(lf, list(dict.fromkeys([*acc_metrics, "val_accuracy", "train_loss"])), by)
    page.h(2, "Learning curves: EA vs DPA")
    page.p("Greedy free-running accuracy (100 fresh series x 50 predictions per evaluation; solid, dashed for the "
           "mixture's second task), teacher-forced accuracy on the training series (train_accuracy, dotted) and "
           "training loss vs epoch; line = mean over seeds, band = min-max over seeds. DPA maroon, EA blue (as the "
           "paper).", "note")
    configs = curves.select(cols).unique().sort(cols).to_dicts() if cols else [{}]
    for i in range(0, min(len(configs), MAX_CURVE_PANELS), 4):
        chunk = configs[i:i + 4]
        fig = curves_figure(curves, chunk, cols, acc_metrics, meta.name)
        page.raw(page.figure(fig, f"expressive_curves_{i // 4}", "learning curves EA vs DPA"))
    if len(configs) > MAX_CURVE_PANELS:
        page.p(f"Curves of the first {MAX_CURVE_PANELS} of {len(configs)} configurations; all are in the table.",
               "note")
    table = summary_table(lf, by, meta.fixed.get("n_epochs"))
    page.h(3, "Levels and convergence per configuration")
    page.p(f"plateau_acc: seed-mean greedy accuracy at {PLATEAU_FRACTION:.0%} of training; epoch_mean_99: first "
           "evaluation with seed mean >= 99%; median_epoch_seed_100 / seeds_reaching_100: per seed, the first "
           "evaluation at 100% (median over the seeds that get there); final_*: the final evaluation "
           "(final_eval_series x 50 greedy predictions) over seeds; n_params: per model. tf_*: teacher-forced "
           "accuracy (the training predictions on each epoch's fresh series, scored before the update, mean over "
           "the evaluation interval): the per-step accuracy without feeding predictions back.", "note")
    percent = ["plateau_acc", "best_mean_acc", "last_mean_acc", "tf_plateau_acc", "tf_last_mean_acc", "final_mean",
               "final_min", "final_max",
               *(c for c in table.columns if c.startswith(("last_mean_accuracy", "final_mean_accuracy")))]
    page.table(to_html(table, percent_columns=percent))
    lines = [f"{ctx.name}: greedy accuracy per configuration (seed mean)"]
    for r in table.iter_rows(named=True):
        final = "n/a" if r["final_mean"] is None else f"{100 * r['final_mean']:.2f}%"
        lines.append(
            f"  {_label(r, by)}: plateau {100 * (r['plateau_acc'] or 0):.1f}%, best {100 * r['best_mean_acc']:.1f}%, "
            f"last {100 * r['last_mean_acc']:.1f}% (teacher-forced: plateau {100 * (r['tf_plateau_acc'] or 0):.1f}%, "
            f"last {100 * r['tf_last_mean_acc']:.1f}%), "
            f"final {final} ({r['seeds_final_100']}/{r['n_seeds']} seeds 100%), mean>=99% at epoch "
            f"{r['epoch_mean_99']}, median seed 100% at {r['median_epoch_seed_100']}, n_params {r['n_params']}"
            + "".join(f", {c} {100 * r[c]:.1f}%" for c in table.columns
                      if c.startswith(("last_mean_accuracy", "final_mean_accuracy")) and r[c] is not None))
    return lines


def dynamic_range(weights: np.ndarray) -> float:
    """log10(max / min) over the positive entries of an attention matrix (its dynamic range in decades)."""
    w = weights[np.isfinite(weights) & (weights > 0)]
    return float(np.log10(w.max() / w.min())) if w.size else math.nan


@section("expressive_attention")
def attention_section(page: Page, ctx: ReportContext) -> list[str]:
    """Final attention matrices (log10) of the probe series, EA beside DPA, and their dynamic ranges."""
    lf, meta, study_dir = ctx.lf, ctx.meta, ctx.location
    art = scan_artifacts(study_dir, "attention")
    page.h(2, "Attention matrices (log10 scale)")
    if art is None:
        page.p("No attention artifacts saved.")
        return []
    columns = lf.collect_schema().names()
    cols = _config_columns(meta, columns)
    keys = lf.select("trial_key", "attention", *cols).unique().collect()
    frame = art.collect().join(keys, on="trial_key", how="inner")
    if frame.is_empty():
        page.p("No attention artifacts of finished trials.")
        return []
    configs = frame.select(cols).unique().sort(cols).to_dicts() if cols else [{}]
    positive = frame.filter(pl.col("weight") > 0).get_column("weight")
    # one colour scale for EA and DPA
    vmin = math.log10(as_float(positive.min(), "attention weight")) if positive.len() else -1.0
    ranges = []
    fig = Figure(figsize=(8.5, 3.8 * len(configs) + 0.4), layout="constrained")
    axes = fig.subplots(len(configs), 2, squeeze=False)
    for row_axes, config in zip(axes, configs, strict=True):
        sub = frame
        for c in cols:
            sub = sub.filter(pl.col(c) == config[c])
        for ax, att in zip(row_axes, ("ea", "dpa"), strict=True):  # EA left, DPA right (paper Fig. 4)
            d = sub.filter(pl.col("attention") == att)
            if d.is_empty():
                ax.set_axis_off()
                continue
            seed = d.get_column("seed").min()
            for s in sorted(d.get_column("seed").unique().to_list()):
                ds = d.filter(pl.col("seed") == s)
                t = as_int(ds.get_column("query").max(), "attention query") + 1
                m = np.full((t, t), np.nan)
                m[ds.get_column("query").to_numpy(), ds.get_column("key").to_numpy()] = ds.get_column("weight")
                ranges.append({"attention": att, **config, "seed": s, "decades": dynamic_range(m)})
                if s == seed:
                    with np.errstate(divide="ignore"):
                        img = ax.imshow(np.log10(m), cmap="viridis", interpolation="nearest", vmin=vmin, vmax=0)
                    fig.colorbar(img, ax=ax, shrink=0.8, label="log10 a_mk")
                    ax.set_title(f"{att.upper()} · {_label(config, cols)} · seed {s}", fontsize=9)
                    ax.set_xlabel("key k")
                    ax.set_ylabel("query m")
    page.raw(page.figure(fig, "expressive_attention", "attention matrices EA vs DPA"))
    table = (pl.DataFrame(ranges).group_by(["attention", *cols])
             .agg(pl.col("decades").mean().alias("mean_decades"), pl.col("decades").min().alias("min_decades"),
                  pl.col("decades").max().alias("max_decades"), pl.len().alias("n_seeds"))
             .sort(["attention", *cols]))
    page.p("Dynamic range = log10(max / min) over the causal entries of the final attention matrix on one probe "
           "series (the paper: EA typically spans a larger range).", "note")
    page.table(to_html(table))
    return [f"  attention range {_label(r, ['attention', *cols])}: {r['mean_decades']:.1f} decades (mean of "
            f"{r['n_seeds']} seeds)" for r in table.iter_rows(named=True)]


def ladder_table(lf: pl.LazyFrame, threshold: float = LADDER_THRESHOLD) -> pl.DataFrame:
    """Per (attention, basis, delay): the smallest n_context whose seed-mean final accuracy >= threshold
    (null: none of the N_con tried), and the largest N_con tried."""
    finals = (
        _ok(lf).group_by(["attention", "basis", "delay", "n_context", "seed"])
        .agg(pl.col("final_accuracy").drop_nulls().last().alias("final"))
        .group_by(["attention", "basis", "delay", "n_context"])
        .agg(pl.col("final").mean().alias("final_mean"))
        .collect()
    )
    return (
        finals.group_by(["attention", "basis", "delay"])
        .agg(pl.col("n_context").filter(pl.col("final_mean") >= threshold).min().alias("min_n_context_100"),
             pl.col("n_context").max().alias("max_n_context_tried"),
             pl.col("final_mean").max().alias("best_final_mean"))
        .sort(["attention", "basis", "delay"])
    )


def ladder_figure(table: pl.DataFrame, title: str) -> Figure:
    """Heatmaps (basis down, delay across) of log2(smallest N_con reaching 100%), DPA beside EA; x = never."""
    bases = sorted(table.get_column("basis").unique().to_list())
    delays = sorted(table.get_column("delay").unique().to_list())
    fig = Figure(figsize=(4.2 * 2 + 1.0, 0.55 * len(bases) + 2.0), layout="constrained")
    axes = fig.subplots(1, 2, squeeze=False)[0]
    finite = table.get_column("min_n_context_100").drop_nulls()
    reached = as_int(finite.max(), "min_n_context_100") if finite.len() else 2
    vmax = math.log2(max(reached or 2, as_int(table.get_column("max_n_context_tried").max(), "max_n_context_tried")))
    for ax, att in zip(axes, ("dpa", "ea"), strict=True):
        grid = np.full((len(bases), len(delays)), np.nan)
        sub = table.filter(pl.col("attention") == att)
        for r in sub.iter_rows(named=True):
            i, j = bases.index(r["basis"]), delays.index(r["delay"])
            v = r["min_n_context_100"]
            grid[i, j] = math.log2(v) if v is not None else np.nan
            ax.text(j, i, str(v) if v is not None else "x", ha="center", va="center", fontsize=8,
                    color="white" if v is None or math.log2(v) > vmax * 0.6 else "black")
        ax.set_facecolor("#444444")
        img = ax.imshow(grid, cmap="YlOrRd", vmin=1, vmax=vmax, aspect="auto")
        ax.set_xticks(range(len(delays)), [str(d) for d in delays])
        ax.set_yticks(range(len(bases)), [str(b) for b in bases])
        ax.set_xlabel("delay tau")
        ax.set_ylabel("basis N")
        ax.set_title(f"{att.upper()}: smallest N_con at 100%", fontsize=10)
        fig.colorbar(img, ax=ax, shrink=0.8, label="log2 N_con")
    fig.suptitle(title, fontsize=11)
    return fig


@section("expressive_ladder")
def ladder_section(page: Page, ctx: ReportContext) -> list[str]:
    """The complexity ladder: smallest N_con reaching 100% per (N, tau), DPA beside EA."""
    lf, meta = ctx.lf, ctx.meta
    table = ladder_table(lf)
    page.h(2, "Complexity ladder: smallest N_con reaching 100%")
    page.p(f"Per (N, tau): the smallest context length whose mean over seeds of the final greedy accuracy is at "
           f"least {100 * LADDER_THRESHOLD:.1f}%; x = none of the N_con tried (dark grey: not run).", "note")
    page.raw(page.figure(ladder_figure(table, meta.name), "expressive_ladder", "ladder heatmap"))
    page.table(to_html(table, percent_columns=["best_final_mean"]))
    lines = [f"{ctx.name}: smallest N_con with mean final accuracy >= "
             f"{100 * LADDER_THRESHOLD:.1f}%"]
    for r in table.iter_rows(named=True):
        v = r["min_n_context_100"]
        lines.append(f"  {r['attention']} N{r['basis']}T{r['delay']}: "
                     f"{v if v is not None else '> ' + str(r['max_n_context_tried'])}")
    return lines
