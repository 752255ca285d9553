"""Per-cell data of the interactive grids: what hovering and clicking a pixel of a grid shows.

For each cell (one configuration of one facet) of a metric's RGB grid: R / G / B (worst seed, mean, best
seed, each maximised over training), the number of seeds and of diverged seeds, the evaluation step at
which G was best and, when the study is small enough to embed them, every seed's learning curve. Pure
data (dicts of numbers); :mod:`analysis.render.interactive` puts it on the page.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import polars as pl

#: Per-seed curves are embedded when the study has at most this many (row, metric) values; above it the
#: page would grow past a few MB, and hovering still shows every statistic.
MAX_EMBEDDED_VALUES: int = 400_000
#: Decimals kept of an accuracy in the page (0.01 percentage points).
DECIMALS: int = 4


def _num(v: Any) -> float | None:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return None
    return round(float(v), DECIMALS)


def seed_curves(lf: pl.LazyFrame, metrics: Sequence[str], by: Sequence[str], n_rows_hint: int) -> pl.DataFrame | None:
    """Every (configuration, seed, step) value of ``metrics`` (failed rows left out), or None when
    ``n_rows_hint * len(metrics)`` exceeds :data:`MAX_EMBEDDED_VALUES`."""
    if n_rows_hint * len(metrics) > MAX_EMBEDDED_VALUES:
        return None
    columns = lf.collect_schema().names()
    base = lf.filter(pl.col("status") != "failed") if "status" in columns else lf
    diverged = (pl.col("status") == "diverged") if "status" in columns else pl.lit(False)
    return (
        base.select(*by, "seed", "step", *metrics, diverged.alias("_diverged"))
        .sort([*by, "seed", "step"])
        .collect()
    )


def hover_table(rgb: pl.DataFrame, per_seed: pl.DataFrame, where: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """One row per configuration: ``*by, r, g, b, n_seeds, n_diverged, best_step`` of one metric, from its RGB
    frame, :func:`analysis.stats.rgb.seed_best` and its :func:`analysis.stats.rgb.best_step` frame (``where``)."""
    diverged = per_seed.group_by(list(by)).agg(pl.col("diverged").sum().cast(pl.Int64).alias("n_diverged"))
    return (rgb.join(diverged, on=list(by), how="left", nulls_equal=True)
            .join(where, on=list(by), how="left", nulls_equal=True))


#: A cell's configuration values, in the order of its ``by`` columns.
CellKey = tuple[Any, ...]


def _curves_by_cell(curves: pl.DataFrame | None, metric: str,
                    by: Sequence[str]) -> dict[CellKey, list[dict[str, Any]]]:
    """(configuration values) -> per-seed ``{"seed", "diverged", "steps", "values"}`` of ``metric``."""
    if curves is None:
        return {}
    out: dict[CellKey, list[dict[str, Any]]] = {}
    grouped = curves.group_by([*by, "seed"], maintain_order=True).agg(
        pl.col("step"), pl.col(metric), pl.col("_diverged").any())
    for row in grouped.iter_rows(named=True):
        key = tuple(row[c] for c in by)
        out.setdefault(key, []).append({
            "seed": int(row["seed"]), "diverged": bool(row["_diverged"]),
            "steps": [int(s) for s in row["step"]], "values": [_num(v) for v in row[metric]],
        })
    return out


def cell_data(cells: pl.DataFrame, curves: pl.DataFrame | None, metric: str,
              by: Sequence[str]) -> dict[CellKey, dict[str, Any]]:
    """(configuration values in ``by`` order) -> the numbers a hovered / clicked cell shows."""
    per_seed = _curves_by_cell(curves, metric, by)
    keys = zip(*(cells.get_column(c).to_list() for c in by), strict=True)
    values = zip(*(cells.get_column(c).to_list() for c in ("r", "g", "b", "n_seeds", "n_diverged", "best_step")),
                 strict=True)  # columns, not named rows: a report has tens of thousands of cells
    return {key: {"r": _num(r), "g": _num(g), "b": _num(b), "seeds": int(seeds), "diverged": int(diverged or 0),
                  "best_step": None if step is None else int(step), "curves": per_seed.get(key)}
            for key, (r, g, b, seeds, diverged, step) in zip(keys, values, strict=True)}
