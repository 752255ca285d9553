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
    model_status,
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
    #: Index of the "at a glance" slot under the title (filled by the sections that know the results).
    glance: int = -1

    toc: list[tuple[str, str]] = field(default_factory=list)

    def h(self, level: int, text: str) -> None:
        if level == 2:
            anchor = f"s{len(self.toc) + 1}"
            self.toc.append((anchor, text))
            self.parts.append(f"<h2 id='{anchor}'>{html.escape(text)}</h2>")
        else:
            self.parts.append(f"<h{level}>{html.escape(text)}</h{level}>")

    def slot(self) -> int:
        """A place to fill later (e.g. the summary at the top, known only at the end)."""
        self.parts.append("")
        return len(self.parts) - 1

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

    def table(self, table_html: str) -> None:
        """A table that scrolls sideways on its own instead of widening the page."""
        self.parts.append(f'<div class="scroll">{table_html}</div>')


_CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1200px;margin:0 auto;padding:1.5em 1.5em 4em;
color:#1f2328;line-height:1.45;background:#fff}
h1{font-size:1.7em;margin:.2em 0 .3em}h2{font-size:1.3em;border-bottom:2px solid #d0d7de;padding-bottom:.25em;
margin-top:2.2em}h3{font-size:1.05em;margin-top:1.5em}
nav.toc{font-size:.9em;margin:.8em 0 1.2em;display:flex;flex-wrap:wrap;gap:.3em .9em}
nav.toc a{color:#0969da;text-decoration:none}nav.toc a:hover{text-decoration:underline}
.goal{background:#f6f8fa;border-left:4px solid #0969da;padding:.7em 1em;margin:.8em 0;font-size:1.05em}
.goal b{color:#0969da}
.chips{display:flex;flex-wrap:wrap;gap:.4em;margin:.4em 0}
.chip{background:#eaeef2;border-radius:1em;padding:.1em .7em;font-size:.85em}
.deviations{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:.6em 1em .6em 2em;margin:.6em 0}
.deviations li{margin:.25em 0}
.glance{border:1px solid #d0d7de;border-radius:6px;padding:.6em 1em;margin:1em 0}
.glance p{margin:.3em 0}
.progress{display:flex;height:1.1em;border-radius:4px;overflow:hidden;background:#eaeef2;max-width:640px;
margin:.5em 0}
.progress span{display:block;height:100%}
.bar-ok{background:#2da44e}.bar-div{background:#d4a72c}.bar-fail{background:#cf222e}.bar-pend{background:#eaeef2}
.legend{display:flex;flex-wrap:wrap;gap:.5em 1.4em;margin:.6em 0;font-size:.88em}
.legend div{display:flex;align-items:center;gap:.45em}
.sw{display:inline-block;width:1.4em;height:1.4em;border:1px solid #888;border-radius:2px;flex:none}
table.data{border-collapse:collapse;font-size:.85em;margin:.5em 0;font-variant-numeric:tabular-nums}
table.data td,table.data th{border:1px solid #d0d7de;padding:.25em .6em;text-align:right}
table.data th{background:#f6f8fa}table.data tbody tr:nth-child(even){background:#fafbfc}
table.data td.l{text-align:left}
.scroll{overflow-x:auto;max-width:100%}
.row{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}
.row figure{flex:1 1 0;min-width:300px}
figure{margin:.5em 0}img{max-width:100%;height:auto}
.pass{color:#1a7f37;font-weight:bold}.fail{color:#cf222e;font-weight:bold}.note{color:#57606a}
pre{background:#f6f8fa;padding:.6em;overflow-x:auto;font-size:.85em}
details{margin:.5em 0}summary{cursor:pointer;color:#0969da}
"""

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
    """Colour swatches explaining R / G / B (the paper's grids), as inline HTML (no image)."""
    items = "".join(
        f"<div><span class='sw' style='background:rgb({round(255 * r)},{round(255 * g)},{round(255 * b)})'>"
        f"</span>{html.escape(text)}</div>"
        for (r, g, b), text in _RGB_EXAMPLES
    )
    return (
        "<p><b>Reading the grids.</b> One pixel per (x, learning rate). Its colour mixes three numbers, "
        "each the accuracy over the seeds of that combination, maximised over training: "
        "<b style='color:#cf222e'>R = worst seed</b> (min), <b style='color:#1a7f37'>G = mean</b> over seeds, "
        "<b style='color:#0969da'>B = best seed</b> (max). Since worst &le; mean &le; best, a pixel is white "
        "when the combination is reliably good, and turns blue as fewer seeds succeed. Grey cells: "
        "not run. The cross marks the highest G of each panel; the panel title gives that G.</p>"
        f"<div class='legend'>{items}</div>"
    )


def _deviations_html(meta: Mapping[str, Any]) -> str:
    deviations = [str(d) for d in meta.get("deviations") or []]
    scale = meta.get("scale")
    lead = (
        f"<p>This run is at the <b>{html.escape(str(scale))}</b> scale, not the paper's: compare the shapes of "
        "the grids, not the absolute accuracies.</p>"
        if scale and scale != "paper"
        else ""
    )
    items = "".join(f"<li>{html.escape(d)}</li>" for d in deviations) or "<li>none stated</li>"
    return f"{lead}<ul class='deviations'>{items}</ul>"



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


def plot_axes(meta: Mapping[str, Any], columns: Sequence[str]) -> tuple[str, str, str]:
    """(panel, x, y) of a study: ``study.json["plot"]`` or sensible defaults for ``columns``."""
    return _plot_axes(meta, columns)


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
    for kind in ("scientific", "nuisance"):
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
    fixed = meta.get("fixed") or {}
    chips = "".join(
        f"<span class='chip'>{html.escape(k)} = {html.escape(format_value(v, k))}</span>" for k, v in fixed.items()
    )
    return (
        "<p class='note'>Scientific hyperparameters are what the study asks about; nuisance ones are tuned "
        "away (the best value is taken); fixed ones are the same for every trial.</p>"
        '<table class="data"><thead><tr><th>kind</th><th>hyperparameter</th><th>values</th></tr></thead>'
        "<tbody>" + "".join(rows) + "</tbody></table>"
        + (f"<p><b>fixed:</b></p><div class='chips'>{chips}</div>" if chips else "")
    )


def _progress_html(study_dir: Path, counts: pl.DataFrame, meta: Mapping[str, Any]) -> str:
    """A one-line summary with a bar (done / diverged / failed / pending), then the counts table."""
    table = _progress(study_dir, counts, meta)
    done = len(trial_files(study_dir))
    failed = len(failed_files(study_dir))
    expected = meta.get("n_trials")
    total = int(expected) if isinstance(expected, int) and expected > 0 else done + failed
    pending = max(0, total - done - failed)
    models = counts.height
    n_div = int((counts.get_column("status") == "diverged").sum()) if models else 0
    n_bad = int((counts.get_column("status") == "failed").sum()) if models else 0
    # trials split by whether their models all trained: the bar's width is trials
    div_trials = (
        counts.filter(pl.col("status") == "diverged").get_column("trial_key").n_unique() if models else 0
    )
    ok_trials = max(0, done - div_trials)

    def pct(n: int) -> float:
        return 100.0 * n / total if total else 0.0

    bar = (
        "<div class='progress' title='trials: ok / with a diverged seed / failed / pending'>"
        f"<span class='bar-ok' style='width:{pct(ok_trials):.2f}%'></span>"
        f"<span class='bar-div' style='width:{pct(div_trials):.2f}%'></span>"
        f"<span class='bar-fail' style='width:{pct(failed):.2f}%'></span>"
        f"<span class='bar-pend' style='width:{pct(pending):.2f}%'></span></div>"
    )
    line = (
        f"<p><b>{done} of {total} trials done</b>, {failed} failed, {pending} pending. "
        f"Of {models} trained models (trial x seed), <b>{n_div} diverged</b> (loss became NaN/inf; they "
        f"count with accuracy 0 from then on) and {n_bad} failed.</p>"
        "<div class='legend'><div><span class='sw bar-ok'></span>trials done, no seed diverged</div>"
        "<div><span class='sw bar-div'></span>done, some seed diverged</div>"
        "<div><span class='sw bar-fail'></span>failed for good</div>"
        "<div><span class='sw bar-pend'></span>pending</div></div>"
    )
    return line + bar + f"<details><summary>all counts</summary>{to_html(table, percent_columns=[])}</details>"


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
    page.raw(f"<div class='goal'><b>Goal.</b> {html.escape(meta.get('goal') or '(no goal stated)')}</div>")
    chips = [
        ("scale", meta.get("scale", "–")),
        ("task", meta.get("task", "–")),
        ("kind", meta.get("kind", "training")),
        ("sampler", meta.get("sampler", "–")),
        ("metric", f"{meta.get('metric', '–')} ({meta.get('mode', 'max')})"),
        ("seeds", len(meta.get("seeds") or []) or "–"),
        ("published data", meta.get("reference") or "none"),
    ]
    page.raw(
        "<div class='chips'>"
        + "".join(f"<span class='chip'>{html.escape(k)}: {html.escape(str(v))}</span>" for k, v in chips)
        + "</div>"
    )
    toc_slot = page.slot()
    page.glance = page.slot()
    page.h(2, "Deviations from the paper")
    page.raw(_deviations_html(meta))
    page.h(2, "Search space")
    page.raw(_search_space_html(meta))

    lf = scan_study(study_dir)
    if meta.get("kind") == "measurement":
        summary = _measurement_sections(page, lf, meta, study_dir)
    else:
        summary = _training_sections(page, lf, meta, study_dir)
    for name in meta.get("sections") or ():
        from analysis.sections import get_section

        lines = get_section(name)(page, lf, dict(meta), study_dir)
        summary = "\n".join([summary, *lines])

    versions = meta.get("versions")
    if versions:
        page.h(2, "Software versions")
        page.raw(f"<pre>{html.escape(json.dumps(versions, indent=1))}</pre>")

    page.parts[toc_slot] = (
        "<nav class='toc'>"
        + "".join(f"<a href='#{a}'>{html.escape(t)}</a>" for a, t in page.toc)
        + "</nav>"
    )
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
    if meta.get("mode", "max") == "max" and meta.get("metric") in columns and meta["metric"] not in metrics:
        metrics.append(meta["metric"])  # a family's own accuracy (e.g. depth-validation accuracy)
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
        model_status(lf if "status" in columns else lf.with_columns(status=pl.lit("ok"))),
    ]
    if extra_min:
        queries.append(step_stats(base, extra_min, by, "min"))
    collected = pl.collect_all(queries)
    steps, per_seed, counts = collected[:3]
    steps_min = collected[3] if extra_min else None

    page.h(2, "Progress")
    page.raw(_progress_html(study_dir, counts, meta))
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
    page.raw(_rgb_legend())
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
        page.table(to_html(reference["compare"](best)))

    # Robustness and learning curves.
    page.h(2, "Robustness")
    curve = robustness_curve(rgb[select_metric].lazy(), panel).collect()
    fig = robustness_figure(
        curve, panel, f"robustness · {select_metric} (G per combination, best first)", x="fraction"
    )
    page.raw(page.figure(fig, "robustness", "robustness curves"))
    page.p(
        f"Every combination of the grid{' (all facets)' if varying else ''}, sorted by G (mean over seeds): "
        "a curve that stays high for longer means an architecture that works across more hyperparameters.",
        "note",
    )
    page.table(to_html(robustness_table(rgb[select_metric], panel), percent_columns=_ROBUST_PERCENT))

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
    page.table(to_html(table))
    page.raw(f"<details><summary>Markdown</summary><pre>{html.escape(to_markdown(table))}</pre></details>")

    # Findings.
    summary_lines = [f"{meta.get('name', study_dir.name)}: best {select_metric} G per {panel}"]
    glance = [f"<p><b>Best {html.escape(select_metric)} G</b> (mean over seeds, best combination):</p><ul>"]
    for row in best[select_metric].sort(keys).iter_rows(named=True):
        summary_lines.append(f"  {_describe(row, keys)}: {100 * row['g']:.1f}% at {_describe(row, [x, y])}")
        glance.append(
            f"<li>{html.escape(_describe(row, keys))}: <b>{100 * row['g']:.1f}%</b> "
            f"<span class='note'>at {html.escape(_describe(row, [x, y]))}</span></li>"
        )
    glance.append("</ul>")
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
            glance.append(
                f"<p><span class='{verdict.lower()}'>{verdict}</span> "
                f"{html.escape(str(finding.get('description', '')))}</p>"
            )
        page.table(to_html(res.drop("finding")))
    page.parts[page.glance] = "<div class='glance'>" + "".join(glance) + "</div>"
    return "\n".join(summary_lines)


_ROBUST_PERCENT = ["best_g", "median_g", "share_g_at_least_50", "share_within_5pp_of_best"]


def robustness_table(rgb: pl.DataFrame, panel: str) -> pl.DataFrame:
    """Per panel value: how many combinations, best and median G, and the share of combinations with
    G >= 50% and within 5 percentage points of the panel's best (all G values fractions)."""
    g = pl.col("g")
    out = (
        rgb.filter(g.is_not_null())
        .group_by(panel)
        .agg(
            pl.len().alias("combinations"),
            g.max().alias("best_g"),
            g.median().alias("median_g"),
            (g >= 0.5).mean().alias("share_g_at_least_50"),
            (g >= g.max() - 0.05).mean().alias("share_within_5pp_of_best"),
        )
    )
    order = {v: i for i, v in enumerate(order_panels(out.get_column(panel).to_list()))}
    return out.sort(pl.col(panel).replace_strict(order, return_dtype=pl.Int64))


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
    page.raw(_progress_html(study_dir, counts, meta))
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
