"""Robustness leaderboard (mixer x task) and the hybrid-depth summary of Yun et al. 2020.

Report sections (``analysis.report.sections``):

* ``leaderboard`` (the ``atlas`` study): per (mixer, task) four statistics over the learning-rate x size grid,
  rendered as a table and a heatmap with each statistic's definition beside it;
* ``hybrid`` (``yun2020.hybrid``): the same statistics per (task, k convolution layers at the bottom), with
  parameter counts and measured training throughput per k, and the answer to "do 1-2 convolution layers at
  the bottom help?".

Definitions (G is the paper's statistic: the mean over seeds of the metric at each evaluation, maximised over
training, per grid configuration; :func:`analysis.stats.rgb.epochwise_rgb`):

* **best mean accuracy** = max over the grid of G;
* **share within margin** = fraction of the grid's configurations (every size x learning rate) with
  G >= best - ``margin`` (``margin`` = 5 percentage points unless stated); high = works almost anywhere;
* **seed spread** = mean over the grid's configurations of (max - min over seeds of each seed's best metric
  over training); 0 = every seed ends at the same accuracy;
* **learning-rate band** = at the size of the best configuration, log10(lr_high / lr_low) of the contiguous
  run of grid learning rates around the best one whose G is within ``margin`` of the best (0 = only the best
  rate qualifies; the grid spacing is the resolution);
* **diverged share** = fraction of the grid's runs (configuration x seed) that diverged (non-finite loss); a
  diverged run scores 0 from its divergence on, so a row whose every run diverged reads "best 0%";
* **vs the best**: the column's best entity (highest mean G over the column's cells) against each other one,
  paired over the cells (:mod:`analysis.stats.separation`): the mean difference with its 95% interval, and
  whether the column ranks anything at all ("does not rank at this scale" when the best is separated from none).

For a loss (:func:`search_spaces.finding.direction`) best is lowest: best G is the min over the grid, "within margin"
is at most ``margin`` above it, and a configuration without a finite G counts as +inf (the metric's worst,
:func:`analysis.stats.rgb.worst_value`; an accuracy's is 0).

Pure functions ``LazyFrame/DataFrame -> DataFrame / Figure``; only the report writes files.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from analysis.data.scalars import as_float, as_int
from analysis.render.page import Page
from analysis.render.tables import to_html
from analysis.report.sections import ReportContext, section
from analysis.stats.rgb import Mode, epochwise_rgb, seed_best_stats, worst_value
from analysis.stats.separation import DOES_NOT_RANK, separation, separation_text
from search_spaces.axes import show_value
from search_spaces.finding import direction
from search_spaces.record import StudyRecord

MARGIN = 0.05  # 5 percentage points of accuracy

STATISTICS: tuple[tuple[str, str], ...] = (
    ("best_g", "best mean accuracy: max over the grid (every size x learning rate) of G, the mean over seeds "
               "of the metric at each evaluation, maximised over training."),
    ("share_within_margin", "share within margin: fraction of the grid's configurations whose G is within "
                            "{margin} (absolute) of the best G of that row; high = robust to the hyperparameters "
                            "(low best G makes it trivially high: read it with best G)."),
    ("seed_spread", "seed spread: mean over the grid's configurations of (max - min over seeds) of each seed's "
                    "best metric over training; 0 = all seeds agree."),
    ("lr_band_decades", "learning-rate band: at the size of the best configuration, log10(highest / lowest "
                        "learning rate) of the contiguous run of grid rates around the best rate whose G is within "
                        "{margin} of the best; 0 = only the best rate; the grid spacing is the resolution."),
    ("diverged_share", "diverged share: fraction of the grid's runs (configuration x seed) whose loss became "
                       "non-finite; such a run scores 0 from then on."),
)
_PERCENT = ["best_g", "share_within_margin", "seed_spread", "diverged_share"]


def leaderboard(
    lf: pl.LazyFrame,
    *,
    entity: str,
    task: str | None,
    lr: str = "learning_rate",
    size: str | None = None,
    metric: str = "val_accuracy",
    margin: float = MARGIN,
) -> pl.DataFrame:
    """Per (``entity``, ``task``): best G, where, share within ``margin``, seed spread, learning-rate band.

    Args:
        lf: result rows (one per trial, seed, evaluation step); failed rows are ignored.
        entity: the column whose values are compared (``mixer``, ``conv_layers`` ...).
        task: the task column (None: one task).
        lr: the learning-rate column.
        size: the size column (``d_model``; None: no size axis).
        metric: the metric; best is highest, or lowest for a loss (:func:`search_spaces.finding.direction`), and
            a configuration without a finite G counts as the metric's worst (:func:`analysis.stats.rgb.worst_value`:
            accuracy 0, a loss +inf).
        margin: absolute margin of the share and band statistics (within it: that far below the best G, or above
            it for a loss).

    Returns:
        ``entity, task, best_g, best_<size>, best_<lr>, share_within_margin, seed_spread, lr_band_decades,
        lr_band_low, lr_band_high, diverged_share, n_configs, n_seeds`` sorted by ``task`` then best G (best first).
    """
    columns = lf.collect_schema().names()
    if "status" in columns:
        lf = lf.filter(pl.col("status") != "failed")
    keys = [entity] + ([task] if task else [])
    by = [*keys, *([size] if size else []), lr]
    mode: Mode = "min" if direction(metric) == "min" else "max"
    sign = 1.0 if mode == "max" else -1.0  # score = sign * G: higher is better for a loss too
    rgb = epochwise_rgb(lf, metric, by, mode).collect().with_columns(pl.col("g").fill_null(worst_value(metric)))
    seeds = seed_best_stats(lf, metric, by, mode).collect()
    grid = rgb.join(seeds.select(*by, "best_min", "best_max"), on=by, how="left", nulls_equal=True)
    diverged = _diverged_share(lf, keys, [*by, "seed"]) if "status" in columns else {}
    rows: list[dict[str, Any]] = []
    for group_key, g in grid.group_by(keys, maintain_order=True):
        g = g.with_columns((sign * pl.col("g")).alias("score"))
        best_score = as_float(g.get_column("score").max(), "g")
        best_g = sign * best_score
        order = [pl.col("score"), *([pl.col(size)] if size else []), pl.col(lr)]
        best = g.sort(order, descending=[True, *([False] if size else []), True]).row(0, named=True)
        at_size = g.filter(pl.col(size) == best[size]) if size else g
        low, high = _band(at_size.select(lr, "score").rows(), best[lr], best_score - margin)
        spread = (g.get_column("best_max") - g.get_column("best_min")).drop_nulls()
        row = dict(zip(keys, group_key, strict=True))
        row.update(
            best_g=best_g,
            **({f"best_{size}": best[size]} if size else {}),
            **{f"best_{lr}": best[lr]},
            share_within_margin=as_float((g.get_column("score") >= best_score - margin - 1e-12).mean(), "g"),
            seed_spread=as_float(spread.mean(), "seed spread") if spread.len() else None,
            lr_band_decades=math.log10(high / low),
            lr_band_low=low,
            lr_band_high=high,
            diverged_share=diverged.get(tuple(group_key), 0.0),
            n_configs=g.height,
            n_seeds=as_int(g.get_column("n_seeds").max(), "n_seeds"),
        )
        rows.append(row)
    out = pl.DataFrame(rows)
    sort = ([task] if task else []) + ["best_g"]
    return out.sort(sort, descending=[False] * (len(sort) - 1) + [mode == "max"])


def _diverged_share(lf: pl.LazyFrame, keys: list[str], run: list[str]) -> dict[tuple[object, ...], float]:
    """Per ``keys``: the fraction of runs (distinct ``run`` values) with a ``diverged`` row."""
    runs = lf.group_by(run).agg((pl.col("status") == "diverged").any().alias("diverged"))
    shares = runs.group_by(keys).agg(pl.col("diverged").mean()).collect()
    return {tuple(r[:-1]): float(r[-1]) for r in shares.rows()}


def _band(lr_g: Sequence[tuple[float, float]], best_lr: float, threshold: float) -> tuple[float, float]:
    """(lowest, highest) learning rate of the contiguous run around ``best_lr`` with a score (G; -G for a loss)
    >= ``threshold``."""
    ordered = sorted(lr_g)
    i = next(k for k, (v, _) in enumerate(ordered) if v == best_lr)
    lo = hi = i
    while lo > 0 and ordered[lo - 1][1] >= threshold - 1e-12:
        lo -= 1
    while hi < len(ordered) - 1 and ordered[hi + 1][1] >= threshold - 1e-12:
        hi += 1
    return float(ordered[lo][0]), float(ordered[hi][0])


def definitions(margin: float = MARGIN) -> list[tuple[str, str]]:
    """(column, definition) of every leaderboard statistic, with the margin filled in."""
    return [(c, text.format(margin=f"{100 * margin:g} pp")) for c, text in STATISTICS]


def leaderboard_figure(board: pl.DataFrame, entity: str, task: str, title: str = "",
                       margin: float = MARGIN, *, by_value: bool = True,
                       not_ranking: Sequence[object] = ()) -> Figure:
    """Heatmaps entity x task, one per statistic, each cell annotated with its value.

    Rows are sorted by the mean best G over tasks (``by_value``) or by the entity's own order. A task in
    ``not_ranking`` is labelled "does not rank" under every heatmap, its cells hatched.
    """
    entities = sorted(set(board.get_column(entity).to_list()), key=lambda v: (str(type(v)), v))
    tasks = sorted(set(board.get_column(task).to_list()), key=str)
    if by_value:  # rows best first by the mean best G over tasks
        mean_best = {e: _mean_or_zero(board.filter(pl.col(entity) == e).get_column("best_g")) for e in entities}
        entities.sort(key=lambda e: -mean_best[e])
    stats = [("best_g", "best G (%)", 100.0, (0, 100)), ("share_within_margin",
             f"share within {100 * margin:g} pp (%)", 100.0, (0, 100)),
             ("seed_spread", "seed spread (pp)", 100.0, None), ("lr_band_decades", "lr band (decades)", 1.0, None),
             ("diverged_share", "diverged (% of runs)", 100.0, (0, 100))]
    width = 2.2 + max(1.1 * len(tasks), 1.8) * len(stats)  # room for the titles with a single task
    fig = Figure(figsize=(width, 1.2 + 0.38 * len(entities)), layout="constrained")
    axes = fig.subplots(1, len(stats), squeeze=False)[0]
    lookup = {(r[entity], r[task]): r for r in board.iter_rows(named=True)}
    for ax, (col, label, scale, limits) in zip(axes, stats, strict=True):
        data = np.full((len(entities), len(tasks)), np.nan)
        for i, e in enumerate(entities):
            for j, t in enumerate(tasks):
                r = lookup.get((e, t))
                if r is not None and r[col] is not None:
                    data[i, j] = r[col] * scale
        _heatmap(ax, data, col, scale, limits)
        for j, t in enumerate(tasks):
            if t in not_ranking:  # hatched: numbers that must not be read as a ranking
                ax.add_patch(Rectangle((j - 0.5, -0.5), 1, len(entities), fill=False, hatch="//", alpha=0.35))
        ax.set_xticks(range(len(tasks)), [f"{t}\n(does not rank)" if t in not_ranking else str(t) for t in tasks],
                      rotation=30, ha="right", fontsize=7)
        ax.set_yticks(range(len(entities)), [f"{entity}={e}" if not isinstance(e, str) else e for e in entities],
                      fontsize=7)
        ax.set_title(label, fontsize=9)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def _mean_or_zero(values: pl.Series) -> float:
    mean = values.mean()
    return as_float(mean, values.name) if mean else 0.0


def _heatmap(ax: Axes, data: npt.NDArray[np.float64], col: str, scale: float,
             limits: tuple[float, float] | None) -> None:
    """One statistic's heatmap with each finite cell annotated (white on dark, black on light)."""
    vmin, vmax = limits if limits else (0.0, max(float(np.nanmax(data)) if np.isfinite(data).any() else 1.0, 1e-9))
    cmap = "magma_r" if col in ("seed_spread", "diverged_share") else "viridis"
    ax.imshow(data, aspect="auto", cmap=cmap, vmin=vmin, vmax=vmax)
    for i, j in zip(*np.nonzero(np.isfinite(data)), strict=True):
        frac = (data[i, j] - vmin) / (vmax - vmin) if vmax > vmin else 0.0
        dark = frac < 0.55 if cmap == "viridis" else frac > 0.45
        ax.text(j, i, f"{data[i, j]:.1f}" if scale == 100.0 else f"{data[i, j]:.2f}",
                ha="center", va="center", fontsize=7, color="white" if dark else "black")


