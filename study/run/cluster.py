"""The Ray cluster a study runs on: starting or joining it, and whether a trial (its study.trial.resources) fits.

Nothing here knows about trials' contents: ``study.run.runner`` plans the trials, ``study.run.tuner`` hands them to
Ray Tune, and ``study.trial.entry`` is what a Ray worker runs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ray

from core.errors import one_line
from search_spaces.schema import StudyError
from study.trial.resources import Resources

if TYPE_CHECKING:
    from study.run.capacity import Autoscaler

Echo = Callable[[str], None]


class ClusterError(StudyError):
    """Ray could not be started or reached: not the input's fault (the CLI's exit status 1, not 2)."""

    exit_code = 1


#: How long a connection to ``--address`` may take before the run gives up with one line (the issue's bound is 30 s).
CONNECT_TIMEOUT_S = 20.0
PROBE_TIMEOUT_S = 5.0


class AddressError(StudyError):
    """No Ray cluster answers at ``--address``: bad input (exit status 2), said in one line naming the address."""


def start_ray(address: str | None, echo: Echo) -> None:
    """Connect to a Ray cluster (`address`) or start the embedded local one, with the study's plugins in its job's
    ``runtime_env`` (trainables.plugins.runtime_env: their code travels to every node, and every worker imports them
    before a trial runs). With ``address``, a cluster that does not answer is an AddressError within
    ``PROBE_TIMEOUT_S + CONNECT_TIMEOUT_S``, without Ray's own log lines."""
    from trainables.plugins import runtime_env

    if ray.is_initialized():
        return
    started = time.time()
    env = runtime_env()
    try:
        if address:
            _probe(address)
            _within(CONNECT_TIMEOUT_S, address, lambda: ray.init(
                address=address, logging_level=logging.ERROR, log_to_driver=False, runtime_env=env))
        else:
            # "local": always a fresh Ray of our own; a bare init() would join any cluster that `ray start`
            # left recorded in /tmp/ray (even a dead one) and hang.
            _init_local(env, echo)
    except ConnectionError as error:  # `auto` with no cluster recorded on this machine, a refused connection
        why = one_line(error, typed=False)
        raise AddressError(f"invalid --address {address!r}: {why}; allowed: {_ADDRESSES}") from None
    except OSError as error:  # a broken Ray install, an unreachable cluster: not the storage's fault
        where = f"connect to the Ray cluster at {address!r}" if address else "start a local Ray"
        raise ClusterError(f"could not {where}: {one_line(error, typed=False)}") from None
    resources = ray.cluster_resources()
    echo(f"ray: {int(resources.get('CPU', 0))} CPUs, {resources.get('GPU', 0):g} GPUs "
         f"({'cluster ' + address if address else 'local'}, {time.time() - started:.1f} s to start)")


def _init_local(env: dict[str, Any] | None, echo: Echo) -> None:
    """A fresh local Ray; up to twice more if its raylet did not register within Ray's fixed 30 s (seen on this 2-core
    machine at a load average of 10-18)."""
    for attempt in (1, 2, 3):
        try:
            ray.init(address="local", include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False,
                     runtime_env=env)
            return
        except Exception as error:  # noqa: BLE001 - Ray raises a bare Exception for this timeout
            if attempt == 3 or "timed out during startup" not in str(error):
                raise
            ray.shutdown()
            echo("ray: the local node did not register within Ray's 30 s (a loaded machine?): starting it again")


_ADDRESSES = ("the HOST:PORT of a running Ray head (as `ray start --head` prints it), auto (the cluster started on "
              "this machine), or no --address for a local Ray")


