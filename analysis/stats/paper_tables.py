"""Paper-style tables as polars DataFrames (written out as HTML / Markdown by :mod:`analysis.render.tables`).

The main table follows the paper's tables: per panel value (architecture) the best combination
(argmax of the epoch-wise mean validation accuracy) with min / mean / max over seeds of training
and validation accuracy (each maximised over training), and the case accuracies when present.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from analysis.stats.order import in_paper_order
from analysis.stats.rgb import CASES, Mode, best_config
from search_spaces.axes import show_value

_SHORT = {"train_accuracy": "train", "val_accuracy": "val"}


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
        rgb: metric -> epoch-wise RGB frame (:func:`analysis.stats.rgb.epochwise_rgb`, collected), e.g.
            ``{"train_accuracy": ..., "val_accuracy": ...}``.
        panel: the panel column(s), e.g. ``"architecture"``.
        by: the configuration columns of the RGB frames.
        select_metric: the metric whose G chooses the best combination.
        case: split -> case RGB frame (:func:`analysis.stats.rgb.case_rgb`), e.g. ``{"val": ...}``.

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
        [pl.lit(f"{c}=") + pl.col(c).map_elements(show_value, return_dtype=pl.String)
         for c in table_by], separator=", ").alias("_x")
    ordered = best.sort(list(table_by)).with_columns(label)
    columns = ordered.get_column("_x").unique(maintain_order=True).to_list()
    wide = ordered.pivot(on="_x", index=list(keys), values="g")
    return in_paper_order(wide, keys).select(*keys, *columns)


