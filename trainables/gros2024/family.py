"""The Gros 2024 family (NT / NT-S / NT-R / mixture on the expressive-attention bilayer)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from trainables.catalog import register_family
from trainables.families import Family, packs
from trainables.gros2024.config import GrosConfig
from trainables.gros2024.loop import train_members
from trainables.gros2024.tasks import GROS_TASKS
from trainables.rows import OnEval, TrialResult


def train(configs: Sequence[GrosConfig], seeds: Sequence[int], *, device: str = "cpu",
          on_eval: OnEval | None = None, packed: bool | None = None) -> TrialResult:
    """All seeds of one configuration: one stacked model (default), or one model per seed (``packed=False``).

    The stacked form is the default on every device (:func:`trainables.families.packs`, ``packs_when="always"``):
    these models are tiny, so one stacked step costs about what one seed's step costs (measured:
    docs/gros2024.md). Artifact ``attention``: final attention matrices
    of the first ``snapshot_seeds`` seeds on a probe series.
    """
    if len(configs) != 1:
        raise ValueError(f"invalid learning_rate={[c.learning_rate for c in configs]!r}; allowed: one number "
                         "(the gros2024 family does not pack learning rates)")
    cfg = configs[0]
    if not packs(FAMILY, packed, device):
        rows, snaps = [], []
        for seed in seeds:
            r, s = train_members(cfg, [seed], device=device, on_eval=on_eval)
            rows += r
            snaps += s
    else:
        rows, snaps = train_members(cfg, seeds, device=device, on_eval=on_eval)
    return TrialResult(rows, {"attention": snaps} if snaps else {})


def tiny(cfg: GrosConfig) -> GrosConfig:
    """One epoch of 2 predictions and one evaluation on one series of 2 predictions: the same model and task."""
    return dataclasses.replace(cfg, n_epochs=1, eval_every=1, batch_predictions=2, eval_series=1, eval_predictions=2,
                               final_eval_series=1, lr_drop_epoch=None)


FAMILY = register_family(Family(name="gros2024", tasks=GROS_TASKS, config=GrosConfig, train=train, tiny=tiny,
                                packs_when="always"))
