"""A study's report: PNG figures and one self-contained ``index.html`` (images embedded, no network).

:func:`write_report` reads ``<study_dir>/trials/*.parquet`` once (lazily; two aggregations collected
together), derives every statistic from the small aggregated frames, and writes the figures of the
paper (RGB grids, published grid beside the reproduced one, robustness and learning curves), the
paper-style table and the study's findings with PASS/FAIL. Measurement studies (``"kind":
"measurement"``) get the pooling-scale figure and table instead.
"""

from __future__ import annotations

import base64
import html
import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from matplotlib.figure import Figure

from analysis.dataset import failed_files, load_study_meta, scan_study, trial_files
from analysis.plots import (
    CASE_CAPTION,
    RGB_CAPTION,
    format_value,
    learning_curve_figure,
    order_panels,
    pooling_scale_figure,
    rgb_grid_figure,
    robustness_figure,
)
from analysis.reference import load_reference
from analysis.stats import (
    CASES,
    best_config,
    findings_from_best,
    rgb_from_step_stats,
    robustness_curve,
    seed_best,
    seed_best_stats_from_seed_best,
    step_stats,
)
from analysis.tables import paper_table, to_html, to_markdown

ACCURACY_METRICS: tuple[str, ...] = ("train_accuracy", "val_accuracy")
#: At most this many facets (values of extra varying hyperparameters) get their own grids.
MAX_FACETS: int = 12
#: Hyperparameter columns never used as facets.
_NOT_FACETS = {"seed", "study", "trial_key", "step", "epoch", "status"}


@dataclass(frozen=True)
class Report:
    """What :func:`build_report` wrote."""

    index_html: Path
    figures: list[Path] = field(default_factory=list)
    summary: str = ""


@dataclass
class _Page:
    """The HTML body under construction and the PNGs written so far."""

    out_dir: Path
    parts: list[str] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)

    def h(self, level: int, text: str) -> None:
        self.parts.append(f"<h{level}>{html.escape(text)}</h{level}>")

    def p(self, text: str, cls: str = "") -> None:
        attr = f' class="{cls}"' if cls else ""
        self.parts.append(f"<p{attr}>{html.escape(text)}</p>")

    def raw(self, text: str) -> None:
        self.parts.append(text)

    def figure(self, fig: Figure, name: str, alt: str) -> str:
        path = self.out_dir / f"{name}.png"
        fig.savefig(path, dpi=100)
        self.figures.append(path)
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(alt)}"></figure>'


_CSS = """
body{font-family:system-ui,sans-serif;max-width:1400px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table.data{border-collapse:collapse;font-size:.85em;margin:.5em 0}
table.data td,table.data th{border:1px solid #ccc;padding:.2em .5em;text-align:right}
table.data th{background:#f3f3f3}
.row{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}
figure{margin:.5em 0}img{max-width:100%}
.pass{color:#1a7f37;font-weight:bold}.fail{color:#cf222e;font-weight:bold}.note{color:#666}
pre{background:#f6f8fa;padding:.6em;overflow-x:auto;font-size:.85em}
"""


def _safe(text: object) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(text))


def _plot_axes(meta: Mapping[str, Any], columns: Sequence[str]) -> tuple[str, str, str]:
    """(panel, x, y) from ``study.json["plot"]`` or sensible defaults for the columns present."""
    plot = meta.get("plot") or {}
    panel = plot.get("panel") or ("architecture" if "architecture" in columns else None)
    y = plot.get("y") or ("learning_rate" if "learning_rate" in columns else None)
    axes = [*(meta.get("scientific") or {}), *(meta.get("nuisance") or {})]
    x = plot.get("x") or next((a for a in axes if a not in (panel, y) and a in columns), None)
    missing = [
        name for name, col in (("panel", panel), ("x", x), ("y", y)) if col is None or col not in columns
    ]
    if missing:
        raise ValueError(
            f"cannot choose plot axes {missing}: set study.json 'plot' {{panel, x, y}} "
            f"to columns of {list(columns)}"
        )
    return panel, x, y  # type: ignore[return-value]


def _facet_candidates(meta: Mapping[str, Any], columns: Sequence[str], axes: Sequence[str]) -> list[str]:
    names = [*(meta.get("scientific") or {}), *(meta.get("nuisance") or {})]
    return [n for n in dict.fromkeys(names) if n in columns and n not in axes and n not in _NOT_FACETS]


