"""Richter & Wattenhofer 2020's encoder family (BERT, MTE, NAP, NON, sum, max, EA) on the cases and mode tasks."""

from __future__ import annotations

from collections.abc import Sequence

from trainables.families import Family
from trainables.richter.config import TrainConfig
from trainables.richter.loop import train_seeds
from trainables.richter.tasks import TASKS
from trainables.rows import OnEval, TrialResult


def train(configs: Sequence[TrainConfig], seeds: Sequence[int], *, device: str = "cpu",
          on_eval: OnEval | None = None, packed: bool | None = None) -> TrialResult:
    """All seeds of one configuration (several configs: packed learning rates, always one packed model).

    ``packed=True`` trains the seeds together as one stacked model (:mod:`trainables.richter.packed`: the same
    rows as separate runs up to float rounding, plus a ``learning_rate`` key); ``packed=False`` one after
    another. ``None`` packs on a GPU, where small models are launch-bound, and not on a CPU, where packing
    measured no faster (bench/README.md).
    """
    if packed is None:
        packed = str(device).startswith("cuda")
    if len(configs) > 1 or packed:
        from trainables.richter.packed import train_packed

        return TrialResult(train_packed(list(configs), list(seeds), device=device, on_eval=on_eval))
    return TrialResult(train_seeds(configs[0], list(seeds), device=device, on_eval=on_eval))


FAMILY = Family(name="richter2020", tasks=tuple(TASKS.names()), config=TrainConfig, train=train,
                packs_learning_rates=True)
