"""The CTL family (Csordás et al. 2021's Table 1 models on compositional table lookup)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from trainables.catalog import register_family
from trainables.csordas2021.config import TASKS, CTLConfig
from trainables.csordas2021.loop import train_members
from trainables.families import Family, packs
from trainables.rows import OnEval, Row, TrialResult


def train(configs: Sequence[CTLConfig], seeds: Sequence[int], *, device: str = "cpu",
          on_eval: OnEval | None = None, packed: bool | None = None) -> TrialResult:
    """All seeds of one configuration through the one loop (:mod:`trainables.csordas2021.loop`): packed, as one
    stacked model; not packed, one seed after another (K = 1). Rows equal up to float rounding either way. Whether
    it packs: :func:`trainables.families.packs` (by default on a GPU, where one step of K small models as one is K
    times fewer launches; not on a CPU: docs/csordas2021.md, "Packed seeds")."""
    if len(configs) != 1:
        raise ValueError(f"invalid number of configs={len(configs)}; allowed: 1 (ctl does not pack learning rates)")
    groups = [list(seeds)] if packs(FAMILY, packed, device) else [[seed] for seed in seeds]
    rows: list[Row] = []
    attention: list[Row] = []
    gates: list[Row] = []
    for group in groups:
        r, a, g = train_members(configs, group, device=device, on_eval=on_eval)
        rows += r
        attention += a
        gates += g
    artifacts = {k: v for k, v in (("attention", attention), ("gates", gates)) if v}
    return TrialResult(rows, artifacts)


def tiny(cfg: CTLConfig) -> CTLConfig:
    """One step on a batch of 2 and one evaluation on 2 samples of each set: the same model."""
    return dataclasses.replace(cfg, batch_size=2, n_steps=1, eval_every=1, eval_samples=2)


FAMILY = register_family(Family(name="csordas2021", tasks=TASKS, config=CTLConfig, train=train, tiny=tiny,
                                packs_when="gpu"))