def _approx_in(column: str, values: Sequence[object]) -> pl.Expr:
    """``column`` is one of ``values``; floats equal to a relative 1e-6 (0.3**k is inexact)."""
    floats = [v for v in values if isinstance(v, float)]
    if not floats:
        return pl.col(column).is_in(list(values))
    col = pl.col(column).cast(pl.Float64)
    return pl.any_horizontal([(col - v).abs() <= 1e-6 * abs(v) for v in floats])


def _describe(row: Mapping[str, Any], columns: Sequence[str]) -> str:
    return ", ".join(f"{c}={format_value(row[c], c)}" for c in columns)


def _at_column(frame: pl.DataFrame, columns: Sequence[str], name: str) -> pl.Series:
    """A string column describing each row's ``columns`` with tick-label formatting."""
    return pl.Series(name, [_describe(row, columns) for row in frame.iter_rows(named=True)], dtype=pl.String)


def _search_space_html(meta: Mapping[str, Any]) -> str:
    rows = []
    for kind in ("scientific", "nuisance", "fixed"):
        for name, values in (meta.get(kind) or {}).items():
            shown = (
                ", ".join(format_value(v, name) for v in values)
                if isinstance(values, list)
                else format_value(values, name)
            )
            rows.append(
                f"<tr><td>{kind}</td><td>{html.escape(name)}</td>"
                f"<td style='text-align:left'>{html.escape(shown)}</td></tr>"
            )
    seeds = meta.get("seeds")
    if seeds is not None:
        rows.append(
            f"<tr><td>seeds</td><td>seed</td><td style='text-align:left'>{html.escape(str(seeds))}</td></tr>"
        )
    return (
        '<table class="data"><thead><tr><th>kind</th><th>hyperparameter</th><th>values</th></tr></thead>'
        "<tbody>" + "".join(rows) + "</tbody></table>"
    )


def _progress(study_dir: Path, counts: pl.DataFrame, meta: Mapping[str, Any]) -> pl.DataFrame:
    """Progress counts from the per-(trial, seed) status frame."""
    status = counts.get_column("status").value_counts() if counts.height else pl.DataFrame()
    by_status = {s: n for s, n in status.iter_rows()} if status.height else {}
    rows = [
        ("trial files present", len(trial_files(study_dir))),
        ("trials expected (n_trials)", meta.get("n_trials", "–")),
        ("trials failed for good (failed/*.json)", len(failed_files(study_dir))),
        ("trials with data", counts.get_column("trial_key").n_unique() if counts.height else 0),
        ("seeds", counts.get_column("seed").n_unique() if counts.height else 0),
        ("rows", int(counts.get_column("n_rows").sum()) if counts.height else 0),
        ("trained models (trial x seed)", counts.height),
        ("  status ok", by_status.get("ok", 0)),
        ("  status diverged", by_status.get("diverged", 0)),
        ("  status failed", by_status.get("failed", 0)),
    ]
    return pl.DataFrame({"count": [r[0] for r in rows], "value": [str(r[1]) for r in rows]})


def build_report(
    study_dir: str | Path, out_dir: str | Path, *, meta: Mapping[str, Any] | None = None
) -> Report:
    """Write the report of the study in ``study_dir`` to ``out_dir``; see :func:`write_report`."""
    study_dir = Path(study_dir)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if meta is None:
        meta = load_study_meta(study_dir)
    page = _Page(out_dir)
    name = meta.get("name", study_dir.name)
    page.h(1, f"Study report: {name}")
    page.p(meta.get("goal") or "(no goal stated)")
    page.p(
        f"scale: {meta.get('scale', '–')} · task: {meta.get('task', '–')} · "
        f"kind: {meta.get('kind', 'training')} · sampler: {meta.get('sampler', '–')} · "
        f"metric: {meta.get('metric', '–')} ({meta.get('mode', 'max')})",
        "note",
    )
    page.h(2, "Search space")
    page.raw(_search_space_html(meta))

    lf = scan_study(study_dir)
    if meta.get("kind") == "measurement":
        summary = _measurement_sections(page, lf, meta, study_dir)
    else:
        summary = _training_sections(page, lf, meta, study_dir)

    deviations = meta.get("deviations") or []
    page.h(2, "Deviations from the paper")
    page.raw(
        "<ul>" + "".join(f"<li>{html.escape(str(d))}</li>" for d in deviations) + "</ul>"
        if deviations
        else "<p>none stated</p>"
    )
    versions = meta.get("versions")
    if versions:
        page.h(2, "Software versions")
        page.raw(f"<pre>{html.escape(json.dumps(versions, indent=1))}</pre>")

    index = out_dir / "index.html"
    index.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(str(name))}</title><style>{_CSS}</style></head><body>"
        + "\n".join(page.parts)
        + "</body></html>\n"
    )
    (out_dir / "summary.txt").write_text(summary + "\n")
    return Report(index_html=index, figures=page.figures, summary=summary)


