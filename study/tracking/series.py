"""How a trial's rows become tracker series: the one definition that `study run --track` and `study export` share.

A trial's tracker run gets its hyperparameters as params (study.trial.trainable.trial_params: the Parquet columns)
and, at every evaluation step, one series per seed and metric (``seed_<n>/val_accuracy``) plus the mean over the
seeds once every seed has reached that step (``mean/val_accuracy``). A trial that packs several learning rates
prefixes each rate's series with ``lr_<rate>/``. Metrics are the row's numbers that are neither hyperparameters
nor bookkeeping (seed, step, epoch, wall time, parameter count).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

BOOKKEEPING = frozenset({"seed", "step", "epoch", "n_params", "wall_time_s"})


def metric_values(row: dict[str, Any], params: dict[str, Any]) -> dict[str, float]:
    """The metrics of one row: its numbers that are neither hyperparameters nor bookkeeping."""
    return {k: float(v) for k, v in row.items()
            if k not in BOOKKEEPING and k not in params and isinstance(v, int | float) and not isinstance(v, bool)
            and v is not None}


class TrialSeries:
    """Turns a trial's rows, in the order they come, into ``(step, {series name: value})`` batches."""

    def __init__(self, seeds: Sequence[int], params: dict[str, Any]) -> None:
        self.seeds = tuple(seeds)
        self.params = params
        self.packed = isinstance(params.get("learning_rate"), list)
        self._pending: dict[tuple[Any, int], dict[int, dict[str, float]]] = {}

    def add(self, row: dict[str, Any]) -> tuple[int, dict[str, float]]:
        """The series values of one row: its seed's, and the means over seeds of its step once all are in."""
        rate = row.get("learning_rate") if self.packed else None
        prefix = f"lr_{rate:g}/" if self.packed else ""
        step, values = int(row["step"]), metric_values(row, self.params)
        out = {f"{prefix}seed_{row['seed']}/{name}": value for name, value in values.items()}
        by_seed = self._pending.setdefault((rate, step), {})
        by_seed[int(row["seed"])] = values
        if set(self.seeds) <= set(by_seed):
            del self._pending[(rate, step)]
            for name in values:
                points = [v[name] for v in by_seed.values() if name in v]
                out[f"{prefix}mean/{name}"] = math.fsum(points) / len(points)
        return step, out
