"""Two studies (or a study and published results) side by side: the same statistics, and their difference.

Each side is a LazyFrame in the results schema (``docs/results.md``; :func:`analysis.data.reference.load_reference`
maps published results onto it). Per side and metric, :func:`side_summary` gives per panel value
(architecture) the best G of the paper's RGB statistic (epoch-wise mean over seeds, maximised over
training) with where it was found, and the **robustness share**: the fraction of the panel's
configurations whose G reaches ``threshold``. :func:`compare_sides` joins the two sides and adds the
differences ``A - B``. By default both sides are first restricted to their **common grid** (the panel,
x and y values both ran), so a smoke study is compared with the same cells of a published grid.

Pure functions (``LazyFrame -> DataFrame``); :mod:`analysis.render.comparison` shows the result, the CLI writes files.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analysis.stats.order import order_panels
from analysis.stats.region import approx_in
from analysis.stats.rgb import best_config, epochwise_rgb
from search_spaces.axes import show_value
from search_spaces.cells import same_value

#: Default threshold of the robustness share: G (mean accuracy over seeds) of at least 50%.
DEFAULT_THRESHOLD: float = 0.5

COMPARISON_COLUMNS: tuple[str, ...] = (
    "metric",
    "a_best_g",
    "a_at",
    "b_best_g",
    "b_at",
    "diff_best_g",
    "a_robust_share",
    "b_robust_share",
    "diff_robust_share",
    "a_n_configs",
    "b_n_configs",
)


def without_failed(lf: pl.LazyFrame) -> pl.LazyFrame:
    """The rows of trials that did not fail (all rows where there is no status column)."""
    return lf.filter(pl.col("status") != "failed") if "status" in lf.collect_schema().names() else lf


def common_types(a: pl.LazyFrame, b: pl.LazyFrame, keys: Sequence[str]) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Key columns that are float on either side become Float64 on both (an Int64 d_model joins a Float64 one)."""
    sa, sb = a.collect_schema(), b.collect_schema()
    floats = [k for k in keys if sa[k].is_float() or sb[k].is_float()]
    cast = [pl.col(k).cast(pl.Float64) for k in floats]
    return (a.with_columns(cast), b.with_columns(cast)) if cast else (a, b)


def common_values(a: Sequence[object], b: Sequence[object]) -> list[object]:
    """The values of ``a`` that ``b`` also has (floats to a relative 1e-6), in ``a``'s sorted order."""
    return sorted({v for v in a if any(same_value(v, w) for w in b)}, key=lambda v: (str(type(v)), v))


def common_grid(a: pl.LazyFrame, b: pl.LazyFrame, axes: Sequence[str]) -> dict[str, list[object]]:
    """Per axis column, the values both sides ran.

    Raises:
        ValueError: naming the axis when the two sides share none of its values.
    """
    out: dict[str, list[object]] = {}
    va, vb = pl.collect_all(
        [lf.select(pl.struct(*(pl.col(c).unique().implode() for c in axes))) for lf in (a, b)]
    )
    for column in axes:
        values_a = va.item()[column]
        values_b = vb.item()[column]
        common = common_values(values_a, values_b)
        if not common:
            raise ValueError(
                f"the two sides share no {column} value (A: {sorted(values_a)}, B: {sorted(values_b)}); "
                "compare over each side's own grid instead (common=False / --all-configs)"
            )
        out[column] = common
    return out


def restrict(lf: pl.LazyFrame, grid: dict[str, list[object]]) -> pl.LazyFrame:
    """``lf`` restricted to the rows whose axis values are in ``grid`` (from :func:`common_grid`)."""
    return lf.filter(*(approx_in(c, v) for c, v in grid.items()))


def robust_share(rgb: pl.LazyFrame, panel: str, threshold: float = DEFAULT_THRESHOLD) -> pl.LazyFrame:
    """Per panel value: ``n_configs`` and ``robust_share``, the fraction of configurations with G >= ``threshold``.

    A configuration without a G (every seed diverged with NaN) counts as not reaching it.
    """
    return (
        rgb.group_by(panel)
        .agg(
            pl.len().alias("n_configs"),
            (pl.col("g").fill_null(float("-inf")) >= threshold).mean().alias("robust_share"),
        )
        .sort(panel)
    )


