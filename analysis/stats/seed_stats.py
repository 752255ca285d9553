"""What a cell's seeds say beyond their mean: the spread of their values at the cell's best evaluations (the noise
of G), how far G lies above those evaluations (what picking the best evaluation may add: its lift), and the mean
absolute difference between two seeds' bests with its jackknife variance (the spread statistic's). Pure functions of
the per-seed frames :func:`analysis.stats.training_stats.training_stats` collects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

#: The evaluations a cell's seed noise is pooled over: its best ones by G (the single best is picked where the seeds
#: happen to agree most, so its spread alone reads low).
NOISE_EVALUATIONS = 3


def seed_at_best(seeds: pl.LazyFrame, picks: Sequence[tuple[pl.DataFrame, str, pl.Expr, str]],
                 by: Sequence[str]) -> pl.LazyFrame:
    """Per configuration, metric, and each of the cell's :data:`NOISE_EVALUATIONS` best evaluations by its G of that
    metric (``_rank`` 0 = the best), every seed's value there: columns ``*by, seed, metric, _rank, value``.

    ``picks``: (the :func:`~analysis.stats.rgb.step_stats` frame, the metric (a column of ``seeds``), its per-step G,
    ``"max"`` or ``"min"``)."""
    parts = []
    for steps, metric, g, mode in picks:
        order = steps.lazy().sort([*by, "step"]).group_by(list(by)).agg(
            pl.col("step").sort_by(g, descending=mode == "max", maintain_order=True).head(NOISE_EVALUATIONS))
        best = order.explode("step").with_columns(pl.int_range(pl.len()).over(list(by)).alias("_rank"))
        parts.append(seeds.join(best, on=[*by, "step"], how="inner", nulls_equal=True).select(
            *by, "seed", pl.lit(metric).alias("metric"), "_rank", pl.col(metric).cast(pl.Float64).alias("value")))
    empty = pl.LazyFrame(schema={"metric": pl.String, "_rank": pl.Int64, "value": pl.Float64})
    return pl.concat(parts) if parts else seeds.select(*by, "seed").head(0).join(empty, how="cross")


def seed_columns(per_seed: pl.DataFrame, at_best: pl.DataFrame | None, by: Sequence[str]) -> dict[str, pl.DataFrame]:
    """Per cell-table column (``sd``, ``lift``, ``gmd``, ``gmd_var``, ``seeds``) a frame of ``by``
    and one column per metric: the seed noise and lift from ``at_best`` (:func:`seed_at_best`; without it, the sd of
    the seeds' bests), the mean difference and its jackknife (of the cells of three seeds or more only), and every
    seed's value (a list, in seed order), from ``per_seed`` (each seed's best over training)."""
    out = dict(zip(("sd", "lift"), _noise(at_best, by), strict=True)) if at_best is not None else \
        {"sd": _per_cell(per_seed, by, lambda m: pl.col(m).std().fill_null(0.0))}
    return {**out, "gmd": _per_cell(per_seed, by, _mean_difference),
            "gmd_var": _per_cell(per_seed, by, _mean_difference_variance, least=3),
            "seeds": _per_cell(per_seed, by, lambda m: pl.col(m).sort_by("seed"))}


def _per_cell(per_seed: pl.DataFrame, by: Sequence[str], statistic: Callable[[str], pl.Expr],
              least: int = 1) -> pl.DataFrame:
    """Per configuration ``statistic`` of every measured column over its seeds (a non-finite value counts as 0);
    only the configurations of ``least`` seeds or more (the statistic is null below: the others are left out, not
    computed - the jackknife's query costs most of a replay's statistics, and two seeds have none)."""
    measured = [c for c in per_seed.columns if c not in (*by, "seed", "diverged")]
    if least > 1:
        per_seed = per_seed.filter(pl.len().over(list(by)) >= least)
    finite = [pl.when(pl.col(m).is_finite()).then(pl.col(m)).otherwise(0.0).alias(m) for m in measured]
    return per_seed.with_columns(finite).group_by(list(by)).agg(statistic(m).alias(m) for m in measured)


def _noise(at_best: pl.DataFrame, by: Sequence[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per configuration and metric (one column each): the seed standard deviation pooled over the cell's best
    evaluations (the root of the mean variance over seeds at each), and G's lift over them (how far G, the best of the
    evaluations' seed means, lies from their mean: what picking the best evaluation of noisy ones may add). A
    non-finite value counts as 0."""
    value = pl.when(pl.col("value").is_finite()).then(pl.col("value")).otherwise(0.0)
    per_evaluation = at_best.group_by([*by, "metric", "_rank"]).agg(value.var().alias("_v"), value.mean().alias("_m"))
    pooled = per_evaluation.group_by([*by, "metric"]).agg(
        pl.col("_v").mean().fill_null(0.0).sqrt().alias("sd"),
        (pl.col("_m").sort_by("_rank").first() - pl.col("_m").mean()).abs().alias("lift"))
    return (pooled.pivot("metric", index=list(by), values="sd"), pooled.pivot("metric", index=list(by), values="lift"))


def _mean_difference(column: str) -> pl.Expr:
    """Gini's mean difference over a cell's seeds, the mean of |x_i - x_j| over pairs: from the sorted values
    ``2 / (k (k - 1)) sum_i (2 i - k - 1) x_(i)``; null below two seeds."""
    k = pl.len().cast(pl.Float64)
    weights = 2 * pl.int_range(1, pl.len() + 1).cast(pl.Float64) - k - 1
    return pl.when(k >= 2).then((weights * pl.col(column).sort()).sum() * 2 / (k * (k - 1))).otherwise(None)


def _mean_difference_variance(column: str) -> pl.Expr:
    """The jackknife variance of Gini's mean difference over a cell's seeds (null below three seeds): leaving seed
    ``i`` out removes its differences ``r_i = (2 i - k) x_(i) - 2 C_i + T`` (``C`` the cumulative, ``T`` the total
    of the sorted values) from the pairs' sum."""
    k = pl.len().cast(pl.Float64)
    x = pl.col(column).sort()
    index = pl.int_range(1, pl.len() + 1).cast(pl.Float64)
    pairs = ((2 * index - k - 1) * x).sum()
    left_out = (pairs - ((2 * index - k) * x - 2 * x.cum_sum() + x.sum())) / ((k - 1) * (k - 2) / 2)
    return pl.when(k >= 3).then((k - 1) / k * ((left_out - left_out.mean()) ** 2).sum()).otherwise(None)