def _definitions_html(margin: float) -> str:
    items = "".join(f"<li><b>{html.escape(c)}</b>: {html.escape(text)}</li>" for c, text in definitions(margin))
    return f"<ul class='note'>{items}</ul>"


def _board_html(board: pl.DataFrame, entity: str, lr: str, size: str | None) -> pl.DataFrame:
    """The board as shown: learning rates as text, the band as "low .. high"."""
    bands = [f"{show_value(lo)} .. {show_value(hi)}" for lo, hi in board.select("lr_band_low", "lr_band_high").rows()]
    rates = [show_value(float(v)) for v in board.get_column(f"best_{lr}").to_list()]
    return board.with_columns(
        pl.Series(f"best_{lr}", rates, dtype=pl.String),
        pl.Series("lr_band", bands, dtype=pl.String),
        pl.col("lr_band_decades").round(2),
    ).drop("lr_band_low", "lr_band_high")


def _plot(meta: StudyRecord) -> tuple[str, str, str]:
    return meta.plot.panel or "mixer", meta.plot.x or "d_model", meta.plot.y or "learning_rate"


def _summary_line(row: Mapping[str, Any], entity: str, task: str | None) -> str:
    name = f"{entity}={row[entity]}" + (f" / {row[task]}" if task else "")
    return (f"  {name}: best {100 * row['best_g']:.1f}%, within {100 * MARGIN:g} pp: "
            f"{100 * row['share_within_margin']:.0f}% of grid, seed spread {100 * (row['seed_spread'] or 0):.1f} pp, "
            f"lr band {row['lr_band_decades']:.2f} decades, diverged {100 * row['diverged_share']:.0f}% of runs")


