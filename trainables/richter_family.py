"""Richter & Wattenhofer 2020's encoder family (BERT, MTE, NAP, NON, sum, max) on the cases and mode tasks."""

from __future__ import annotations

from collections.abc import Sequence

from trainables.config import TrainConfig
from trainables.families import FAMILIES, Family, OnEval, TrialResult
from trainables.loop import train_trial
from trainables.tasks import TASKS


def train(configs: Sequence[TrainConfig], seeds: Sequence[int], *, device: str = "cpu",
          on_eval: OnEval | None = None, packed: bool | None = None) -> TrialResult:
    """All seeds of one configuration; several configs (packed learning rates) train as one packed model."""
    if len(configs) > 1:
        from trainables.packed import train_packed

        return TrialResult(train_packed(list(configs), list(seeds), device=device, on_eval=on_eval))
    return TrialResult(train_trial(configs[0], list(seeds), device=device, on_eval=on_eval, packed=packed))


FAMILIES.add("richter2020", Family(name="richter2020", tasks=TASKS.names, config=TrainConfig, train=train,
                                   packs_learning_rates=True))
