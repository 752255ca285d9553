"""`study compare`'s table shown: plain text for a terminal, HTML and a bar figure for the report file.

The numbers come from :func:`analysis.stats.compare.compare_sides`.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import polars as pl
from matplotlib.figure import Figure


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f}"


def _signed(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:+.1f}"


def comparison_rows(df: pl.DataFrame, panel: str) -> tuple[list[str], list[list[str]]]:
    """Header and formatted cells of a comparison (percent with one decimal; differences signed)."""
    header = [
        "metric",
        panel,
        "A best G %",
        "A at",
        "B best G %",
        "B at",
        "A-B (pp)",
        "A robust %",
        "B robust %",
        "A-B (pp)",
        "configs A/B",
    ]
    rows = []
    for r in df.iter_rows(named=True):
        rows.append(
            [
                r["metric"],
                str(r[panel]),
                _pct(r["a_best_g"]),
                r["a_at"] or "–",
                _pct(r["b_best_g"]),
                r["b_at"] or "–",
                _signed(r["diff_best_g"]),
                _pct(r["a_robust_share"]),
                _pct(r["b_robust_share"]),
                _signed(r["diff_robust_share"]),
                f"{r['a_n_configs'] if r['a_n_configs'] is not None else 0}/"
                f"{r['b_n_configs'] if r['b_n_configs'] is not None else 0}",
            ]
        )
    return header, rows


def format_comparison(df: pl.DataFrame, panel: str, label_a: str, label_b: str, threshold: float) -> str:
    """A plain-text table of :func:`compare_sides` for a terminal, with a legend of A, B and the share."""
    header, rows = comparison_rows(df, panel)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    numeric = {2, 4, 6, 7, 8, 9}

    def line(cells: Sequence[str]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        return "  ".join(c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in pairs).rstrip()

    out = [
        f"A = {label_a}",
        f"B = {label_b}",
        f"best G: mean over seeds, maximised over training, best (x, y) of the grid; robust: share of the "
        f"grid with G >= {100 * threshold:.0f}%; A-B in percentage points",
        "",
        line(header),
        line(["-" * w for w in widths]),
        *(line(r) for r in rows),
    ]
    return "\n".join(out)


def comparison_html(df: pl.DataFrame, panel: str, label_a: str, label_b: str, threshold: float) -> str:
    """A self-contained HTML table (no network) of :func:`compare_sides`, differences coloured."""
    header, rows = comparison_rows(df, panel)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = []
    for r in rows:
        cells = []
        for i, c in enumerate(r):
            cls = ""
            if i in (6, 9) and c not in ("–",):
                cls = " class='pos'" if c.startswith("+") and c != "+0.0" else (" class='neg'" if c[0] == "-" else "")
            cells.append(f"<td{cls}>{html.escape(c)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f"<p>A = <b>{html.escape(label_a)}</b>, B = <b>{html.escape(label_b)}</b>. Best G: mean accuracy over "
        f"seeds, maximised over training, at the best (x, y) of the grid; robust: share of the grid with "
        f"G &ge; {100 * threshold:.0f}%; A-B in percentage points.</p>"
        f"<table class='data'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def comparison_figure(df: pl.DataFrame, panel: str, label_a: str, label_b: str, metric: str) -> Figure:
    """Grouped bars per panel value: best G and robustness share of A and B for ``metric``."""
    import numpy as np

    sub = df.filter(pl.col("metric") == metric)
    names = [str(v) for v in sub.get_column(panel).to_list()]
    xs = np.arange(len(names))
    fig = Figure(figsize=(max(5.0, 1.3 * len(names) + 2.0), 3.6), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, stat, title in ((axes[0], "best_g", "best G"), (axes[1], "robust_share", "robustness share")):
        for k, (side, label, color) in enumerate((("a", label_a, "#1f77b4"), ("b", label_b, "#ff7f0e"))):
            vals = [100 * v if v is not None else 0.0 for v in sub.get_column(f"{side}_{stat}").to_list()]
            ax.bar(xs + (k - 0.5) * 0.4, vals, width=0.4, label=label, color=color)
        ax.set_xticks(xs, names)
        ax.set_ylim(0, 100)
        ax.set_ylabel("%")
        ax.set_title(f"{title} · {metric}", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=7)
    return fig