@section("leaderboard")
def leaderboard_section(page: Page, ctx: ReportContext) -> list[str]:
    """The robustness leaderboard mixer x task: table + heatmaps + definitions."""
    lf, meta = ctx.lf, ctx.meta
    entity, size, lr = _plot(meta)
    metric = meta.metric
    columns = lf.collect_schema().names()
    task = "task" if "task" in columns else None
    size_col = size if size in columns and size != lr else None
    board = leaderboard(lf, entity=entity, task=task, lr=lr, size=size_col, metric=metric)
    cells = [c for c in (size_col, lr) if c]
    versus = separation(lf, entity=entity, task=task, cells=cells, metric=metric)
    board = _with_separation(board, versus, entity, task)
    quiet = _not_ranking(versus, task)
    page.h(2, f"Robustness leaderboard: {entity} x task")
    page.p(f"Metric: {metric}. Margin: {100 * MARGIN:g} percentage points. Every configuration of the grid "
           f"({', '.join(cells)}) counts; seeds per configuration as in the study.", "note")
    page.raw(_definitions_html(MARGIN))
    verdicts = _column_verdicts(versus, entity, task)
    page.h(3, "Which columns rank?")
    page.raw("<ul>" + "".join(f"<li>{html.escape(v.strip())}</li>" for v in verdicts) + "</ul>")
    fig = leaderboard_figure(board, entity, task, f"{meta.name} · {metric}", not_ranking=quiet) if task else None
    if fig is not None:
        page.raw(page.figure(fig, "leaderboard", "robustness leaderboard heatmap"))
    page.table(to_html(_board_html(board, entity, lr, size_col), percent_columns=_PERCENT))
    lines = [f"{ctx.name}: robustness leaderboard ({metric}, margin {100 * MARGIN:g} pp)"]
    lines += verdicts
    lines += [_summary_line(r, entity, task) for r in board.iter_rows(named=True)]
    return lines


