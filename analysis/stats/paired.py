"""Two runs of one grid, cell by cell: the paired differences of their G per panel value.

`study compare` prints them below its table (docs/cli.md). Cells are matched as in :mod:`analysis.stats.compare`
(floats to a relative 1e-6). Pure functions: ``LazyFrame -> DataFrame -> str``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import polars as pl
from scipy import stats

from analysis.stats.compare import common_types, without_failed
from analysis.stats.order import order_panels
from analysis.stats.rgb import epochwise_rgb
from search_spaces.cells import REL_TOL, same_value


def paired_differences(
    a: pl.LazyFrame, b: pl.LazyFrame, *, panel: str, x: str, y: str, metric: str
) -> pl.DataFrame:
    """Per panel value, G of A minus G of B configuration by configuration: the (x, y) cells both ran.

    For two runs of one grid that should agree up to random streams (CPU vs GPU, two torch versions), the
    best-G and robustness columns can hide a shift spread over the grid. Cells are matched as everywhere in
    this module (floats to a relative 1e-6). Columns: ``n`` cells with a G on both sides, ``mean_diff`` of
    G_A - G_B over them with its 95% t-interval (``ci_low``, ``ci_high``; null below 2 cells), an exact
    two-sided sign test (``n_up``, ``n_down``: cells where A is higher / lower; ``sign_p``), and what could
    not be paired: ``only_a`` / ``only_b``, cells with a G on one side only (the other did not run the cell,
    or every seed of it diverged there).
    """
    keys = [panel, x, y]
    a, b = common_types(a, b, keys)
    grid = {c: _canonical(a, b, c) for c in (x, y)}

    def cells(lf: pl.LazyFrame) -> pl.LazyFrame:
        lf = without_failed(lf).with_columns(_snap(c, grid[c]) for c in (x, y))
        return epochwise_rgb(lf, metric, keys).select(*keys, "g")

    ga, gb = pl.collect_all([cells(a), cells(b)])
    joined = ga.join(gb, on=keys, how="full", coalesce=True, suffix="_b")
    rows = []
    for value in order_panels(joined.get_column(panel).unique().to_list()):
        part = joined.filter(pl.col(panel) == value)
        both = part.drop_nulls(["g", "g_b"])
        diff = (both.get_column("g") - both.get_column("g_b")).to_numpy()
        up, down = int((diff > 0).sum()), int((diff < 0).sum())
        low, high = t_interval(diff)
        rows.append({panel: value, "n": diff.size, "mean_diff": float(diff.mean()) if diff.size else None,
                     "ci_low": low, "ci_high": high, "n_up": up, "n_down": down, "sign_p": sign_test(up, down),
                     "only_a": part.filter(pl.col("g").is_not_null() & pl.col("g_b").is_null()).height,
                     "only_b": part.filter(pl.col("g").is_null() & pl.col("g_b").is_not_null()).height})
    return pl.DataFrame(rows)


def _canonical(a: pl.LazyFrame, b: pl.LazyFrame, column: str) -> list[object]:
    """One value per cell of ``column`` over both sides: A's values, then B's that none of A's is close to."""
    va, vb = (lf.select(pl.col(column).unique().sort()).collect().to_series().to_list() for lf in (a, b))
    return va + [v for v in vb if not any(same_value(v, w) for w in va)]


def _snap(column: str, values: Sequence[object]) -> pl.Expr:
    """``column`` replaced by the value of ``values`` it is close to (as :func:`search_spaces.cells.same_value`
    decides), so both sides key their cells alike."""
    floats = [float(v) for v in values if isinstance(v, float)]
    if not floats:
        return pl.col(column)
    col = pl.col(column)
    return pl.coalesce([pl.when((col - v).abs() <= REL_TOL * pl.max_horizontal(col.abs(), pl.lit(abs(v))))
                        .then(pl.lit(v)) for v in floats]).alias(column)  # symmetric, as same_value


def t_quantile_95(df: int) -> float:
    """The two-sided 95% quantile of Student's t with ``df`` >= 1 degrees of freedom (scipy.stats)."""
    return float(stats.t.ppf(0.975, df))


def t_interval(diff: np.ndarray) -> tuple[float | None, float | None]:
    """95% t-interval of the mean of ``diff`` (None, None) below 2 values."""
    n = diff.size
    if n < 2:
        return None, None
    half = t_quantile_95(n - 1) * float(diff.std(ddof=1)) / math.sqrt(n)
    mean = float(diff.mean())
    return mean - half, mean + half


def sign_test(up: int, down: int) -> float:
    """Exact two-sided sign test (scipy.stats.binomtest at 1/2): P(a split at least as uneven as up/down | no
    difference); ties left out."""
    n = up + down
    return 1.0 if n == 0 else float(stats.binomtest(up, n, 0.5).pvalue)


def format_paired(df: pl.DataFrame, panel: str, metric: str) -> str:
    """One line per panel value of :func:`paired_differences`, in percentage points."""
    lines = [f"paired over the cells both ran ({metric} G, A - B in pp, mean and 95% t-interval; sign test "
             "over the cells that differ):"]
    if df.is_empty():
        return lines[0] + " no cells in common"
    for r in df.iter_rows(named=True):
        if r["n"] == 0:
            text = "no cell with a G on both sides"
        else:
            interval = "no interval from 1 cell" if r["ci_low"] is None else \
                f"{100 * r['ci_low']:+.1f} .. {100 * r['ci_high']:+.1f}"
            text = (f"{100 * r['mean_diff']:+.1f} ({interval}) over {r['n']} cells; A higher in {r['n_up']}, "
                    f"lower in {r['n_down']}, sign test p = {r['sign_p']:.2g}")
        unpaired = [f"{r[k]} with a G in {side} only" for k, side in (("only_a", "A"), ("only_b", "B")) if r[k]]
        lines.append(f"  {r[panel]}: {text}" + (f"; unpaired: {', '.join(unpaired)}" if unpaired else ""))
    return "\n".join(lines)
