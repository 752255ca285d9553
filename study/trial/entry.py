"""What a Ray worker runs for one trial: the driver's plugins, torch's threads, the device, then the trial
(study.trial.trainable); a bug in the trial's code fails it once (study.trial.failures)."""

from __future__ import annotations

from typing import Any

import ray
from ray import tune

from search_spaces.study import Study
from study.results.storage import TrialStore
from study.trial.failures import fail_once, is_infrastructure
from study.trial.resources import Resources
from study.trial.spec import Trial


def trial_entry(config: dict[str, Any], study: Study, storage: TrialStore, resources: Resources,
                track: tuple[Any, ...] = (), plugins: tuple[dict[str, Any], ...] = ()) -> None:
    """What a Ray worker runs for one trial (``config``: :meth:`study.trial.spec.Trial.to_config`, or a point a
    sampler drew); ``resources``: the study run's (its threads, device, packing, precision); ``plugins``: the
    driver's (trainables.plugins.record)."""
    import torch

    from study.trial.devices import trial_device
    from study.trial.trainable import run_trial
    from trainables.plugins import ensure_active

    torch.set_num_threads(resources.threads)
    context = ray.get_runtime_context()
    where = f"node {ray.util.get_node_ip_address()} (id {context.get_node_id()})"
    trial = Trial.from_config(config, study)
    try:
        ensure_active(list(plugins))  # the driver's plugins, imported and checked here (trainables.plugins)
        # No silent CPU fallback: a GPU trial without CUDA fails here with one line (study.trial.devices.DeviceError).
        device = trial_device(resources.gpus_per_trial, simulated_gpus=resources.simulated_gpus, where=where)
        run_trial(study, storage, trial, resources=resources, device=device, report=tune.report,
                  node_id=context.get_node_id(), track=track, plugins=plugins)
    except Exception as error:
        if is_infrastructure(error):
            raise  # Ray Tune retries it (study.run.tuner.MAX_FAILURES)
        fail_once(storage, trial.key(study), dict(trial.point), error, node=where, report=tune.report)
