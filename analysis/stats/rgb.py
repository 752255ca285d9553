"""The statistics of the published figures, as pure ``LazyFrame -> LazyFrame`` functions.

Input rows follow ``docs/results.md``: one per (trial, seed, evaluation step). ``by`` names the
columns of one hyperparameter configuration, e.g. ``["architecture", "d_model", "learning_rate"]``.

Two orders of "best over training" and "over seeds" exist and give different numbers:

* :func:`epochwise_rgb` - the paper's RGB pixel: min / mean / max over seeds *per evaluation
  point*, then each maximised over training (optimal early stopping of the whole group). On the
  published BERT cases results this gives G = 97.2% at d=64, lr=0.00243, the number in the paper.
* :func:`seed_best_stats` - each seed's best over training first, then min / mean / max over seeds
  (each seed stopped at its own best point; 97.7% on the same data).

``mode="min"`` (losses) swaps the sense of "best": ``r`` is then the worst seed (max loss), ``b``
the best seed (min loss), and the best over training is the minimum. NaN values (diverged losses)
count as the worst possible value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import polars as pl

from search_spaces.finding import direction

Mode = Literal["max", "min"]
CASES: tuple[str, str, str] = ("argmin", "first", "argmax")


def _check_mode(mode: str) -> None:
    if mode not in ("max", "min"):
        raise ValueError(f"mode must be 'max' or 'min', got {mode!r}")


def _clean(metric: str, mode: Mode) -> pl.Expr:
    """``metric`` with NaN replaced by the worst value for ``mode`` (so it never wins)."""
    worst = float("-inf") if mode == "max" else float("inf")
    return pl.col(metric).cast(pl.Float64).fill_nan(worst)


def _finite_or_null(column: str) -> pl.Expr:
    """``column`` with NaN and +-inf (no finite value to report) as null."""
    return pl.when(pl.col(column).is_finite()).then(pl.col(column)).otherwise(None).alias(column)


def _best(expr: pl.Expr, mode: Mode) -> pl.Expr:
    return expr.max() if mode == "max" else expr.min()


def _worst(expr: pl.Expr, mode: Mode) -> pl.Expr:
    return expr.min() if mode == "max" else expr.max()


def step_stats(
    lf: pl.LazyFrame, metrics: Sequence[str], by: Sequence[str], mode: Mode = "max"
) -> pl.LazyFrame:
    """Per configuration and step: worst / mean / best over seeds of each metric.

    Output columns: ``*by, step, n_seeds`` and ``{metric}__r``, ``{metric}__g``, ``{metric}__b`` for
    each metric (worst seed, mean, best seed; for ``mode="max"`` that is min, mean, max).
    Collect this once and derive RGB grids and learning curves from it without re-scanning.
    """
    _check_mode(mode)
    aggs: list[pl.Expr] = [pl.col("seed").n_unique().alias("n_seeds")]
    for m in metrics:
        v = _clean(m, mode)
        aggs += [_worst(v, mode).alias(f"{m}__r"), v.mean().alias(f"{m}__g"), _best(v, mode).alias(f"{m}__b")]
    return lf.group_by([*by, "step"]).agg(aggs).sort([*by, "step"])


def _rgb_over_training(steps: pl.LazyFrame, columns: Sequence[str], by: Sequence[str],
                       mode: Mode) -> pl.LazyFrame:
    """r, g, b = the best over training of three per-step columns of :func:`step_stats`."""
    return (
        steps.group_by(list(by))
        .agg(
            *(_best(pl.col(col), mode).alias(c) for col, c in zip(columns, "rgb", strict=True)),
            pl.col("n_seeds").max(),
        )
        .with_columns(_finite_or_null(c) for c in "rgb")
        .sort(list(by))
    )


def rgb_from_step_stats(
    steps: pl.LazyFrame, metric: str, by: Sequence[str], mode: Mode = "max"
) -> pl.LazyFrame:
    """The epoch-wise RGB statistic from the output of :func:`step_stats` (best over training)."""
    _check_mode(mode)
    return _rgb_over_training(steps, [f"{metric}__{c}" for c in "rgb"], by, mode)


def epochwise_rgb(lf: pl.LazyFrame, metric: str, by: Sequence[str], mode: Mode = "max") -> pl.LazyFrame:
    """The paper's RGB pixel per configuration: seed statistics per step, then best over training.

    ``r`` = max over steps of the min over seeds, ``g`` = max over steps of the mean over seeds,
    ``b`` = max over steps of the max over seeds (``mode="max"``). Also ``n_seeds``.
    """
    return rgb_from_step_stats(step_stats(lf, [metric], by, mode), metric, by, mode)


def worst_value(metric: str) -> float:
    """What a cell (or a trial's learning rate) without a finite G counts as: the metric's worst (accuracy 0, a loss
    +inf), in the findings and for the sampler alike."""
    return math.inf if direction(metric) == "min" else 0.0


def objective(rows: Sequence[Mapping[str, Any]], metric: str, mode: str) -> float:
    """A trial's score for Ray Tune and the Optuna sampler: the paper's G of each learning rate the trial trained
    (:func:`epochwise_rgb`, the same NaN rule: a diverged seed is the worst value, so a step where one diverged never
    counts as best), the best of them. A learning rate without a finite G (a seed diverged before every evaluation)
    scores the metric's worst, as a cell without one counts in the findings
    (:func:`worst_value`: accuracy 0, a loss +inf); NaN only without rows."""
    _check_mode(mode)
    if not rows:
        return math.nan
    values = [row.get(metric) for row in rows]
    frame = pl.DataFrame({"learning_rate": [row.get("learning_rate") for row in rows],
                          "seed": [row.get("seed") for row in rows], "step": [int(row["step"]) for row in rows],
                          metric: [None if v is None else float(v) for v in values]},
                         schema_overrides={metric: pl.Float64}, strict=False)
    g = epochwise_rgb(frame.lazy(), metric, ["learning_rate"], "max" if mode == "max" else "min").collect() \
        .get_column("g")
    g = g.fill_null(worst_value(metric))
    return float(g.max() if mode == "max" else g.min())  # type: ignore[arg-type]


def case_rgb_from_step_stats(steps: pl.LazyFrame, split: str, by: Sequence[str]) -> pl.LazyFrame:
    """:func:`case_rgb` from the output of :func:`step_stats` (which must include the three case columns)."""
    metrics = [f"{split}_{case}_accuracy" for case in CASES]
    return _rgb_over_training(steps, [f"{m}__g" for m in metrics], by, "max")


def case_rgb(lf: pl.LazyFrame, split: str, by: Sequence[str]) -> pl.LazyFrame:
    """Case RGB pixel: ``r``/``g``/``b`` = argmin/first/argmax mean case accuracy, max over training.

    Uses the columns ``{split}_{argmin,first,argmax}_accuracy`` (``split`` is ``"train"`` or ``"val"``).
    """
    metrics = [f"{split}_{case}_accuracy" for case in CASES]
    return case_rgb_from_step_stats(step_stats(lf, metrics, by, "max"), split, by)


def best_step(steps: pl.LazyFrame, metric: str, by: Sequence[str], mode: Mode = "max") -> pl.LazyFrame:
    """Per configuration: the first evaluation step at which G (the mean over seeds) of ``metric`` is best.

    ``steps`` is the output of :func:`step_stats`; output columns ``*by, best_step``.
    """
    _check_mode(mode)
    g = pl.col(f"{metric}__g")
    pick = g.arg_max() if mode == "max" else g.arg_min()
    return steps.sort([*by, "step"]).group_by(list(by)).agg(pl.col("step").get(pick).alias("best_step"))


def seed_best(
    lf: pl.LazyFrame, metrics: Sequence[str], by: Sequence[str], mode: Mode = "max"
) -> pl.LazyFrame:
    """Per configuration and seed: each metric's best over training and whether the seed diverged.

    Output columns: ``*by, seed, {metric}`` (best over steps) ``, diverged`` (bool).
    """
    _check_mode(mode)
    return (
        lf.group_by([*by, "seed"])
        .agg(
            *(_best(_clean(m, mode), mode).alias(m) for m in metrics),
            (pl.col("status") == "diverged").any().alias("diverged"),
        )
        .sort([*by, "seed"])
    )


def seed_best_stats_from_seed_best(
    per_seed: pl.LazyFrame, metric: str, by: Sequence[str], mode: Mode = "max"
) -> pl.LazyFrame:
    """:func:`seed_best_stats` from the output of :func:`seed_best`."""
    _check_mode(mode)
    v = pl.col(metric)
    return (
        per_seed.group_by(list(by))
        .agg(
            _worst(v, mode).alias("best_r"),
            v.mean().alias("best_mean"),
            _best(v, mode).alias("best_b"),
            pl.col("seed").n_unique().alias("n_seeds"),
            pl.col("diverged").sum().cast(pl.Int64).alias("n_diverged"),
        )
        .with_columns(
            pl.col("best_r").alias("best_min" if mode == "max" else "best_max"),
            pl.col("best_b").alias("best_max" if mode == "max" else "best_min"),
        )
        .select(*by, "best_min", "best_mean", "best_max", "n_seeds", "n_diverged")
        .with_columns(_finite_or_null(c) for c in ("best_min", "best_mean", "best_max"))
        .sort(list(by))
    )


def seed_best_stats(lf: pl.LazyFrame, metric: str, by: Sequence[str], mode: Mode = "max") -> pl.LazyFrame:
    """Per configuration: min / mean / max over seeds of each seed's best value over training.

    Output columns: ``*by, best_min, best_mean, best_max, n_seeds, n_diverged`` (``n_diverged``
    counts seeds with a row of status ``diverged``). ``best_min``/``best_max`` are the plain min/max
    of the per-seed best values, whatever ``mode`` is.
    """
    return seed_best_stats_from_seed_best(seed_best(lf, [metric], by, mode), metric, by, mode)


def best_config(
    rgb_lf: pl.LazyFrame, panel: str | Sequence[str], value: str = "g", mode: Mode = "max"
) -> pl.LazyFrame:
    """Per panel value, the row (configuration) with the best ``value`` (the paper's cross).

    Ties go to the first row in the order of the input's remaining columns (deterministic).
    """
    _check_mode(mode)
    panels = [panel] if isinstance(panel, str) else list(panel)
    others = [c for c in rgb_lf.collect_schema().names() if c not in (*panels, value)]
    return (
        rgb_lf.filter(pl.col(value).is_not_null())
        .sort([value, *others], descending=[mode == "max", *([False] * len(others))], nulls_last=True)
        .group_by(panels, maintain_order=True)
        .first()
        .sort(panels)
    )


def robustness_curve(
    rgb_lf: pl.LazyFrame, panel: str | Sequence[str], value: str = "g", mode: Mode = "max"
) -> pl.LazyFrame:
    """Per panel value, every configuration's ``value`` sorted best first, with ``rank`` 1..n.

    Also ``fraction`` = rank / n (for comparing panels with different grid sizes).
    """
    _check_mode(mode)
    panels = [panel] if isinstance(panel, str) else list(panel)
    return (
        rgb_lf.filter(pl.col(value).is_not_null())
        .sort(value, descending=mode == "max")
        .with_columns(
            pl.int_range(1, pl.len() + 1).over(panels).alias("rank"),
        )
        .with_columns((pl.col("rank") / pl.len().over(panels)).alias("fraction"))
        .sort([*panels, "rank"])
    )


def learning_curves(lf: pl.LazyFrame, metric: str, by: Sequence[str], mode: Mode = "max") -> pl.LazyFrame:
    """Per configuration and step: ``mean``, ``min`` and ``max`` of ``metric`` over seeds, ``n_seeds``."""
    v = pl.col(metric).cast(pl.Float64).fill_nan(None)
    _check_mode(mode)
    return (
        lf.group_by([*by, "step"])
        .agg(
            v.mean().alias("mean"),
            v.min().alias("min"),
            v.max().alias("max"),
            pl.col("seed").n_unique().alias("n_seeds"),
        )
        .sort([*by, "step"])
    )
