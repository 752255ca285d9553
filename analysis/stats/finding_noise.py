"""How far apart two of a finding's numbers must be to be more than seed noise: the margin of a strict lead.

A finding's number (:mod:`analysis.stats.finding_values`) is a statistic of G over cells, and every G is a mean over
a few seeds. Its standard error follows from the seeds of the cells that make it, each cell's being ``sd / sqrt(n)``
(``sd``: the standard deviation over its seeds of each seed's best over training, ``n`` seeds; a combination of
columns takes ``sqrt(sd_a^2 + sd_b^2)`` for ``a - b`` and the largest ``sd`` for ``min`` / ``max``, both on the safe
side):

* ``best`` / ``worst``: the standard error of the cell that attains it;
* ``mean`` of k cells: ``sqrt(sum se_i^2) / k``;
* ``share`` of k cells with G >= level: ``sqrt(sum p_i (1 - p_i)) / k``, with ``p_i`` the chance that cell i lands
  at or above the level under its noise (a normal of its G and se): cells far from the level count 0, a cell on it
  counts most.

:func:`noise_margin` is twice the standard error of the difference of two such numbers: a lead must exceed it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import polars as pl

from analysis.data.meta import FindingSpec
from analysis.stats.finding_values import cell_values, in_region, lower_is_better, metric_columns


def noise_margin(frames: Mapping[str, pl.DataFrame], noise: Mapping[str, pl.DataFrame], finding: FindingSpec,
                 metric: str, panel: str, side_a: tuple[str, Mapping[str, Any]],
                 side_b: tuple[str, Mapping[str, Any]]) -> float | None:
    """2 x the standard error of (A's number - B's number); None when the data has no seed noise (one seed, or no
    per-seed values of the metric's columns)."""
    if finding.statistic == "spread":  # the spread is the seeds' own disagreement: no noise model of its own here
        return None
    errors = [_standard_error(frames, noise, finding, metric, panel, value, region) for value, region in
              (side_a, side_b)]
    if any(e is None for e in errors):
        return None
    return 2.0 * math.sqrt(sum(e * e for e in errors))  # type: ignore[operator]


def _cell_errors(noise: Mapping[str, pl.DataFrame], metric: str) -> pl.DataFrame | None:
    """Per configuration ``se`` of the metric's G (module docstring); None when a column has no seed noise."""
    columns = metric_columns(metric)
    if any(c not in noise for c in columns):
        return None
    keys = [c for c in noise[columns[0]].columns if c not in ("sd", "n")]
    joined = noise[columns[0]].select(*keys, pl.col("sd").alias("sd0"), "n")
    for i, c in enumerate(columns[1:], start=1):
        joined = joined.join(noise[c].select(*keys, pl.col("sd").alias(f"sd{i}")), on=keys, how="inner",
                             nulls_equal=True)
    sds = [pl.col(f"sd{i}") for i in range(len(columns))]
    if len(columns) == 1:
        sd = sds[0]
    elif metric.replace(" ", "").startswith(("min(", "max(")):
        sd = pl.max_horizontal(sds)
    else:
        sd = (sds[0] ** 2 + sds[1] ** 2).sqrt()
    out = joined.select(*keys, (sd / pl.col("n").cast(pl.Float64).sqrt()).alias("se"), "n")
    return out if out.height and out.get_column("n").max() > 1 else None


def _standard_error(frames: Mapping[str, pl.DataFrame], noise: Mapping[str, pl.DataFrame], finding: FindingSpec,
                    metric: str, panel: str, value: str, region: Mapping[str, Any]) -> float | None:
    cells, errors = cell_values(frames, metric), _cell_errors(noise, metric)
    if cells is None or errors is None:
        return None
    mine = in_region(cells, region).filter(pl.col(panel).cast(pl.String) == value)
    keys = [c for c in mine.columns if c != "value" and c in errors.columns]
    mine = mine.join(errors.select(*keys, "se"), on=keys, how="left", nulls_equal=True).with_columns(
        pl.col("se").fill_null(0.0))
    if mine.is_empty():
        return None
    values, ses = mine.get_column("value").to_list(), mine.get_column("se").to_list()
    statistic = finding.statistic
    if statistic in ("best", "worst"):
        pick = max if (statistic == "best") != lower_is_better(metric) else min
        return ses[values.index(pick(values))]
    k = len(values)
    if statistic == "mean":
        return math.sqrt(sum(se * se for se in ses)) / k
    chances = [_at_least(v, se, finding.level) for v, se in zip(values, ses, strict=True)]
    return math.sqrt(sum(p * (1 - p) for p in chances)) / k


def _at_least(value: float, se: float, level: float) -> float:
    """P(a normal of mean ``value`` and sd ``se`` is >= ``level``)."""
    if se <= 0:
        return 1.0 if value >= level else 0.0
    return 0.5 * (1 + math.erf((value - level) / (se * math.sqrt(2))))