def _probe(address: str) -> None:
    """A HOST:PORT address must accept a TCP connection within ``PROBE_TIMEOUT_S`` (Ray itself would retry for
    minutes, logging as it goes); ``auto`` and ``ray://`` addresses are left to Ray."""
    import socket

    if address == "auto" or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise AddressError(f"invalid --address {address!r}; allowed: {_ADDRESSES}")
    try:
        with socket.create_connection((host, int(port)), timeout=PROBE_TIMEOUT_S):
            pass
    except OSError as error:
        why = "timed out" if isinstance(error, TimeoutError) else (error.strerror or type(error).__name__).lower()
        raise AddressError(f"invalid --address {address!r}: no Ray cluster answers there ({why}); "
                           f"allowed: {_ADDRESSES}") from None


def _within(seconds: float, address: str, connect: Callable[[], object]) -> None:
    """Run ``connect`` (ray.init) in a daemon thread; an AddressError if it has not returned after ``seconds`` (a
    port that answers but is no Ray head), else its own exception if it raised one."""
    import threading

    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            connect()
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - handed to the caller's thread
            outcome.append(error)

    thread = threading.Thread(target=attempt, daemon=True, name="ray-connect")
    thread.start()
    thread.join(seconds)
    if not outcome:
        raise AddressError(f"invalid --address {address!r}: the port answers, but no Ray cluster answered there "
                           f"within {seconds:.0f} s; allowed: {_ADDRESSES}")
    if outcome[0] is not None:
        raise outcome[0]


def check_resources(resources: Resources, *, address: str | None = None, echo: Echo = print) -> int:
    """Fail fast when the cluster can never place a trial; returns the default concurrency.

    Counted node by node (a trial needs its CPUs and its GPU fraction on one node). With `address`, an
    autoscaler's configuration on this machine (study.run.capacity) adds the workers it may launch: a study
    then starts on a cluster with no GPU node yet, and its default concurrency is that of full scale.
    """
    from study.run.capacity import cluster_capacity, read_autoscaler

    nodes = [{k: float(v) for k, v in n["Resources"].items()} for n in ray.nodes() if n["Alive"]]
    autoscaler = read_autoscaler() if address else None
    cpus, gpus = resources.cpus_per_trial, resources.gpus_per_trial
    capacity = cluster_capacity(nodes, autoscaler, cpus, gpus)
    if capacity.at_full_scale == 0:
        raise StudyError(_no_room(nodes, autoscaler, resources))
    if autoscaler is not None:
        echo(f"ray: room for {capacity.now} trials on the nodes alive now, {capacity.at_full_scale} at full scale "
             f"({autoscaler.describe()})")
    return capacity.at_full_scale


def _no_room(nodes: list[dict[str, float]], autoscaler: Autoscaler | None, resources: Resources) -> str:
    """The one-line reason why no node (alive, or of the autoscaler's types) can hold a trial."""
    shapes = nodes + [dict(t.resources) for t in (autoscaler.node_types if autoscaler else ())]
    also = f" and its {autoscaler.describe()}" if autoscaler else ""
    total_gpus = sum(n.get("GPU", 0.0) for n in nodes)
    total_cpus = sum(n.get("CPU", 0.0) for n in nodes)
    most_gpus = max((n.get("GPU", 0.0) for n in shapes), default=0.0)
    most_cpus = max((n.get("CPU", 0.0) for n in shapes), default=0.0)
    if resources.gpus_per_trial > most_gpus:
        allowed = "0 here (trials would wait forever)" if most_gpus == 0 else f"at most {most_gpus:g} (one node's)"
        return (f"invalid --gpus-per-trial {resources.gpus_per_trial:g}: the Ray cluster has {total_gpus:g} GPUs"
                f"{also}; allowed: {allowed}")
    if resources.cpus_per_trial > most_cpus:
        return (f"invalid --cpus-per-trial {resources.cpus_per_trial:g}: the Ray cluster has {total_cpus:g} CPUs"
                f"{also}; allowed: at most {most_cpus:g} (one node's)")
    return (f"invalid --cpus-per-trial {resources.cpus_per_trial:g} with --gpus-per-trial "
            f"{resources.gpus_per_trial:g}: no node of the Ray cluster{also} has both; allowed: what one node has")


