"""Paper-style tables (as polars DataFrames) and their HTML / Markdown renderings.

The main table follows the paper's tables: per panel value (architecture) the best combination
(argmax of the epoch-wise mean validation accuracy) with min / mean / max over seeds of training
and validation accuracy (each maximised over training), and the case accuracies when present.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import polars as pl

from analysis.plots import format_value, in_paper_order
from analysis.stats import CASES, Mode, best_config

_SHORT = {"train_accuracy": "train", "val_accuracy": "val"}


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


def paper_table(
    rgb: Mapping[str, pl.DataFrame],
    panel: str | Sequence[str],
    by: Sequence[str],
    *,
    select_metric: str = "val_accuracy",
    case: Mapping[str, pl.DataFrame] | None = None,
    mode: Mode = "max",
) -> pl.DataFrame:
    """Per panel value, the best combination and its statistics.

    Args:
        rgb: metric -> epoch-wise RGB frame (:func:`analysis.stats.epochwise_rgb`, collected), e.g.
            ``{"train_accuracy": ..., "val_accuracy": ...}``.
        panel: the panel column(s), e.g. ``"architecture"``.
        by: the configuration columns of the RGB frames.
        select_metric: the metric whose G chooses the best combination.
        case: split -> case RGB frame (:func:`analysis.stats.case_rgb`), e.g. ``{"val": ...}``.

    Returns:
        ``*by`` of the best combination, then ``{train,val}_{min,mean,max}`` for each metric and
        ``{split}_{argmin,first,argmax}`` (mean over seeds) for each case split.
    """
    panels = [panel] if isinstance(panel, str) else list(panel)
    table = best_config(rgb[select_metric].lazy(), panels, mode=mode).collect().select(list(by))
    for metric, frame in rgb.items():
        short = _SHORT.get(metric, metric)
        stats = frame.select(
            *by,
            pl.col("r").alias(f"{short}_min"),
            pl.col("g").alias(f"{short}_mean"),
            pl.col("b").alias(f"{short}_max"),
        )
        table = table.join(stats, on=list(by), how="left", nulls_equal=True)
    for split, frame in (case or {}).items():
        stats = frame.select(
            *by, *(pl.col(c).alias(f"{split}_{name}") for c, name in zip("rgb", CASES, strict=True))
        )
        table = table.join(stats, on=list(by), how="left", nulls_equal=True)
    return table


def per_x_table(rgb: pl.DataFrame, keys: Sequence[str], table_by: Sequence[str], *, mode: Mode = "max") -> pl.DataFrame:
    """The paper's table per ``table_by`` (e.g. Table 5: per vocabulary size), one row per value of ``keys``.

    Each cell is the best G (mean over seeds, maximised over training) over the remaining axes (e.g. the
    learning rate) for that panel value and ``table_by`` value. Columns: ``*keys`` then one column per
    ``table_by`` value, named ``"<column>=<value>"`` in ascending order of the values.
    """
    best = best_config(rgb.lazy(), [*keys, *table_by], mode=mode).collect()
    label = pl.concat_str(
        [pl.lit(f"{c}=") + pl.col(c).map_elements(lambda v, c=c: format_value(v, c), return_dtype=pl.String)
         for c in table_by], separator=", ").alias("_x")
    ordered = best.sort(list(table_by)).with_columns(label)
    columns = ordered.get_column("_x").unique(maintain_order=True).to_list()
    wide = ordered.pivot(on="_x", index=list(keys), values="g")
    return in_paper_order(wide, keys).select(*keys, *columns)


def _cell(value: object, column: str, percent: bool) -> str:
    if value is None:
        return "–"
    if percent and isinstance(value, float):
        return f"{100 * value:.1f}"
    return format_value(value, column)


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
        lines.append("| " + " | ".join(_cell(v, c, pct[c]) for v, c in zip(row, cols, strict=True)) + " |")
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
            f"<td{text[c]}>{html.escape(_cell(v, c, pct[c]))}</td>" for v, c in zip(row, cols, strict=True)
        )
        + "</tr>"
        for row in df.iter_rows()
    )
    return f'<table class="data"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
