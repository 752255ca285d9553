"""Report sections for the Neural Data Router study (Csordás et al. 2021): Table 1 and the probe figures.

* ``csordas2021.table1``: the paper's Table 1 from the trial rows. Per (model, direction, seed): IID =
  ``iid_accuracy`` (valid/iid) at the last evaluation; "longer" = ``test_accuracy`` (depth 9-10) at the
  evaluation with the highest ``depth_val_accuracy`` (depth 6-8; ties: the latest step). Cells are mean
  ± sample std (n-1) over seeds, beside the published numbers (spec 1.6.3/1.6.4).
* ``csordas2021.probe``: for the fixed probe input (the first depth-test sample) the trained model's
  attention map at every step and its gate activations (mean over channels) per step and column.

Pure polars / matplotlib: no torch, no Ray.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from analysis.data.rows import scan_artifacts
from analysis.data.scalars import as_int
from analysis.render.page import Page
from analysis.render.tables import to_html, to_markdown
from analysis.report.sections import ReportContext, section

ARROWS = {"forward": "→", "backward": "←"}
COLUMNS = ("IID →", "IID ←", "Longer →", "Longer ←")
MODEL_ORDER = ("LSTM", "DNC", "Transformer", "+ rel", "+ rel + gate", "+ abs/rel + gate", "+ geom. att.", "NDR")

#: The seed paper's Table 1 (mean, std over 5 seeds): IID →, IID ←, Longer →, Longer ←.
PAPER_TABLE1: dict[str, tuple[tuple[float, float], ...]] = {
    "LSTM": ((1.00, 0.00), (0.59, 0.03), (1.00, 0.00), (0.22, 0.03)),
    "DNC": ((1.00, 0.00), (0.57, 0.06), (1.00, 0.00), (0.18, 0.02)),
    "Transformer": ((1.00, 0.00), (0.82, 0.39), (0.13, 0.01), (0.12, 0.01)),
    "+ rel": ((1.00, 0.00), (1.00, 0.00), (0.23, 0.05), (0.13, 0.01)),
    "+ rel + gate": ((1.00, 0.00), (1.00, 0.00), (0.99, 0.01), (0.19, 0.04)),
    "+ abs/rel + gate": ((1.00, 0.00), (1.00, 0.00), (0.98, 0.02), (0.98, 0.03)),
    "+ geom. att.": ((0.96, 0.04), (0.93, 0.06), (0.16, 0.02), (0.15, 0.02)),
    "NDR": ((1.00, 0.00), (1.00, 0.00), (1.00, 0.00), (1.00, 0.00)),
}


def seed_scores(lf: pl.LazyFrame) -> pl.LazyFrame:
    """Per (model, direction, seed): ``iid`` (final IID accuracy) and ``longer`` (depth-test accuracy at the
    best depth-validation step, latest on ties), plus ``best_step`` and ``status``."""
    keys = ["model", "direction", "seed"]
    ranked = lf.filter(pl.col("status") != "failed").sort([*keys, "step"])
    return ranked.group_by(keys).agg(
        iid=pl.col("iid_accuracy").last(),
        longer=pl.col("test_accuracy").filter(
            pl.col("depth_val_accuracy") == pl.col("depth_val_accuracy").max()).last(),
        best_step=pl.col("step").filter(pl.col("depth_val_accuracy") == pl.col("depth_val_accuracy").max()).last(),
        last_step=pl.col("step").max(),
        diverged=(pl.col("status") == "diverged").any(),
    ).sort(keys)


def table1_stats(scores: pl.DataFrame) -> pl.DataFrame:
    """From :func:`seed_scores`, long form: model, direction, metric (iid / longer), mean, std (n-1), n,
    diverged seeds."""
    long = scores.unpivot(index=["model", "direction", "seed", "diverged"], on=["iid", "longer"],
                          variable_name="metric", value_name="value")
    return (long.group_by(["model", "direction", "metric"])
            .agg(mean=pl.col("value").mean(), std=pl.col("value").std(ddof=1), n=pl.len(),
                 diverged=pl.col("diverged").sum())
            .sort(["model", "direction", "metric"]))


def _cell(mean: float | None, std: float | None) -> str:
    if mean is None:
        return "–"
    return f"{mean:.2f} ± {0.0 if std is None or np.isnan(std) else std:.2f}"


def table1(scores: pl.DataFrame) -> pl.DataFrame:
    """From :func:`seed_scores`, the paper's layout: one row per model, columns IID →, IID ←, Longer →,
    Longer ← ("mean ± std"), and n."""
    stats = table1_stats(scores)
    rows = []
    models = [m for m in MODEL_ORDER if m in set(stats["model"])] + sorted(
        set(stats["model"]) - set(MODEL_ORDER))
    for model in models:
        row: dict[str, Any] = {"model": model}
        ns = []
        for metric, name in (("iid", "IID"), ("longer", "Longer")):
            for direction in ("forward", "backward"):
                hit = stats.filter((pl.col("model") == model) & (pl.col("direction") == direction)
                                   & (pl.col("metric") == metric))
                row[f"{name} {ARROWS[direction]}"] = _cell(hit["mean"][0], hit["std"][0]) if len(hit) else "–"
                ns.append(int(hit["n"][0]) if len(hit) else 0)
        row["seeds"] = min(ns)
        rows.append(row)
    return pl.DataFrame(rows, schema={"model": pl.String, **{c: pl.String for c in COLUMNS}, "seeds": pl.Int64})


def paper_table1() -> pl.DataFrame:
    """The published Table 1 in the same layout."""
    rows = [{"model": m, **{c: _cell(*v) for c, v in zip(COLUMNS, values, strict=True)}, "seeds": 5}
            for m, values in PAPER_TABLE1.items()]
    return pl.DataFrame(rows)


def side_by_side(ours: pl.DataFrame) -> pl.DataFrame:
    """Ours and the paper's cell by cell: columns ``<col>`` (ours) and ``<col> (paper)``."""
    paper = paper_table1().rename({c: f"{c} (paper)" for c in COLUMNS}).drop("seeds")
    joined = paper.join(ours, on="model", how="full", coalesce=True)
    order = {m: i for i, m in enumerate(MODEL_ORDER)}
    joined = joined.with_columns(pl.col("model").replace_strict(order, default=99).alias("_o")).sort("_o")
    cols = ["model"] + [c for col in COLUMNS for c in (col, f"{col} (paper)")] + ["seeds"]
    return joined.select([pl.col(c).fill_null("–") if c != "seeds" else pl.col(c) for c in cols])


