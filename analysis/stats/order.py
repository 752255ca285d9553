"""The order of panels and the spelling of values: what every table, figure and summary line shares.

Panels (architectures, mixers) follow the paper's order; hyperparameter values are written as tick labels
(learning rates as ``3.0e-01``). Statistics sort and label with them; drawing reuses them.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

#: Panel order of the paper's figures; unknown names follow, sorted.
PAPER_ORDER: tuple[str, ...] = ("BERT", "MTE", "NAP", "NON", "sum", "max")


def order_panels(values: Sequence[object]) -> list[object]:
    """Panel values in the paper's order (BERT, MTE, NAP, NON, sum, max), then the rest sorted."""
    unique = list(dict.fromkeys(values))
    known = [v for v in PAPER_ORDER if v in unique]
    rest = sorted((v for v in unique if v not in PAPER_ORDER), key=lambda v: (str(type(v)), v))
    return [*known, *rest]


def in_paper_order(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """``frame`` sorted by its panel column (``keys[0]``) in the paper's order, then by the other ``keys``."""
    order = {v: i for i, v in enumerate(order_panels(frame.get_column(keys[0]).to_list()))}
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
