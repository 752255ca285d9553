"""The order of panels: what every table, figure and summary line shares.

Panels follow the order the study declares for its panel axis (study.json: Fig. 9's ablation walks BERT,
- warm up, - grad. clip, + normalize, + GELU), then the paper's order of architectures, then the rest
sorted. Statistics sort with it; drawing reuses it. Values are spelt by :func:`search_spaces.axes.show_value`.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

#: Panel order of the paper's figures; unknown names follow, sorted.
PAPER_ORDER: tuple[str, ...] = ("BERT", "MTE", "NAP", "NON", "sum", "max")


def order_panels(values: Sequence[object], declared: Sequence[object] = ()) -> list[object]:
    """Panel values in the ``declared`` order (the study's panel axis), then the paper's (BERT, MTE, NAP, NON,
    sum, max), then the rest sorted."""
    unique = list(dict.fromkeys(values))
    first = [v for v in dict.fromkeys(declared) if v in unique]
    known = [v for v in PAPER_ORDER if v in unique and v not in first]
    rest = sorted((v for v in unique if v not in first and v not in known), key=lambda v: (str(type(v)), v))
    return [*first, *known, *rest]


def in_paper_order(frame: pl.DataFrame, keys: Sequence[str], declared: Sequence[object] = ()) -> pl.DataFrame:
    """``frame`` sorted by its panel column (``keys[0]``) as :func:`order_panels`, then by the other ``keys``."""
    order = {v: i for i, v in enumerate(order_panels(frame.get_column(keys[0]).to_list(), declared))}
    return frame.sort(pl.col(keys[0]).replace_strict(order, return_dtype=pl.Int64), *keys[1:])