@section("csordas2021.table1")
def table1_section(page: Page, ctx: ReportContext) -> list[str]:
    """Table 1 (ours beside the paper's) and the selected steps per seed."""
    lf = ctx.lf
    columns = lf.collect_schema().names()
    needed = {"model", "direction", "iid_accuracy", "test_accuracy", "depth_val_accuracy"}
    if not needed <= set(columns):
        page.p(f"No CTL rows: missing columns {sorted(needed - set(columns))}.")
        return ["table1: no data"]
    scores = seed_scores(lf).collect()
    both = side_by_side(table1(scores))
    page.h(2, "Table 1: compositional table lookup")
    page.p("IID = valid/iid accuracy at the end of training; Longer = depth 9-10 test accuracy at the evaluation "
           "with the best depth 6-8 validation accuracy (latest on ties). Mean ± sample std over seeds; "
           "'(paper)' columns: the published Table 1. Chance is 0.125.", "note")
    page.table(to_html(both, percent_columns=()))
    page.h(3, "Per seed")
    page.table(to_html(scores.with_columns(pl.col("iid", "longer").round(3)), percent_columns=()))
    return ["Table 1 (ours | paper):", to_markdown(both, percent_columns=())]


def attention_figure(att: pl.DataFrame, title: str) -> Figure:
    """One heatmap per step (head 0): query down, key across, with the probe's tokens as tick labels."""
    steps = sorted(att["layer_step"].unique().to_list())
    a0 = att.filter(pl.col("head") == 0)
    n = as_int(a0["query"].max(), "attention query") + 1
    tokens = a0.filter((pl.col("query") == 0) & (pl.col("layer_step") == steps[0])).sort("key")["key_token"].to_list()
    cols = min(7, len(steps))
    rows = (len(steps) + cols - 1) // cols
    fig = Figure(figsize=(2.3 * cols, 2.4 * rows + 0.6))
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, step in zip(axes.flat, steps, strict=False):
        m = np.zeros((n, n))
        d = a0.filter(pl.col("layer_step") == step)
        m[d["query"].to_numpy(), d["key"].to_numpy()] = d["weight"].to_numpy()
        ax.axis("on")
        ax.imshow(m, vmin=0, vmax=1, cmap="viridis")
        ax.set_title(f"step {step}", fontsize=8)
        ax.set_xticks(range(n), tokens, fontsize=5, rotation=90)
        ax.set_yticks(range(n), tokens, fontsize=5)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def gate_figure(gates: pl.DataFrame, title: str) -> Figure:
    """Gate activation (mean over channels) per step (down) and column (across)."""
    steps = as_int(gates["layer_step"].max(), "gates layer_step")
    n = as_int(gates["column"].max(), "gates column") + 1
    m = np.zeros((steps, n))
    m[gates["layer_step"].to_numpy() - 1, gates["column"].to_numpy()] = gates["gate"].to_numpy()
    tokens = gates.filter(pl.col("layer_step") == 1).sort("column")["token"].to_list()
    fig = Figure(figsize=(0.45 * n + 1.5, 0.3 * steps + 1.2))
    ax = fig.subplots()
    im = ax.imshow(m, vmin=0, vmax=1, cmap="magma", aspect="auto")
    ax.set_xticks(range(n), tokens, fontsize=7)
    ax.set_yticks(range(steps), [str(s) for s in range(1, steps + 1)], fontsize=7)
    ax.set_ylabel("step")
    fig.colorbar(im, ax=ax, fraction=0.05)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


