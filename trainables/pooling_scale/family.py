"""The measurement family (Richter & Wattenhofer's Fig. 1 and Sec. 3; Yun et al.'s theory items): every seed measured
once, its row written by the row writer at step 0."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from trainables.catalog import register_family
from trainables.csordas2021.properties import cost_measures, match_measures, side_measures, split_measures
from trainables.families import Family
from trainables.pooling_scale.config import TASKS, PoolingScaleConfig
from trainables.pooling_scale.context import context_measures
from trainables.pooling_scale.equivariance import equivariance_measures
from trainables.pooling_scale.mixer_properties import mixer_measures
from trainables.pooling_scale.mixing import mixing_measures
from trainables.pooling_scale.scale import pooling_output_scale
from trainables.rows import OnEval, Row, SeedRows, TrialResult


def measure(configs: Sequence[PoolingScaleConfig], seeds: Sequence[int], *, device: str = "cpu",
            on_eval: OnEval | None = None, packed: bool | None = None) -> TrialResult:
    """One row per seed: the output scale of ``configs[0]``'s pooling (task ``pooling_scale``: no model, no
    parameters, no step), its mixer's measures (``token_mixing``, ``mixer_properties``: the mixer as initialised,
    nothing trained), its first layer's share of context (``context_share``: the architecture's layer as
    initialised), its stack's permutation equivariance (``equivariance``), or Csordás et al.'s geometric attention's
    matches (``ndr_matches``), cost (``ndr_cost``) and sides (``ndr_sides``) and their CTL splits' sizes and depths
    (``ctl_splits``).

    The draws come from a CPU generator and are measured on the CPU whatever ``device`` is (the numbers do not
    depend on where the trial ran); ``packed`` is accepted and ignored (nothing trains).
    """
    if len(configs) != 1:
        raise ValueError(f"invalid number of configs={len(configs)}; allowed: 1 (a measurement has no learning rate)")
    rows: list[Row] = []
    measured = {"pooling_scale": pooling_output_scale, "token_mixing": mixing_measures,
                "context_share": context_measures, "mixer_properties": mixer_measures,
                "equivariance": equivariance_measures, "ndr_matches": match_measures, "ndr_cost": cost_measures,
                "ndr_sides": side_measures, "ctl_splits": split_measures}[configs[0].task]
    for seed in seeds:
        writer = SeedRows(seed, n_params=0, device="cpu", on_eval=on_eval)
        writer.emit(0, 0, measured(configs[0], seed))
        rows += writer.finish()
    return TrialResult(rows)


def tiny(cfg: PoolingScaleConfig) -> PoolingScaleConfig:
    """One sequence of the configuration's length instead of ``n_vectors / seq_len`` (``context_share``: two, its
    variance's least): the same pooling, mixer or layer."""
    return dataclasses.replace(cfg, n_vectors=cfg.seq_len * (2 if cfg.task == "context_share" else 1))


FAMILY = register_family(Family(name="pooling_scale", tasks=TASKS, config=PoolingScaleConfig, train=measure,
                                tiny=tiny))
