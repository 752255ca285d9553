"""A trial as a Weights & Biases run, through Ray Tune's ``setup_wandb`` (docs/tracking.md).

The study is the run's group (its directory, e.g. ``demo.smoke``), the job type is ``trial``, the run's id and name
are the trial key, its config the trial's params. W&B wants one increasing step per run while a trial reports its
seeds one after the other, so every series is plotted against the custom step metric ``step`` (W&B's
``define_metric``). Offline (``WANDB_MODE=offline``) the run files stay under ``<dir>/wandb/`` for ``wandb sync``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from search_spaces.study import Study
from study.tracking.targets import TrackSpec


class WandbRun:
    """One trial's W&B run (a relaunch of the same trial resumes the run of that id: W&B's own resume)."""

    def __init__(self, spec: TrackSpec, study: Study, key: str, params: dict[str, Any]) -> None:
        from ray.air.integrations.wandb import setup_wandb

        if spec.where:
            Path(spec.where).mkdir(parents=True, exist_ok=True)
        self.run = setup_wandb(params, project=spec.target, group=study.directory, job_type="trial", trial_id=key,
                               trial_name=key, dir=spec.where, tags=[study.name, study.scale])
        self.run.define_metric("step")
        self.run.define_metric("*", step_metric="step")

    def log(self, values: dict[str, float], step: int) -> None:
        self.run.log({"step": step, **values})

    def close(self) -> None:
        self.run.finish()