def _trial_labels(lf: pl.LazyFrame) -> pl.DataFrame:
    return lf.select("trial_key", "model", "direction").unique().collect()


@section("csordas2021.probe")
def probe_section(page: Page, ctx: ReportContext) -> list[str]:
    """Attention maps per step (NDR, or the first model with any) and gates per step and column (gated models)."""
    lf, study_dir = ctx.lf, ctx.location
    att = scan_artifacts(study_dir, "attention")
    gates = scan_artifacts(study_dir, "gates")
    page.h(2, "Probe input: attention per step and gate activations")
    if att is None and gates is None:
        page.p("No probe artifacts yet.")
        return []
    labels = _trial_labels(lf)
    lines: list[str] = []
    seed = 0
    if gates is not None:
        g = gates.collect().join(labels, on="trial_key")
        seed = as_int(g["seed"].min(), "gates seed")
        for (model, direction), d in sorted(g.filter(pl.col("seed") == seed).group_by(["model", "direction"]),
                                            key=lambda kv: (MODEL_ORDER.index(kv[0][0])
                                                            if kv[0][0] in MODEL_ORDER else 99, kv[0][1])):
            label, pred = int(d["label"][0]), int(d["prediction"][0])
            title = f"{model} · {direction} · seed {seed} · gates (label {label:03b}, predicted {pred:03b})"
            page.raw(page.figure(gate_figure(d, title), f"gates_{_safe(model)}_{direction}", title))
            lines.append(f"probe {model} {direction}: label {label}, predicted {pred}")
    if att is not None:
        a = att.collect().join(labels, on="trial_key")
        preferred = "NDR" if "NDR" in set(a["model"]) else sorted(set(a["model"]))[0]
        for direction in ("forward", "backward"):
            d = a.filter((pl.col("model") == preferred) & (pl.col("direction") == direction))
            if d.is_empty():
                continue
            s = as_int(d["seed"].min(), "attention seed")
            d = d.filter(pl.col("seed") == s)
            title = f"{preferred} · {direction} · seed {s} · attention per step (head 0)"
            page.raw(page.figure(attention_figure(d, title), f"attention_{_safe(preferred)}_{direction}", title))
    return lines


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in text).strip("_")
