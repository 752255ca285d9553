"""Tables as HTML and Markdown: headers for people, accuracy-like columns as percent.

The tables themselves (polars DataFrames) are computed by :mod:`analysis.stats.paper_tables` and the other
statistics; this module only writes them out.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import polars as pl

from analysis.stats.rgb import CASES
from search_spaces.axes import show_value

#: Table headers for people: the column names are the data's vocabulary (kept in each header's tooltip).
HEADERS: dict[str, str] = {
    "architecture": "architecture", "d_model": "width d", "learning_rate": "learning rate", "n_layers": "layers L",
    "n_heads": "heads M", "vocab_size": "vocabulary S", "seq_len": "length N", "batch_size": "batch size",
    "train_accuracy": "train accuracy", "val_accuracy": "validation accuracy",
    "train_min": "train worst seed", "train_mean": "train mean", "train_max": "train best seed",
    "val_min": "val worst seed", "val_mean": "val mean", "val_max": "val best seed",
    "n_seeds": "seeds", "n_diverged": "diverged seeds", "best_g": "best G", "median_g": "median G",
    "share_g_at_least_50": "share G ≥ 50%", "share_within_5pp_of_best": "share within 5 pp of best",
    "combinations": "combinations", "panel_value": "panel value", "threshold": "threshold", "value": "value",
}


def human(column: str) -> str:
    """A column name as a table header: :data:`HEADERS`, else words (``n_params`` -> ``params``)."""
    if column in HEADERS:
        return HEADERS[column]
    for prefix, word in (("train_", "train "), ("val_", "val ")):
        if column.startswith(prefix) and column.endswith("_accuracy"):
            return word + column.removeprefix(prefix).removesuffix("_accuracy").replace("_", " ")
    if "=" in column:  # a per-x column of :func:`per_x_table`: ``vocab_size=4`` -> ``vocabulary S = 4``
        name, _, value = column.partition("=")
        return f"{human(name)} = {value}"
    return column.removeprefix("n_").replace("_", " ")


def _cell(value: object, percent: bool) -> str:
    if value is None:
        return "–"
    if percent and isinstance(value, float):
        return f"{100 * value:.1f}"
    return show_value(value)


def _is_percent(df: pl.DataFrame, column: str, percent_columns: Sequence[str] | None) -> bool:
    if percent_columns is not None:
        return column in percent_columns
    return df.schema[column] == pl.Float64 and any(
        column.endswith(s) for s in ("_min", "_mean", "_max", *(f"_{c}" for c in CASES), "value", "threshold")
    )


def to_markdown(df: pl.DataFrame, percent_columns: Sequence[str] | None = None) -> str:
    """A GitHub-Markdown table; accuracy-like float columns as percent with one decimal."""
    cols = df.columns
    pct = {c: _is_percent(df, c, percent_columns) for c in cols}
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.iter_rows():
        lines.append("| " + " | ".join(_cell(v, pct[c]) for v, c in zip(row, cols, strict=True)) + " |")
    return "\n".join(lines)


def _is_text(df: pl.DataFrame, column: str) -> bool:
    """A string column holding words (not numbers written as strings): aligned left."""
    if df.schema[column] != pl.String:
        return False
    values = df.get_column(column).drop_nulls()
    return not values.str.contains(r"^\s*[-+]?[0-9.eE+–-]*\s*$").all()


def to_html(df: pl.DataFrame, percent_columns: Sequence[str] | None = None) -> str:
    """An HTML ``<table>``; accuracy-like float columns as percent with one decimal."""
    cols = df.columns
    pct = {c: _is_percent(df, c, percent_columns) for c in cols}
    head = "".join(f"<th title='{html.escape(c)}'>{html.escape(human(c))}{' (%)' if pct[c] else ''}</th>"
                   for c in cols)
    text = {c: " class='l'" if _is_text(df, c) else "" for c in cols}  # text left, numbers right
    body = "".join(
        "<tr>"
        + "".join(
            f"<td{text[c]}>{html.escape(_cell(v, pct[c]))}</td>" for v, c in zip(row, cols, strict=True)
        )
        + "</tr>"
        for row in df.iter_rows()
    )
    return f'<table class="data"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
