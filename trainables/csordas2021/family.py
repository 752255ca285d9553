"""The CTL family (Csordás et al. 2021's Table 1 models on compositional table lookup)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from trainables.catalog import register_family
from trainables.csordas2021.config import TASKS, CTLConfig
from trainables.csordas2021.loop import train_seed
from trainables.families import Family
from trainables.rows import OnEval, Row, TrialResult


def train(configs: Sequence[CTLConfig], seeds: Sequence[int], *, device: str = "cpu",
          on_eval: OnEval | None = None, packed: bool | None = None) -> TrialResult:
    """All seeds of one configuration, one after another.

    ``packed`` is accepted and ignored (``packs_when="never"``, :func:`trainables.families.packs`): these models
    are large (d = 128-256, 11-14 layer applications, batches of 512) and not launch-bound, and their
    variable-length, length-bucketed batches differ per seed, so seeds do not stack into one model.
    """
    if len(configs) != 1:
        raise ValueError(f"invalid number of configs={len(configs)}; allowed: 1 (ctl does not pack learning rates)")
    rows: list[Row] = []
    attention: list[Row] = []
    gates: list[Row] = []
    for seed in seeds:
        r, a, g = train_seed(configs[0], seed, device=device, on_eval=on_eval)
        rows.extend(r)
        attention.extend(a)
        gates.extend(g)
    artifacts = {k: v for k, v in (("attention", attention), ("gates", gates)) if v}
    return TrialResult(rows, artifacts)


def tiny(cfg: CTLConfig) -> CTLConfig:
    """One step on a batch of 2 and one evaluation on 2 samples of each set: the same model."""
    return dataclasses.replace(cfg, batch_size=2, n_steps=1, eval_every=1, eval_samples=2)


FAMILY = register_family(Family(name="csordas2021", tasks=TASKS, config=CTLConfig, train=train, tiny=tiny,
                                packs_when="never"))
