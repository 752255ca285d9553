"""What a finding's metric is: a results column or a combination of columns, which way is better, the values its G
can take, and how a combination is taken per evaluation.

A finding (:class:`search_spaces.finding.Finding`) names a ``metric``: a results column, or ``min(a, b, ...)``,
``max(a, b, ...)`` or ``a - b`` of columns. Its G per cell is the paper's: the mean over seeds at each evaluation,
maximised over training. A combination is taken **at each evaluation** of the seed means, then maximised over
training (:func:`per_step`): "learns all three cases" is all three at the same time, "focuses on the first case"
is first minus argmin at one time, as the sentences mean them.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from search_spaces.finding import Finding, direction, metric_columns

_CALL = re.compile(r"^(min|max)\((.+)\)$")
#: Results columns whose values are fractions, in [0, 1]: accuracies, shares (``distinct_share``, ``context_share``),
#: collision rates, attention weights and the probes that are shares (docs/results.md names each family's columns).
FRACTION = re.compile(r"accuracy|_share$|^context_share$|collision|^max_weight$"
                      r"|^probe_(peak|nearest|gate|gate_open|drift|last_op|same_peak)_")


@functools.cache  # pure, and read by every interval of every verdict
def lower_is_better(metric: str) -> bool:
    """A loss is minimised: its best G is the lowest (search_spaces.finding.direction)."""
    return direction(metric) == "min"


def is_combination(metric: str) -> bool:
    """Whether ``metric`` combines several columns (``min(...)``, ``max(...)``, ``a - b``)."""
    return len(metric_columns(metric)) > 1


def is_accuracy(metric: str) -> bool:
    """Whether the metric reads accuracies only (shown in percent; a loss or an output scale in its own unit)."""
    return all("accuracy" in c for c in metric_columns(metric))


@functools.cache  # pure, and read by every interval of every verdict
def metric_range(metric: str) -> tuple[float, float]:
    """The values the metric's G can take: fractions (:data:`FRACTION`: accuracies, shares) in [0, 1] (a difference of
    two in [-1, 1]), a loss >= 0, anything else unbounded; an interval is clipped to it."""
    columns = metric_columns(metric)
    if all(FRACTION.search(c) for c in columns):
        return (-1.0, 1.0) if is_difference(metric) else (0.0, 1.0)
    if lower_is_better(metric):
        return (0.0, math.inf)
    return (-math.inf, math.inf)


def is_call(metric: str) -> bool:
    """Whether ``metric`` is ``min(...)`` or ``max(...)`` of columns."""
    return bool(_CALL.match(metric.replace(" ", "")))


def is_difference(metric: str) -> bool:
    """Whether ``metric`` is ``a - b`` of two columns."""
    return len(metric_columns(metric)) == 2 and not is_call(metric)


def per_step(metric: str) -> pl.Expr:
    """The combination at each evaluation, over :func:`analysis.stats.rgb.step_stats`' seed means ``{column}__g``
    (a mean that a NaN seed made -inf, or a missing one, is that column's worst there: 0 for an accuracy)."""
    columns = metric_columns(metric)
    parts = [pl.when(pl.col(f"{c}__g").is_finite()).then(pl.col(f"{c}__g")).otherwise(0.0) for c in columns]
    return combine(metric, parts)


def per_row(metric: str) -> pl.Expr:
    """The combination in one row (one seed at one evaluation; a NaN or missing column counts as 0): its best over
    training per seed is the seed's value of the combination, whose spread over seeds is the combination's noise."""
    columns = metric_columns(metric)
    parts = [pl.when(pl.col(c).is_finite()).then(pl.col(c)).otherwise(0.0) for c in columns]
    return combine(metric, parts).alias(metric)


def combine(metric: str, parts: list[pl.Expr]) -> pl.Expr:
    """``metric``'s combination of ``parts`` (one expression per column, in the metric's order)."""
    if is_call(metric):
        return pl.min_horizontal(parts) if metric.replace(" ", "").startswith("min") else pl.max_horizontal(parts)
    return parts[0] - parts[1] if len(parts) == 2 else parts[0]


def combined_sd(metric: str, parts: list[pl.Expr]) -> pl.Expr:
    """The seed noise of a combination from its columns' (on the safe side): the largest of its columns' for ``min``
    / ``max``, ``sqrt(sd_a² + sd_b²)`` for ``a - b``."""
    if len(parts) == 1:
        return parts[0]
    if is_call(metric):
        return pl.max_horizontal(parts)
    return (parts[0] ** 2 + parts[1] ** 2).sqrt()


def named_columns(argument: Any, names: Sequence[str]) -> tuple[str, ...]:
    """The columns of ``names`` that a finding's ``kinds`` argument names as metrics, anywhere in it (a mapping's
    values, a sequence's items): what a bound stated under ``kinds`` may read of each evaluation (``learned_in_order``'s
    ``then``), kept with the rows of each evaluation (:mod:`analysis.stats.training_stats`)."""
    if isinstance(argument, str):
        columns = metric_columns(argument)
        return columns if all(c in names for c in columns) else ()
    parts = argument.values() if isinstance(argument, Mapping) else argument if isinstance(argument, Sequence) else ()
    return tuple(dict.fromkeys(c for part in parts for c in named_columns(part, names)))


def time_columns(findings: Sequence[Finding], metric: str, names: Sequence[str],
                 kept: Sequence[str]) -> tuple[str, ...] | None:
    """The columns of ``names`` that ``findings`` read along the time axis besides the ``kept`` ones (configuration,
    seed, step, epoch): each timed finding's metric's, and a finding's whose ``kinds`` names a metric column
    (:func:`named_columns`) its metric's and those; None: no finding reads the time axis."""
    measured = [c for c in names if c not in kept]
    named = [(f, named_columns(f.kinds, measured)) for f in findings]
    metrics = [m for f, more in named if f.timed() or more for m in (f.metric_of(metric), *more)]
    return tuple(dict.fromkeys(c for m in metrics for c in metric_columns(m) if c in names)) if metrics else None
