"""cluster.yaml is a valid Ray autoscaler configuration with the properties the README promises.

Validated with Ray's own schema; launching it needs a cloud account, which cannot exist here.
"""

from pathlib import Path

import pytest
import yaml
from ray.autoscaler._private.util import fillout_defaults, validate_config

CONFIG = yaml.safe_load((Path(__file__).parent.parent / "cluster.yaml").read_text())


def test_cluster_yaml_passes_rays_schema() -> None:
    validate_config(fillout_defaults(CONFIG))
    broken = {**CONFIG, "available_node_types": {**CONFIG["available_node_types"], "typo": {"node_config": {}}}}
    with pytest.raises(Exception, match="'resources' is a required property"):
        validate_config(fillout_defaults(broken))


def test_head_without_gpu_and_gpu_workers_that_scale_to_zero() -> None:
    types = CONFIG["available_node_types"]
    head = types[CONFIG["head_node_type"]]
    assert head["resources"].get("GPU", 0) == 0 and head["resources"]["CPU"] == 0
    workers = [t for name, t in types.items() if name != CONFIG["head_node_type"]]
    assert workers and all(t["resources"]["GPU"] >= 1 and t["min_workers"] == 0 and t["max_workers"] >= 1
                           for t in workers)
    assert 0 < CONFIG["idle_timeout_minutes"] <= 10


def test_dashboard_stays_on_localhost_and_results_never_travel() -> None:
    head_start = " ".join(CONFIG["head_start_ray_commands"])
    assert "--dashboard-host=127.0.0.1" in head_start
    assert "0.0.0.0" not in (Path(__file__).parent.parent / "cluster.yaml").read_text()
    assert {"results/", ".venv/"} <= set(CONFIG["rsync_exclude"])
    setup = CONFIG["setup_commands"]
    torch_step = next(i for i, c in enumerate(setup) if "torch" in c)
    project_step = next(i for i, c in enumerate(setup) if "-e ~/attention-studies" in c)
    assert torch_step < project_step
