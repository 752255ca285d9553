"""What a Ray worker runs for one trial: the driver's plugins, torch's threads, the device, then the trial
(study.trial.trainable); a bug in the trial's code fails it once (study.trial.failures)."""

from __future__ import annotations

from typing import Any

import ray
from ray import tune

from search_spaces.study import Study
from study.results.storage import StudyStorage
from study.trial.failures import fail_once, is_infrastructure
from study.trial.spec import Trial


def trial_entry(config: dict[str, Any], study: Study, storage: StudyStorage, gpus: float,
                cpus: float, packing: str = "auto", precision: str = "fp32", simulated_gpus: bool = False,
                track: tuple[Any, ...] = (), plugins: tuple[dict[str, Any], ...] = ()) -> None:
    """What a Ray worker runs for one trial (``config``: :meth:`study.trial.spec.Trial.to_config`, or a point a
    sampler drew); ``plugins``: the driver's (trainables.plugins.record); ``packing``: the study's request, ``auto``,
    ``on`` or ``off``."""
    import torch

    from study.trial.devices import packing_device, trial_device
    from study.trial.trainable import run_trial
    from trainables.plugins import ensure_active

    torch.set_num_threads(max(1, int(cpus)))
    context = ray.get_runtime_context()
    where = f"node {ray.util.get_node_ip_address()} (id {context.get_node_id()})"
    trial = Trial.from_config(config, study)
    try:
        ensure_active(list(plugins))  # the driver's plugins, imported and checked here (trainables.plugins)
        # No silent CPU fallback: a GPU trial without CUDA fails here with one line (study.trial.devices.DeviceError).
        device = trial_device(gpus, simulated_gpus=simulated_gpus, where=where)
        run_trial(study, storage, trial, device=device, report=tune.report, node_id=context.get_node_id(),
                  packing=packing, packing_device=packing_device(gpus, device), precision=precision, track=track,
                  plugins=plugins)
    except Exception as error:
        if is_infrastructure(error):
            raise  # Ray Tune retries it (study.run.tuner.MAX_FAILURES)
        fail_once(storage, trial.key(study), dict(trial.point), error, node=where, report=tune.report)
