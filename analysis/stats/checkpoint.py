"""Probes read at a cell's checkpoint (issue 58): a probe column (``probe_*``, what a model does inside) has no better
or worse, so a finding never maximises it over training; it reads each seed's value at the cell's checkpoint, the
first evaluation where the study's selecting metric's seed mean is best (the evaluation the papers' tables report),
and that seed's value is what its G, noise and per-seed statistics are made of
(:meth:`analysis.stats.training_stats.TrainingStats.finding_cells`)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analysis.stats.metric import combine, is_call
from analysis.stats.rgb import best_step
from analysis.stats.seed_stats import seed_columns
from search_spaces.finding import metric_columns


def readable(metric: str, columns: Sequence[str]) -> bool:
    """Whether rows of ``columns`` can give ``metric`` (a probe metric) a value: ``min`` / ``max`` need one of their
    columns (a model writes the heads it has: rows of one-head models alone have no ``_h2``), ``a - b`` both."""
    present = [c in columns for c in metric_columns(metric)]
    return any(present) if is_call(metric) else all(present)


def at_checkpoint(rows: pl.LazyFrame, steps: pl.DataFrame, read: Sequence[str], select: str,
                  by: Sequence[str]) -> pl.DataFrame:
    """Per configuration and seed, each probe metric of ``read`` (a column or a combination of probe columns) at the
    cell's checkpoint: the first evaluation of ``steps`` (:func:`~analysis.stats.rgb.step_stats`) where ``select``'s
    seed mean is best. A seed without a finite value there (diverged: its fill rows carry no probe) is null; ``min`` /
    ``max`` of columns take those a model has (``min`` over four heads' columns is a one-head model's own head), ``a -
    b`` needs both."""
    checkpoint = best_step(steps.lazy(), select, by).rename({"best_step": "step"})

    names = rows.collect_schema().names()

    def value(metric: str) -> pl.Expr:  # min / max over the finite columns there are (the heads a model has)
        parts: list[pl.Expr] = [pl.when(pl.col(c).cast(pl.Float64).is_finite()).then(pl.col(c).cast(pl.Float64))
                                for c in metric_columns(metric)
                                if c in names]  # NaN, infinite or missing: null, which min / max skip
        return combine(metric, parts).alias(metric)

    at = rows.join(checkpoint, on=[*by, "step"], how="inner", nulls_equal=True)
    return at.select(*by, "seed", *(value(m) for m in read)).collect(engine="streaming")


def read_cells(read_seeds: pl.DataFrame, read: Sequence[str], by: Sequence[str]) -> dict[str, pl.DataFrame]:
    """Per probe metric of ``read``, what a finding reads per cell (:mod:`analysis.stats.table`) from each seed's value
    at the checkpoint (:func:`at_checkpoint`): G their mean, ``r`` / ``b`` the smallest and largest, ``sd`` their
    spread (no lift: nothing is maximised), ``gmd`` and ``seeds``. A seed without a value is left out of ``n_seeds``;
    a cell none of whose seeds has one is not in the frame (not measured)."""
    found = {}
    for metric in read:
        seeds = read_seeds.select(*by, "seed", metric).drop_nulls(metric)
        value = pl.col(metric)
        frame = seeds.group_by(by).agg(value.min().alias("r"), value.mean().alias("g"), value.max().alias("b"),
                                       pl.len().alias("n_seeds"))
        for name, extra in seed_columns(seeds, None, by).items():
            frame = frame.join(extra.select(*by, pl.col(metric).alias(name)), on=by, how="left", nulls_equal=True)
        found[metric] = frame.sort(by, nulls_last=False)
    return found
