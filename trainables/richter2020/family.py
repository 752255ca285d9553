"""Richter & Wattenhofer 2020's encoder family (BERT, MTE, NAP, NON, sum, max, EA) on the cases and mode tasks."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from trainables.catalog import register_family
from trainables.families import Family, packs
from trainables.richter2020.config import TrainConfig
from trainables.richter2020.loop import members_per_pack, train_members
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


def tiny(cfg: TrainConfig) -> TrainConfig:
    """One step on a batch of 2 and one evaluation of one batch (2 examples per case): the same model and task."""
    return dataclasses.replace(cfg, batch_size=2, n_steps=1, eval_every=1, eval_batches=1, case_eval_per_case=2)


# tasks=TASKS: the task registry itself, so that a task a plugin registers belongs to this family too.
FAMILY = register_family(Family(name="richter2020", tasks=TASKS, config=TrainConfig, train=train, tiny=tiny,
                                packs_learning_rates=True, packs_when="gpu",
                                members_per_pack=members_per_pack))
