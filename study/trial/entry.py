"""What a Ray worker runs for one trial: torch's threads, the device, then the trial (study.trial.trainable)."""

from __future__ import annotations

from typing import Any

import ray
from ray import tune

from search_spaces.study import Study
from study.results.storage import StudyStorage


def trial_entry(config: dict[str, Any], study: Study, storage: StudyStorage, gpus: float,
                 cpus: float, packed: bool | None, precision: str, simulated_gpus: bool = False,
                 track: tuple[Any, ...] = ()) -> None:
    """What a Ray worker runs for one trial."""
    import torch

    from study.trial.devices import packing_device, trial_device
    from study.trial.trainable import run_trial

    torch.set_num_threads(max(1, int(cpus)))
    context = ray.get_runtime_context()
    # No silent CPU fallback: a GPU trial without CUDA fails here with one line (study.trial.devices.DeviceError).
    device = trial_device(gpus, simulated_gpus=simulated_gpus,
                          where=f"node {ray.util.get_node_ip_address()} (id {context.get_node_id()})")
    point = config.get("point", config)
    run_trial(study, storage, point, device=device, report=tune.report, node_id=context.get_node_id(),
              packed=packed, packing_device=packing_device(gpus, device), precision=precision, track=track)


