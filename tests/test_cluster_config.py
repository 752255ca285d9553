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


def test_the_local_autoscaling_cluster_is_built_from_cluster_yaml() -> None:
    """tests/test_autoscaling.py runs a real autoscaler on this config: cluster.yaml's node types, resources,
    worker counts and head, with only the cloud provider replaced and the idle timeout shortened."""
    from tests.autoscaler import FAKE_HEAD_TYPE, head_start_options, local_autoscaler_config

    local = local_autoscaler_config(CONFIG, gcs_address="127.0.0.1:6380", idle_timeout_minutes=0.25)
    validate_config(local)  # Ray's schema, as the monitor checks it
    workers = {n: t for n, t in CONFIG["available_node_types"].items() if n != CONFIG["head_node_type"]}
    assert set(local["available_node_types"]) == {*workers, FAKE_HEAD_TYPE}
    for name, spec in workers.items():
        ours = local["available_node_types"][name]
        assert (ours["resources"], ours["min_workers"], ours["max_workers"]) == (
            spec["resources"], spec["min_workers"], spec["max_workers"])
    head = CONFIG["available_node_types"][CONFIG["head_node_type"]]["resources"]
    assert local["available_node_types"][FAKE_HEAD_TYPE]["resources"] == head
    assert head_start_options(CONFIG) == ["--num-cpus=0", "--num-gpus=0"]  # no trial on the head
    assert (local["max_workers"], local["upscaling_speed"]) == (CONFIG["max_workers"], CONFIG["upscaling_speed"])
    assert local["idle_timeout_minutes"] == 0.25 and local["provider"]["type"] == "fake_multinode"
    # Derived, not copied: an edit of cluster.yaml is what the local cluster runs.
    edited = {**CONFIG, "available_node_types": {**CONFIG["available_node_types"],
                                                 "gpu_small": {**workers["gpu_small"], "max_workers": 3}}}
    assert local_autoscaler_config(edited, gcs_address="x:1", idle_timeout_minutes=1)[
        "available_node_types"]["gpu_small"]["max_workers"] == 3