def write_report(
    study_dir: str | Path, out_dir: str | Path, *, meta: Mapping[str, Any] | None = None
) -> Path:
    """Write the report of the study in ``study_dir`` (PNGs, ``index.html``, ``summary.txt``).

    Args:
        study_dir: ``<storage>/<study_name>`` holding ``study.json``, ``trials/`` and ``failed/``.
        out_dir: where to write; created if missing.
        meta: the study definition; read from ``study.json`` when omitted.

    Returns:
        The path of ``index.html``. ``out_dir/summary.txt`` holds a short text summary (best per
        panel, findings) for a CLI to echo; :func:`build_report` returns it directly.
    """
    return build_report(study_dir, out_dir, meta=meta).index_html


# --------------------------------------------------------------------------------------------- training


def _facet_values(frame: pl.DataFrame, candidates: Sequence[str]) -> tuple[list[str], list[dict[str, Any]]]:
    varying = [c for c in candidates if frame.get_column(c).n_unique() > 1]
    if not varying:
        return [], [{}]
    combos = frame.select(varying).unique().sort(varying).rows(named=True)
    if len(combos) > MAX_FACETS:
        warnings.warn(
            f"{len(combos)} facets of {varying}; drawing grids for the first {MAX_FACETS}", stacklevel=3
        )
        combos = combos[:MAX_FACETS]
    return varying, combos


def _facet_filter(frame: pl.DataFrame, facet: Mapping[str, Any]) -> pl.DataFrame:
    for k, v in facet.items():
        frame = frame.filter(pl.col(k) == v) if v is not None else frame.filter(pl.col(k).is_null())
    return frame