def _with_separation(board: pl.DataFrame, versus: pl.DataFrame, entity: str, task: str | None) -> pl.DataFrame:
    """The board with ``vs_best`` (:func:`separation_text`) and ``column`` (ranks / does not rank at this scale)."""
    keys = [entity, *([task] if task else [])]
    texts = [separation_text(r, entity) for r in versus.iter_rows(named=True)]
    column = pl.when(pl.col("ranks")).then(pl.lit("ranks")).otherwise(pl.lit(DOES_NOT_RANK)).alias("column")
    text = versus.select(*keys, pl.Series("vs_best", texts, dtype=pl.String), column)
    return board.join(text, on=keys, how="left", nulls_equal=True)


def _not_ranking(versus: pl.DataFrame, task: str | None) -> list[object]:
    if task is None:
        return []
    return versus.filter(~pl.col("ranks")).get_column(task).unique().to_list()


def _column_verdicts(versus: pl.DataFrame, entity: str, task: str | None) -> list[str]:
    """One line per task column: does it rank, which entities sit below the best, which are tied with it."""
    lines = []
    groups = versus.group_by(task, maintain_order=True) if task else [((None,), versus)]
    for (value,), part in groups:
        best = part.item(0, "best")
        below = [r[entity] for r in part.iter_rows(named=True) if r["separated"]]
        tied = [r[entity] for r in part.iter_rows(named=True) if r[entity] != best and not r["separated"]]
        name = f"{task}={value}" if task else "the grid"
        if not below:
            lines.append(f"  {name}: {DOES_NOT_RANK}: the best by mean G ({best}) is separated from no other "
                         f"{entity} beyond noise (paired over the grid's cells: 95% interval, twice the seed noise, "
                         "1 point)")
        else:
            lines.append(f"  {name}: ranks: {best} is above {', '.join(map(str, below))}"
                         + (f"; tied with it: {', '.join(map(str, tied))}" if tied else ""))
    return lines


