"""Does a column of a leaderboard rank anything? The best entity against each other one, paired over the grid's cells.

A leaderboard column (one task of the atlas) shows a best G per mixer, which reads as a ranking even where every
mixer sits on the same plateau and the order is seed noise. :func:`separation` answers per column: take the entity
with the highest mean G over the column's cells (every size x learning rate the column ran), and compare it with each
other entity cell by cell: the paired differences of G (the other's minus the best's), their mean with a 95%
t-interval (:func:`analysis.stats.paired.t_interval`) and an exact sign test. The best is *separated* from an
entity when, over at least :data:`MIN_CELLS` cells, the interval lies wholly below 0 **and** the mean difference
exceeds both :data:`MIN_LEAD` and twice its seed noise (the standard error the seeds alone give the mean of the
differences, from the standard deviation over seeds of each seed's best in every cell: with few cells and coarse
accuracies the differences can agree by chance and make the t-interval narrow). A column **ranks** when the best
is separated from at least one other entity; otherwise it "does not rank at this scale".

A cell whose G is missing on one side (not run, or failed) is left out of that pair and counted; a cell where every
seed diverged counts as G = 0 (the leaderboard's rule: a diverged run scores 0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from analysis.stats.paired import sign_test, t_interval
from analysis.stats.rgb import epochwise_rgb, seed_best

DOES_NOT_RANK = "does not rank at this scale"
MIN_CELLS = 3  # fewer paired cells say nothing about how the differences spread
#: The smallest lead read as a ranking: 1 point of accuracy. Below it two mixers differ by one or two examples of the
#: few hundred each model is evaluated on, and a fixed evaluation set (CTL's 500 IID samples, the same for every
#: model) carries a sampling noise of its own (1.5 points at 13% accuracy) that its seeds share and so do not show:
#: on the atlas' cpu CTL column every mixer sits at chance (12.9-13.2%) in an order that seed noise alone calls
#: significant.
MIN_LEAD = 0.01


def separation(lf: pl.LazyFrame, *, entity: str, task: str | None, cells: Sequence[str],
               metric: str = "val_accuracy") -> pl.DataFrame:
    """Per (task, entity): the paired comparison with the task's best entity over the task's grid cells.

    Returns columns ``task`` (when given), ``entity``, ``best`` (the task's best entity), ``mean_g`` (the entity's
    mean G over its cells), ``n`` (cells paired with the best), ``mean_diff`` (entity minus best, <= 0 for the best's
    competitors), ``ci_low``, ``ci_high`` (95% t-interval; null below 2 cells), ``sign_p``, ``separated`` (the
    interval lies below 0), ``unpaired`` (cells run by one of the two only) and, per task, ``ranks``.
    """
    columns = lf.collect_schema().names()
    if "status" in columns:
        lf = lf.filter(pl.col("status") != "failed")
    keys = [entity, *([task] if task else [])]
    g = epochwise_rgb(lf, metric, [*keys, *cells]).select(*keys, *cells, "g").collect()
    g = g.with_columns(pl.col("g").fill_null(0.0))  # every seed of the cell diverged: it scores 0
    noise = (seed_best(lf, [metric], [*keys, *cells]).group_by([*keys, *cells])
             .agg((pl.col(metric).std().fill_null(0.0) ** 2 / pl.len()).alias("se2")).collect())
    g = g.join(noise, on=[*keys, *cells], how="left", nulls_equal=True).with_columns(pl.col("se2").fill_null(0.0))
    rows: list[dict[str, Any]] = []
    groups = g.group_by(task, maintain_order=True) if task else [((None,), g)]
    for (value,), part in groups:
        rows += _column(part, entity, list(cells), {task: value} if task else {})
    out = pl.DataFrame(rows)
    by = [task] if task else []
    ranks = out.group_by(by or pl.lit(0), maintain_order=True).agg(pl.col("separated").any().alias("ranks"))
    return out.join(ranks, on=by, how="left") if by else out.with_columns(ranks=ranks.item(0, "ranks"))


def _column(part: pl.DataFrame, entity: str, cells: list[str], label: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of one task column: every entity against the column's best (by mean G over its cells)."""
    means = part.group_by(entity).agg(pl.col("g").mean().alias("mean_g")).sort("mean_g", entity,
                                                                                   descending=[True, False])
    best = means.item(0, entity)
    mine = part.filter(pl.col(entity) == best).select(*cells, pl.col("g").alias("g_best"),
                                                     pl.col("se2").alias("se2_best"))
    rows = []
    for other, mean_g in means.rows():
        theirs = part.filter(pl.col(entity) == other).select(*cells, "g", "se2")
        paired = theirs.join(mine, on=cells, how="full", coalesce=True, nulls_equal=True)
        both = paired.drop_nulls(["g", "g_best"])
        diff = (both.get_column("g") - both.get_column("g_best")).to_numpy()
        low, high = t_interval(diff) if other != best else (None, None)
        up, down = int((diff > 0).sum()), int((diff < 0).sum())
        variance = (both.get_column("se2") + both.get_column("se2_best")).sum()  # of the sum of the differences
        seed_noise = 2 * math.sqrt(float(variance)) / max(diff.size, 1)
        lead = -float(np.mean(diff)) if diff.size else 0.0
        beyond = diff.size >= MIN_CELLS and high is not None and high < 0 and lead > max(seed_noise, MIN_LEAD)
        rows.append({**label, entity: other, "best": best, "mean_g": float(mean_g), "n": int(diff.size),
                     "mean_diff": float(np.mean(diff)) if diff.size else None, "ci_low": low, "ci_high": high,
                     "seed_noise": seed_noise, "sign_p": sign_test(up, down), "separated": beyond,
                     "unpaired": paired.height - both.height})
    return rows


def separation_text(row: dict[str, Any], entity: str) -> str:
    """``best`` / ``-12.3 pp (-20.1 .. -4.5) below the best`` / ``tied with the best (-1.2 .. +0.8 pp)``."""
    if row[entity] == row["best"]:
        return "best (highest mean G over the column's cells)"
    if row["ci_low"] is None or row["n"] < MIN_CELLS:
        return f"{100 * (row['mean_diff'] or 0):+.1f} pp vs the best over {row['n']} cell(s): too few cells to tell"
    interval = f"{100 * row['ci_low']:+.1f} .. {100 * row['ci_high']:+.1f} pp"
    if row["separated"]:
        return f"{100 * row['mean_diff']:+.1f} pp vs the best ({interval}, {row['n']} cells): below it"
    return f"tied with the best ({100 * row['mean_diff']:+.1f} pp, {interval}, {row['n']} cells)"