def _training_sections(page: _Page, lf: pl.LazyFrame, meta: Mapping[str, Any], study_dir: Path) -> str:
    columns = lf.collect_schema().names()
    panel, x, y = _plot_axes(meta, columns)
    facet_candidates = _facet_candidates(meta, columns, (panel, x, y))
    by = [panel, x, y, *facet_candidates]
    metrics = [m for m in ACCURACY_METRICS if m in columns]
    case_metrics = [
        f"{s}_{c}_accuracy" for s in ("train", "val") for c in CASES if f"{s}_{c}_accuracy" in columns
    ]
    findings_list = meta.get("findings") or []
    select_metric = (
        meta.get("metric")
        if meta.get("metric") in metrics
        else ("val_accuracy" if "val_accuracy" in metrics else metrics[0])
    )
    extra_max = sorted(
        {f.get("metric", select_metric) for f in findings_list}
        - set(metrics)
        - {m for m in columns if "loss" in m}
    )
    extra_max = [m for m in extra_max if m in columns]
    extra_min = sorted(
        {f.get("metric", select_metric) for f in findings_list} & {m for m in columns if "loss" in m}
    )

    base = (
        lf.filter(pl.col("status") != "failed")
        if "status" in columns
        else lf.with_columns(status=pl.lit("ok"))
    )
    queries = [
        step_stats(base, [*metrics, *case_metrics, *extra_max], by, "max"),
        seed_best(base, [*metrics, *extra_max], by, "max"),
        (lf if "status" in columns else lf.with_columns(status=pl.lit("ok")))
        .group_by("trial_key", "seed")
        .agg(
            pl.when((pl.col("status") == "failed").any())
            .then(pl.lit("failed"))
            .when((pl.col("status") == "diverged").any())
            .then(pl.lit("diverged"))
            .otherwise(pl.lit("ok"))
            .alias("status"),
            pl.len().alias("n_rows"),
        ),
    ]
    if extra_min:
        queries.append(step_stats(base, extra_min, by, "min"))
    collected = pl.collect_all(queries)
    steps, per_seed, counts = collected[:3]
    steps_min = collected[3] if extra_min else None

    page.h(2, "Progress")
    page.raw(to_html(_progress(study_dir, counts, meta), percent_columns=[]))
    if steps.is_empty():
        page.p("No finished (non-failed) trial data yet.")
        return f"{meta.get('name', study_dir.name)}: no data yet"

    varying, facets = _facet_values(steps, facet_candidates)
    keys = [panel, *varying]
    rgb = {m: rgb_from_step_stats(steps.lazy(), m, by).collect() for m in [*metrics, *extra_max]}
    case_rgb: dict[str, pl.DataFrame] = {}
    for split in ("train", "val"):
        cols = [f"{split}_{c}_accuracy" for c in CASES]
        if (
            all(c in case_metrics for c in cols)
            and steps.select(pl.col(f"{cols[0]}__g").is_not_null().any()).item()
        ):
            case_rgb[split] = (
                steps.group_by(by)
                .agg(*(pl.col(f"{m}__g").max().alias(c) for m, c in zip(cols, "rgb", strict=True)))
                .with_columns(pl.col(c).fill_nan(None) for c in "rgb")
                .sort(by)
            )
    best = {m: best_config(frame.lazy(), keys).collect() for m, frame in rgb.items()}
    seed_stats = seed_best_stats_from_seed_best(per_seed.lazy(), select_metric, by).collect()

    # Published grid (restricted to what the study ran).
    reference = _reference_rgb(meta, steps, panel, x, y, metrics)

    # RGB grids, one set per facet.
    page.h(2, "Hyperparameter grids")
    page.p(f"{RGB_CAPTION}. Cross: the best combination (highest G); the title gives its G.", "note")
    if reference is not None:
        page.p(
            f"Beside each reproduced grid: the published results ({meta.get('reference')}), restricted to "
            "the architectures and axis values this study ran.",
            "note",
        )
    for facet in facets:
        suffix = "" if not facet else " · " + ", ".join(f"{k}={format_value(v, k)}" for k, v in facet.items())
        tag = "" if not facet else "_" + "_".join(f"{k}-{_safe(v)}" for k, v in facet.items())
        if facet:
            page.h(3, suffix.removeprefix(" · "))
        for m in metrics:
            frame = _facet_filter(rgb[m], facet)
            fig = rgb_grid_figure(frame, panel, x, y, f"{meta.get('name', '')} · {m}{suffix}")
            imgs = [page.figure(fig, f"grid_{m}{tag}", f"RGB grid {m}{suffix}")]
            if reference is not None and m in reference["rgb"] and not facet_restricts(facet, reference):
                ref = reference["rgb"][m]
                fig = rgb_grid_figure(ref, panel, x, y, f"published · {m}")
                imgs.append(page.figure(fig, f"published_{m}{tag}", f"published grid {m}"))
            page.raw('<div class="row">' + "".join(imgs) + "</div>")
        for split, frame in case_rgb.items():
            acc = f"{split}_accuracy"
            fb = _facet_filter(best[acc], facet) if acc in best else None
            fig = rgb_grid_figure(
                _facet_filter(frame, facet),
                panel,
                x,
                y,
                f"case accuracy · {split}{suffix}",
                best=fb,
                caption=CASE_CAPTION + f"; x = best {acc} G",
            )
            page.raw(page.figure(fig, f"cases_{split}{tag}", f"case grid {split}{suffix}"))

    if reference is not None:
        page.h(3, "Best G: reproduced vs published")
        page.raw(to_html(reference["compare"](best)))

    # Robustness and learning curves.
    page.h(2, "Robustness")
    curve = robustness_curve(rgb[select_metric].lazy(), panel).collect()
    fig = robustness_figure(
        curve, panel, f"robustness · {select_metric} (G per combination, best first)", x="fraction"
    )
    page.raw(page.figure(fig, "robustness", "robustness curves"))
    page.p(f"Every combination of the grid{' (all facets)' if varying else ''}, sorted by G.", "note")

    page.h(2, "Learning curves of the best combinations")
    chosen = best_config(rgb[select_metric].lazy(), panel).collect().select(by)
    labels = chosen.with_columns(
        pl.Series(
            "label",
            [f"{row[panel]} ({_describe(row, [x, y, *varying])})" for row in chosen.iter_rows(named=True)],
            dtype=pl.String,
        )
    )
    curves = []
    for m in metrics:
        curves.append(
            steps.join(labels, on=by, how="inner", nulls_equal=True).select(
                "label",
                "step",
                pl.col(f"{m}__g").alias("mean"),
                pl.col(f"{m}__r").alias("min"),
                pl.col(f"{m}__b").alias("max"),
                pl.lit(m).alias("metric"),
            )
        )
    curves_df = pl.concat(curves)
    fig = learning_curve_figure(curves_df, "label", "mean over seeds, band = min-max over seeds")
    page.raw(page.figure(fig, "learning_curves", "learning curves"))

    # Table.
    page.h(2, "Best combination per panel (paper-style table)")
    page.p(
        f"Best = argmax over ({x}, {y}) of G ({select_metric}); min/mean/max over seeds per evaluation, "
        "each maximised over training. Case columns: mean case accuracy, maximised over training.",
        "note",
    )
    table = paper_table(
        rgb={m: rgb[m] for m in metrics}, panel=keys, by=by, select_metric=select_metric, case=case_rgb
    )
    table = table.join(
        seed_stats.select(*by, "best_mean", "n_seeds", "n_diverged"), on=by, how="left", nulls_equal=True
    )
    table = table.rename({"best_mean": f"{select_metric}_seed_best_mean"})
    table = table.select([c for c in table.columns if c not in facet_candidates or c in varying])
    page.raw(to_html(table))
    page.raw(f"<details><summary>Markdown</summary><pre>{html.escape(to_markdown(table))}</pre></details>")

    # Findings.
    summary_lines = [f"{meta.get('name', study_dir.name)}: best {select_metric} G per {panel}"]
    for row in best[select_metric].sort(keys).iter_rows(named=True):
        summary_lines.append(f"  {_describe(row, keys)}: {100 * row['g']:.1f}% at {_describe(row, [x, y])}")
    if findings_list:
        page.h(2, "Findings")
        best_all = {m: best_config(frame.lazy(), panel).collect() for m, frame in rgb.items()}
        if steps_min is not None:
            for m in extra_min:
                best_all[m] = best_config(
                    rgb_from_step_stats(steps_min.lazy(), m, by, "min").lazy(), panel, mode="min"
                ).collect()
        res = findings_from_best(best_all, findings_list, panel, select_metric)
        for i, finding in enumerate(findings_list):
            sub = res.filter(pl.col("finding") == i)
            ok = bool(sub.height) and bool(sub.get_column("passed").all())
            verdict = "PASS" if ok else "FAIL"
            numbers = "; ".join(_finding_number(r) for r in sub.iter_rows(named=True))
            page.raw(
                f"<p><span class='{verdict.lower()}'>{verdict}</span> "
                f"{html.escape(str(finding.get('description', '')))}"
                f" <span class='note'>[{html.escape(numbers)}]</span></p>"
            )
            summary_lines.append(f"  {verdict}: {finding.get('description', '')} [{numbers}]")
        page.raw(to_html(res.drop("finding")))
    return "\n".join(summary_lines)


