"""Richter & Wattenhofer 2020's encoder family (BERT, MTE, NAP, NON, sum, max, EA) on the cases and mode tasks."""

from __future__ import annotations

from collections.abc import Sequence

from trainables.families import Family, packs
from trainables.richter2020.config import TrainConfig
from trainables.richter2020.loop import train_members
from trainables.richter2020.tasks import TASKS
from trainables.rows import OnEval, TrialResult


def train(configs: Sequence[TrainConfig], seeds: Sequence[int], *, device: str = "cpu",
          on_eval: OnEval | None = None, packed: bool | None = None) -> TrialResult:
    """All seeds of one configuration (several configs: packed learning rates) through the one loop
    (:mod:`trainables.richter2020.loop`): packed, the members share stacked models (as many per model as
    ``members_per_pack`` allows on ``device``); not packed, one seed after another (K = 1). Rows equal up to
    float rounding either way. Whether it packs: :func:`trainables.families.packs` (by default on a GPU, where
    small models are launch-bound, and not on a CPU, where packing measured no faster: bench/README.md).
    """
    pack = "auto" if packs(FAMILY, packed, device, n_configs=len(configs)) else 1
    return TrialResult(train_members(list(configs), list(seeds), device=device, on_eval=on_eval, pack=pack))


FAMILY = Family(name="richter2020", tasks=tuple(TASKS.names()), config=TrainConfig, train=train,
                packs_learning_rates=True, packing="gpu")