def hybrid_costs(lf: pl.LazyFrame, *, entity: str = "conv_layers", task: str = "task") -> pl.DataFrame:
    """Per (task, k): parameters and measured training throughput from the trial rows.

    ``steps_per_s`` = the final step / the seed's wall time at that step (training plus its evaluations, as run
    in the study, with whatever else shared the CPU), median over the seeds and learning rates of k.
    """
    columns = lf.collect_schema().names()
    ok = lf.filter(pl.col("status") == "ok") if "status" in columns else lf
    last = ok.filter(pl.col("step") == pl.col("step").max().over("trial_key", "seed"))
    return (
        last.group_by(task, entity)
        .agg(
            pl.col("n_params").first().alias("n_params"),
            (pl.col("step") / pl.col("wall_time_s")).median().alias("steps_per_s"),
            pl.len().alias("n_models"),
        )
        .sort(task, entity)
        .collect()
    )


def hybrid_verdict(board: pl.DataFrame, *, entity: str = "conv_layers", task: str = "task",
                   margin: float = MARGIN) -> list[str]:
    """Per task: does k = 1 or 2 beat k = 0 (best G, and share within margin)? One line each."""
    lines = []
    for t in sorted(set(board.get_column(task).to_list()), key=str):
        sub = {r[entity]: r for r in board.filter(pl.col(task) == t).iter_rows(named=True)}
        if 0 not in sub:
            continue
        base = sub[0]
        parts = []
        for k in (1, 2):
            if k in sub:
                d = sub[k]["best_g"] - base["best_g"]
                verdict = "better" if d > 0.01 + 1e-9 else ("worse" if d < -0.01 - 1e-9 else "same (within 1 pp)")
                parts.append(f"k={k}: {100 * sub[k]['best_g']:.1f}% ({100 * d:+.1f} pp, {verdict}; within-"
                             f"{100 * margin:g}pp share {100 * sub[k]['share_within_margin']:.0f}% vs "
                             f"{100 * base['share_within_margin']:.0f}%)")
        lines.append(f"  {t}: k=0 {100 * base['best_g']:.1f}%; " + "; ".join(parts))
    return lines


@section("hybrid")
def hybrid_section(page: Page, ctx: ReportContext) -> list[str]:
    """Yun et al.'s hybrid depth: statistics, parameters and throughput per k, and the verdict."""
    lf, meta = ctx.lf, ctx.meta
    entity, lr = "conv_layers", meta.plot.y or "learning_rate"
    metric = meta.metric
    board = leaderboard(lf, entity=entity, task="task", lr=lr, metric=metric)
    costs = hybrid_costs(lf)
    table = board.join(costs, on=["task", entity], how="left").sort("task", entity)
    page.h(2, "Hybrid stacks: k convolution layers at the bottom, softmax attention above")
    page.p("Yun et al. 2020 (Fig. 1): 1-2 convolution layers at the bottom beat the all-attention stack on "
           "SQuAD / MNLI while being cheaper. Here: the same statistics per (task, k) as the atlas leaderboard "
           "over the learning-rate grid, plus the parameter count and the measured throughput.", "note")
    page.raw(_definitions_html(MARGIN))
    page.p("steps_per_s: final step / that seed's wall time (training and its evaluations, as run in the study, "
           "on a CPU other processes shared), median over the seeds and learning rates of k; "
           "bench/hybrid_throughput.py measures training steps alone.", "note")
    fig = leaderboard_figure(board, entity, "task", f"{meta.name} · {metric}", by_value=False)
    page.raw(page.figure(fig, "hybrid_leaderboard", "hybrid statistics heatmap"))
    page.table(to_html(_board_html(table, entity, lr, None), percent_columns=_PERCENT))
    verdict = hybrid_verdict(board)
    page.h(3, "Do 1-2 convolution layers at the bottom help?")
    page.raw("<ul>" + "".join(f"<li>{html.escape(v.strip())}</li>" for v in verdict) + "</ul>")
    lines = [f"{ctx.name}: hybrid stacks (best {metric} G per task and k)"]
    for r in table.iter_rows(named=True):
        lines.append(_summary_line(r, entity, "task") + f", {r['n_params']} params, "
                     f"{r['steps_per_s']:.1f} steps/s (trial wall time)")
    lines.append("  do 1-2 conv layers at the bottom help?")
    lines += verdict
    return lines