def _finding_number(row: Mapping[str, Any]) -> str:
    value = "–" if row["value"] is None else f"{100 * row['value']:.1f}%"
    sign = "<" if row["relation"] == "below" else ">"
    return f"{row['panel_value']} = {value} ({sign} {100 * row['threshold']:.1f}%)"


def facet_restricts(facet: Mapping[str, Any], reference: Mapping[str, Any]) -> bool:
    """Whether a facet fixes a hyperparameter the published grid does not have (then no side-by-side)."""
    return any(k not in reference["columns"] for k in facet)


def _reference_rgb(
    meta: Mapping[str, Any], steps: pl.DataFrame, panel: str, x: str, y: str, metrics: Sequence[str]
) -> dict[str, Any] | None:
    name = meta.get("reference")
    if not name:
        return None
    try:
        ref = load_reference(name)
    except FileNotFoundError as err:
        warnings.warn(str(err), stacklevel=3)
        return None
    ref_cols = ref.collect_schema().names()
    if any(c not in ref_cols for c in (panel, x, y)):
        warnings.warn(f"reference {name} lacks one of {panel}, {x}, {y}; not drawn", stacklevel=3)
        return None
    ref_metrics = [m for m in metrics if m in ref_cols]
    by = [panel, x, y]
    restricted = ref.filter(
        pl.col(panel).is_in(steps.get_column(panel).unique().to_list()),
        _approx_in(x, steps.get_column(x).unique().to_list()),
        _approx_in(y, steps.get_column(y).unique().to_list()),
    )
    full_steps, sub_steps = pl.collect_all(
        [step_stats(ref, ref_metrics, by), step_stats(restricted, ref_metrics, by)]
    )
    if sub_steps.is_empty():
        warnings.warn(
            f"reference {name} has none of the study's axis values; drawing the full grid", stacklevel=3
        )
        sub_steps = full_steps
    rgb = {m: rgb_from_step_stats(sub_steps.lazy(), m, by).collect() for m in ref_metrics}
    full_best = {
        m: best_config(rgb_from_step_stats(full_steps.lazy(), m, by), panel).collect() for m in ref_metrics
    }

    def compare(best: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
        frames = []
        for m in ref_metrics:
            ours = best_config(best[m].lazy(), panel).collect() if m in best else None
            pub = best_config(rgb[m].lazy(), panel).collect()
            frame = (
                full_best[m]
                .select(
                    panel,
                    pl.lit(m).alias("metric"),
                    pl.col("g").alias("published_full_grid_value"),
                    _at_column(full_best[m], [x, y], "published_full_grid_at"),
                )
                .join(pub.select(panel, pl.col("g").alias("published_same_grid_value")), on=panel, how="left")
            )
            if ours is not None:
                frame = frame.join(
                    ours.select(
                        panel,
                        pl.col("g").alias("reproduced_value"),
                        _at_column(ours, [x, y], "reproduced_at"),
                    ),
                    on=panel,
                    how="left",
                )
            frames.append(frame)
        out = pl.concat(frames, how="diagonal")
        order = {v: i for i, v in enumerate(order_panels(out.get_column(panel).to_list()))}
        return (
            out.with_columns(pl.col(panel).replace_strict(order, return_dtype=pl.Int64).alias("_o"))
            .sort("_o", "metric")
            .drop("_o")
        )

    return {"rgb": rgb, "compare": compare, "columns": ref_cols}


# ------------------------------------------------------------------------------------------ measurement


def _measurement_sections(page: _Page, lf: pl.LazyFrame, meta: Mapping[str, Any], study_dir: Path) -> str:
    columns = lf.collect_schema().names()
    plot = meta.get("plot") or {}
    hue = plot.get("panel") or next((c for c in ("pooling", "mixer", "architecture") if c in columns), None)
    x = plot.get("x") or ("seq_len" if "seq_len" in columns else None)
    metrics = [m for m in ("output_std", "output_norm") if m in columns]
    if hue is None or x is None or not metrics:
        raise ValueError(
            f"measurement study needs a pooling column, seq_len and output_std/output_norm; got {columns}"
        )
    df = lf.select(
        hue, x, "seed", *metrics, *([c for c in ("trial_key", "status") if c in columns])
    ).collect()
    counts = (
        df.group_by("trial_key", "seed").agg(
            pl.col("status").first() if "status" in df.columns else pl.lit("ok").alias("status"),
            pl.len().alias("n_rows"),
        )
        if "trial_key" in df.columns
        else pl.DataFrame()
    )
    page.h(2, "Progress")
    page.raw(to_html(_progress(study_dir, counts, meta), percent_columns=[]))
    page.h(2, "Output scale of each pooling vs sequence length (paper Fig. 1 right)")
    fig = pooling_scale_figure(
        df, hue=hue, x=x, metrics=metrics, title=f"{meta.get('name', '')}: output scale at initialisation"
    )
    page.raw(page.figure(fig, "pooling_scale", "pooling scale"))
    table = (
        df.group_by(hue, x)
        .agg(
            *(pl.col(m).mean().alias(f"{m}_mean") for m in metrics),
            pl.col("seed").n_unique().alias("n_seeds"),
        )
        .sort(hue, x)
    )
    page.raw(to_html(table, percent_columns=[]))
    lines = [f"{meta.get('name', study_dir.name)}: {metrics[0]} at the smallest / largest {x} per {hue}"]
    for pv in order_panels(table.get_column(hue).to_list()):
        d = table.filter(pl.col(hue) == pv).sort(x)
        first, last = d.row(0, named=True), d.row(-1, named=True)
        lines.append(
            f"  {pv}: {first[f'{metrics[0]}_mean']:.3g} ({x}={first[x]})"
            f" -> {last[f'{metrics[0]}_mean']:.3g} ({x}={last[x]})"
        )
    return "\n".join(lines)