def side_summary(
    lf: pl.LazyFrame,
    *,
    panel: str,
    x: str,
    y: str,
    metrics: Sequence[str],
    threshold: float = DEFAULT_THRESHOLD,
) -> pl.DataFrame:
    """Per metric and panel value: best G, where (``at``: ``x=..., y=...``), robustness share, grid size.

    Columns: ``metric, {panel}, best_g, at, robust_share, n_configs``. Failed rows are left out.
    """
    by = [panel, x, y]
    lf = without_failed(lf)
    frames = []
    for metric in metrics:
        rgb = epochwise_rgb(lf, metric, by).collect()
        best = best_config(rgb.lazy(), panel).collect()
        share = robust_share(rgb.lazy(), panel, threshold).collect()
        at = pl.Series(
            "at",
            [f"{x}={show_value(r[x])}, {y}={show_value(r[y])}" for r in best.iter_rows(named=True)],
            dtype=pl.String,
        )
        frames.append(
            share.join(best.select(panel, pl.col("g").alias("best_g")).with_columns(at), on=panel, how="left")
            .with_columns(pl.lit(metric).alias("metric"))
            .select("metric", panel, "best_g", "at", "robust_share", "n_configs")
        )
    return pl.concat(frames) if frames else pl.DataFrame()


def compare_sides(
    a: pl.LazyFrame,
    b: pl.LazyFrame,
    *,
    panel: str = "architecture",
    x: str = "d_model",
    y: str = "learning_rate",
    metrics: Sequence[str] = ("val_accuracy",),
    threshold: float = DEFAULT_THRESHOLD,
    common: bool = True,
) -> pl.DataFrame:
    """The statistics of :func:`side_summary` for both sides, per (metric, panel value), and A - B.

    Args:
        a, b: the two sides in the results schema.
        panel, x, y: the panel column (one row per value) and the grid axes.
        metrics: accuracy metrics both sides have.
        threshold: G a configuration must reach to count as robust.
        common: restrict both sides to the panel / x / y values both ran (default); otherwise each
            side's whole grid is used.

    Returns:
        ``metric, {panel}, a_best_g, a_at, b_best_g, b_at, diff_best_g, a_robust_share,
        b_robust_share, diff_robust_share, a_n_configs, b_n_configs``; values are fractions, the
        differences are A - B (null where a side lacks the panel value). Rows in the paper's panel order.
    """
    missing = {
        side: [c for c in (panel, x, y, *metrics) if c not in lf.collect_schema().names()]
        for side, lf in (("A", a), ("B", b))
    }
    missing = {k: v for k, v in missing.items() if v}
    if missing:
        raise ValueError(f"columns missing: {missing}")
    a, b = common_types(a, b, [panel, x, y])
    if common:
        grid = common_grid(a, b, [panel, x, y])
        a, b = restrict(a, grid), restrict(b, grid)
    sa = side_summary(a, panel=panel, x=x, y=y, metrics=metrics, threshold=threshold)
    sb = side_summary(b, panel=panel, x=x, y=y, metrics=metrics, threshold=threshold)
    stats = ["best_g", "at", "robust_share", "n_configs"]
    out = sa.rename({c: f"a_{c}" for c in stats}).join(
        sb.rename({c: f"b_{c}" for c in stats}), on=["metric", panel], how="full", coalesce=True
    )
    out = out.with_columns(
        (pl.col("a_best_g") - pl.col("b_best_g")).alias("diff_best_g"),
        (pl.col("a_robust_share") - pl.col("b_robust_share")).alias("diff_robust_share"),
    )
    order = {v: i for i, v in enumerate(order_panels(out.get_column(panel).to_list()))}
    metric_order = {m: i for i, m in enumerate(metrics)}
    return (
        out.with_columns(
            pl.col(panel).replace_strict(order, return_dtype=pl.Int64).alias("_p"),
            pl.col("metric").replace_strict(metric_order, return_dtype=pl.Int64).alias("_m"),
        )
        .sort("_m", "_p")
        .select("metric", panel, *(c for c in COMPARISON_COLUMNS if c != "metric"))
    )


