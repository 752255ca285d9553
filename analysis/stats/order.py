"""The order of panels and the spelling of values: what every table, figure and summary line shares.

Panels follow the order the study declares for its panel axis (study.json: Fig. 9's ablation walks BERT,
- warm up, - grad. clip, + normalize, + GELU), then the paper's order of architectures, then the rest
sorted; hyperparameter values are written as tick labels
(learning rates as ``3.0e-01``). Statistics sort and label with them; drawing reuses them.
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


def format_value(value: object, column: str = "") -> str:
    """A hyperparameter value as a tick label: ints plain, learning rates like ``3.0e-01``."""
    if isinstance(value, float):
        if "learning_rate" in column or column in ("lr", "l2_weight") or (value != 0 and abs(value) < 0.01):
            return f"{value:.1e}"
        if value.is_integer():
            return str(int(value))
        return f"{value:.3g}"
    return str(value)
