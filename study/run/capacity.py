"""How many trials a Ray cluster can run at once: now, and once its autoscaler has added every worker it may.

A trial must fit on one node (its CPUs and its GPU fraction both), so capacity is counted node by node.
On a cluster that `ray up` launched, the autoscaler's configuration (node types, their resources, their
maximum counts) lies on the head node at ``~/ray_bootstrap_config.yaml``; `study run --address` reads it
there, or where ``STUDY_AUTOSCALER_CONFIG`` points. Without it, only the nodes alive now count: a GPU
request on a cluster with no GPU node then fails at once instead of waiting forever.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

AUTOSCALER_CONFIG_ENV = "STUDY_AUTOSCALER_CONFIG"
DEFAULT_AUTOSCALER_CONFIG = "~/ray_bootstrap_config.yaml"  # where `ray up` writes it on the head node
_EPS = 1e-9  # Ray keeps resources to 1e-4; 1 / 0.25 must give 4, not 3.9999


@dataclasses.dataclass(frozen=True)
class NodeType:
    """A worker node type of an autoscaler configuration."""

    name: str
    resources: Mapping[str, float]
    min_workers: int
    max_workers: int

    def describe(self) -> str:
        """``gpu_small (4 CPU, 1 GPU) x 0-12``."""
        return (f"{self.name} ({self.resources.get('CPU', 0):g} CPU, {self.resources.get('GPU', 0):g} GPU) "
                f"x {self.min_workers}-{self.max_workers}")


@dataclasses.dataclass(frozen=True)
class Autoscaler:
    """The part of an autoscaler configuration that decides what it can add: worker types and the cap."""

    source: str
    node_types: tuple[NodeType, ...]
    max_workers: int

    @classmethod
    def from_config(cls, config: Mapping[str, Any], source: str) -> Autoscaler:
        """From a Ray autoscaler configuration (cluster.yaml, or the head's bootstrap copy of it)."""
        head = config.get("head_node_type")
        cap = int(config.get("max_workers", 2))  # Ray's default for the cluster, and for a type without one
        types = tuple(
            NodeType(name=name, resources={k: float(v) for k, v in (spec.get("resources") or {}).items()},
                     min_workers=int(spec.get("min_workers", 0)), max_workers=int(spec.get("max_workers", cap)))
            for name, spec in (config.get("available_node_types") or {}).items() if name != head
        )
        return cls(source=source, node_types=types, max_workers=cap)

    def capacity(self, cpus_per_trial: float, gpus_per_trial: float) -> int:
        """Trials at once with every worker it may add: the roomiest types first, up to `max_workers` nodes."""
        fits = sorted((trials_per_node(t.resources, cpus_per_trial, gpus_per_trial), t.max_workers)
                      for t in self.node_types)
        total, nodes_left = 0, self.max_workers
        for per_node, count in reversed(fits):
            take = min(count, nodes_left)
            total += per_node * take
            nodes_left -= take
        return total

    def describe(self) -> str:
        """One line: where it was read and what it adds."""
        types = ", ".join(t.describe() for t in self.node_types) or "no worker types"
        return f"autoscaler ({self.source}): {types}, at most {self.max_workers} workers"


def trials_per_node(resources: Mapping[str, float], cpus_per_trial: float, gpus_per_trial: float) -> int:
    """How many trials of (CPUs, GPU fraction) one node with `resources` holds at once."""
    by_cpu = math.floor(resources.get("CPU", 0.0) / cpus_per_trial + _EPS)
    if gpus_per_trial <= 0:
        return by_cpu
    return min(by_cpu, math.floor(resources.get("GPU", 0.0) / gpus_per_trial + _EPS))


def read_autoscaler(path: str | None = None) -> Autoscaler | None:
    """The autoscaler configuration on this machine (`path`, ``$STUDY_AUTOSCALER_CONFIG`` or the head's
    bootstrap file), or None when there is none."""
    import yaml

    from core.errors import one_line
    from search_spaces.schema import StudyError

    location = Path(os.path.expanduser(path or os.environ.get(AUTOSCALER_CONFIG_ENV) or DEFAULT_AUTOSCALER_CONFIG))
    if not location.is_file():
        return None
    try:
        config = yaml.safe_load(location.read_text())
        if not isinstance(config, dict):
            raise ValueError("not a mapping")
        return Autoscaler.from_config(config, str(location))
    except (yaml.YAMLError, ValueError, TypeError, AttributeError) as error:
        raise StudyError(f"invalid autoscaler config {location}: {one_line(error, typed=False)}; allowed: a Ray "
                         "cluster YAML (available_node_types with resources)") from None


@dataclasses.dataclass(frozen=True)
class Capacity:
    """Trials at once: on the nodes alive now, and at full scale (equal without an autoscaler)."""

    now: int
    at_full_scale: int


def cluster_capacity(nodes: Iterable[Mapping[str, float]], autoscaler: Autoscaler | None,
                     cpus_per_trial: float, gpus_per_trial: float) -> Capacity:
    """`nodes`: the total resources of each alive node (the head included, marked by Ray's
    ``node:__internal_head__`` resource); autoscaled workers replace the alive ones at full scale."""
    nodes = list(nodes)
    now = sum(trials_per_node(n, cpus_per_trial, gpus_per_trial) for n in nodes)
    if autoscaler is None:
        return Capacity(now=now, at_full_scale=now)
    head = sum(trials_per_node(n, cpus_per_trial, gpus_per_trial) for n in nodes if "node:__internal_head__" in n)
    return Capacity(now=now, at_full_scale=max(now, head + autoscaler.capacity(cpus_per_trial, gpus_per_trial)))
