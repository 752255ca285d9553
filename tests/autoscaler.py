"""A real Ray autoscaler on this machine, configured from cluster.yaml (the test harness of test_autoscaling.py).

Ray's own local autoscaling harness: `RAY_FAKE_CLUSTER=1 ray start --head --autoscaling-config=...` runs the
real autoscaler (Ray's monitor process) with the *fake multi-node* node provider, which "launches" a node by
starting a real raylet on this machine with the resources its node type declares, GPUs included (Ray docs,
"Testing Autoscaling Locally"). Only the cloud is replaced: AWS instance types, images, spot markets, SSH
and setup commands cannot exist here. Everything that decides scaling comes from cluster.yaml itself.

`ray.cluster_utils.AutoscalingCluster` wraps the same thing but starts and stops with `ray stop --force`,
which would kill every Ray process on the machine (other people's clusters included); this harness starts
the head in a session of its own, stops exactly that session, and keeps its files in a temporary
directory (not /tmp/ray, so no other `ray.init()` can find it).

`python -m tests.autoscaler watch ADDRESS FILE` is the watcher: it appends the alive nodes of the cluster to
FILE as JSON lines (4 per second) while a test runs, read back by :meth:`LocalAutoscalingCluster.snapshots`.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from tests.cli import RAY, TOKEN_AUTH, free_port

ROOT = Path(__file__).resolve().parent.parent
CLUSTER_YAML = ROOT / "cluster.yaml"
FAKE_PROVIDER = {  # Ray's local node provider, and what it cannot do (update nodes over SSH)
    "type": "fake_multinode", "use_node_id_as_ip": True, "disable_node_updaters": True,
    "disable_launch_config_check": True,
}
FAKE_HEAD_TYPE = "ray.head.default"  # the fake provider tags the head with this node type name
#: Ray's knobs for the daemons of the test cluster's nodes (the fake provider starts worker nodes with the head's
#: environment, and no option turns their log monitors off): what polls for nothing a test reads.
QUIET_NODES = {
    "RAY_memory_monitor_refresh_ms": "0",  # the raylet's OOM killer reads /proc every 250 ms
    "RAY_LOG_MONITOR_MANY_FILES_THRESHOLD": "0", "LOG_NAME_UPDATE_INTERVAL_S": "30",  # a glob of logs/ every 0.5 s
}
_NO_CLOUD = {  # provider-side parts of a cluster config; the fake provider runs none of them
    "auth": {}, "docker": {}, "file_mounts": {}, "cluster_synced_files": [], "file_mounts_sync_continuously": False,
    "rsync_exclude": [], "rsync_filter": [], "initialization_commands": [], "setup_commands": [],
    "head_setup_commands": [], "worker_setup_commands": [], "head_start_ray_commands": [],
    "worker_start_ray_commands": [],
}


def local_autoscaler_config(cluster: dict[str, Any], *, gcs_address: str,
                            idle_timeout_minutes: float) -> dict[str, Any]:
    """cluster.yaml as an autoscaler config for this machine: the same node types (resources, min and max
    workers), worker cap and upscaling speed; the fake provider instead of AWS; a shorter idle timeout."""
    head = cluster["head_node_type"]
    types: dict[str, Any] = {}
    for name, spec in cluster["available_node_types"].items():
        local: dict[str, Any] = {"resources": dict(spec["resources"]), "node_config": {}}  # node_config: the instance
        if name == head:
            types[FAKE_HEAD_TYPE] = {**local, "max_workers": 0}
        else:
            types[name] = {**local, "min_workers": spec.get("min_workers", 0), "max_workers": spec["max_workers"]}
    return {
        **_NO_CLOUD,
        "cluster_name": f"{cluster['cluster_name']}-local",
        "max_workers": cluster["max_workers"],
        "upscaling_speed": cluster.get("upscaling_speed", 1.0),
        "idle_timeout_minutes": idle_timeout_minutes,
        "provider": {**FAKE_PROVIDER, "gcs_address": gcs_address},
        "available_node_types": types,
        "head_node_type": FAKE_HEAD_TYPE,
    }


def head_start_options(cluster: dict[str, Any]) -> list[str]:
    """`ray start --head` options for the head's declared resources (cluster.yaml: 0 CPUs, so no trial runs there)."""
    resources = dict(cluster["available_node_types"][cluster["head_node_type"]]["resources"])
    options = [f"--num-cpus={int(resources.pop('CPU', 0))}", f"--num-gpus={int(resources.pop('GPU', 0))}"]
    if resources:
        options.append(f"--resources={json.dumps(resources)}")
    return options


def no_such_gpus(cluster: dict[str, Any]) -> str:
    """CUDA_VISIBLE_DEVICES for the cluster's nodes (the fake provider starts workers with the head's
    environment): as many GPU ids as the largest node type declares, none of them a real device.

    Ray checks a node's declared GPUs against this list and hands each GPU trial one id of it; CUDA shows
    no device for an index past the last real one. So a trial on a declared GPU finds no CUDA even on a
    machine that has a GPU, and the tests see the same cluster on a GPU machine as on a laptop."""
    most = max(int(spec["resources"].get("GPU", 0)) for spec in cluster["available_node_types"].values())
    return ",".join(str(1000 + i) for i in range(most))


def _die_with_parent() -> None:
    """Popen preexec: SIGKILL this child if the test process dies (Linux), so nothing outlives a killed pytest."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def session_pids(session: int) -> list[int]:
    """Live (not zombie) processes of a session: everything a `ray start` in a new session started."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            if os.getsid(int(entry.name)) == session and stat.rsplit(")", 1)[1].split()[0] != "Z":
                pids.append(int(entry.name))
        except (OSError, IndexError):
            continue  # gone meanwhile
    return pids


def _parent(pid: int) -> int:
    try:
        return int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@dataclasses.dataclass
class LocalAutoscalingCluster:
    """A running local autoscaling cluster: its address, config, files and the processes that are it."""

    address: str
    config: dict[str, Any]
    config_path: Path
    directory: Path
    head: subprocess.Popen
    watcher: subprocess.Popen | None = None

    @property
    def watch_file(self) -> Path:
        return self.directory / "nodes.jsonl"

    def snapshots(self) -> list[dict[str, Any]]:
        """What the watcher saw: ``{"t": time, "nodes": {node_id: resources}}`` per poll, oldest first."""
        if not self.watch_file.exists():
            return []
        seen = []
        for line in self.watch_file.read_text().splitlines():
            with contextlib.suppress(json.JSONDecodeError):  # the line being written
                seen.append(json.loads(line))
        return seen

    def workers(self) -> dict[str, dict[str, float]]:
        """The alive worker nodes (node id -> resources) at the watcher's latest poll."""
        seen = self.snapshots()
        return {k: v for k, v in seen[-1]["nodes"].items() if "node:__internal_head__" not in v} if seen else {}

    def wait_for(self, what: str, condition: Callable[[], bool], timeout: float) -> float:
        """Poll `condition` until true; returns the seconds waited, fails the test with `what` on timeout."""
        started = time.time()
        while not condition():
            if time.time() - started > timeout:
                raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; nodes: "
                                     f"{self.snapshots()[-1:]}; head log: {self.head_log()[-2000:]}")
            time.sleep(0.25)
        return time.time() - started

    def head_log(self) -> str:
        logs = sorted(self.directory.glob("session_*/logs/monitor.log"))
        text = (self.directory / "head.log").read_text(errors="replace")
        return text + (logs[-1].read_text(errors="replace")[-3000:] if logs else "")

    def kill_node(self, node_id: str) -> list[int]:
        """SIGKILL one worker node as a lost machine: its raylet, its agents and every process they started
        (the trial workers first, so that none of them writes a result after its node is gone)."""
        ours = session_pids(self.head.pid)
        node = {pid for pid in ours if f"node_id={node_id}" in _cmdline(pid) or f"node-id={node_id}" in _cmdline(pid)}
        parents = {pid: _parent(pid) for pid in ours}
        victims, frontier = set(node), set(node)
        while frontier:
            frontier = {pid for pid, parent in parents.items() if parent in frontier} - victims
            victims |= frontier
        for pid in sorted(victims, key=lambda pid: pid in node):  # children before the node's own processes
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return sorted(victims)

    def raylets(self) -> list[int]:
        """The raylet processes of this cluster (the head's and one per worker node)."""
        return [pid for pid in session_pids(self.head.pid) if "/raylet/raylet " in _cmdline(pid)]

    def stop(self) -> None:
        """Stop this cluster's processes only (its session), SIGTERM then SIGKILL; remove its files."""
        if self.watcher is not None and self.watcher.poll() is None:
            self.watcher.kill()
            self.watcher.wait()
        for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 10.0)):
            for pid in session_pids(self.head.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            deadline = time.time() + grace
            while session_pids(self.head.pid) and time.time() < deadline:
                time.sleep(0.1)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.head.wait(timeout=5)
        left = session_pids(self.head.pid)
        shutil.rmtree(self.directory, ignore_errors=True)
        if left:
            raise RuntimeError(f"Ray processes of the local autoscaling cluster survived SIGKILL: {left}")


def ray_env(**extra: str) -> dict[str, str]:
    """Environment of the cluster's processes and of drivers: token auth (Ray >= 2.60), the checkout importable."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, **TOKEN_AUTH, "PYTHONPATH": path, **extra}


@contextlib.contextmanager
def local_autoscaling_cluster(cluster_yaml: Path = CLUSTER_YAML, *, idle_timeout_minutes: float = 0.1,
                              start_timeout: float = 90.0) -> Iterator[LocalAutoscalingCluster]:
    """Start the head of a local autoscaling cluster built from `cluster_yaml`; stop it however the block ends."""
    cluster = yaml.safe_load(cluster_yaml.read_text())
    port = free_port()
    address = f"127.0.0.1:{port}"
    # Short: Unix socket paths under it must stay below 108 bytes.
    directory = Path(tempfile.mkdtemp(prefix="ras-", dir="/tmp"))
    config = local_autoscaler_config(cluster, gcs_address=address, idle_timeout_minutes=idle_timeout_minutes)
    config_path = directory / "autoscaler.yaml"
    config_path.write_text(yaml.safe_dump(config))
    command = [RAY, "start", "--head", "--block", f"--port={port}", "--node-ip-address=127.0.0.1",
               *head_start_options(cluster), "--include-dashboard=false", "--disable-usage-stats",
               "--include-log-monitor=false",  # no driver here reads worker output (log_to_driver=False)
               f"--autoscaling-config={config_path}", f"--temp-dir={directory}"]
    env = ray_env(RAY_FAKE_CLUSTER="1", AUTOSCALER_UPDATE_INTERVAL_S="1",
                  CUDA_VISIBLE_DEVICES=no_such_gpus(cluster), **QUIET_NODES)
    with open(directory / "head.log", "w") as log:
        head = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=env,
                                start_new_session=True, preexec_fn=_die_with_parent)
    running = LocalAutoscalingCluster(address=address, config=config, config_path=config_path,
                                      directory=directory, head=head)
    try:
        running.watcher = subprocess.Popen(
            [sys.executable, "-m", "tests.autoscaler", "watch", address, str(running.watch_file)],
            cwd=ROOT, env=ray_env(), stdout=subprocess.DEVNULL, stderr=open(directory / "watcher.log", "w"),
            preexec_fn=_die_with_parent)
        running.wait_for("the head node", lambda: bool(running.snapshots()) and head.poll() is None, start_timeout)
        yield running
    finally:
        running.stop()


def watch(address: str, out: Path, interval: float = 0.25) -> None:
    """Append ``{"t", "nodes": {node_id: resources}}`` of the alive nodes to `out` until killed."""
    from ray._raylet import GcsClient
    from ray.core.generated.gcs_pb2 import GcsNodeInfo

    client = None
    with open(out, "a") as handle:
        while True:
            try:
                client = client or GcsClient(address=address)
                nodes = client.get_all_node_info(timeout=5)
            except Exception:  # the head is still starting (or gone): try again
                client = None
                time.sleep(interval)
                continue
            alive = {node_id.hex(): dict(info.resources_total) for node_id, info in nodes.items()
                     if info.state == GcsNodeInfo.ALIVE}
            handle.write(json.dumps({"t": time.time(), "nodes": alive}) + "\n")
            handle.flush()
            time.sleep(interval)


if __name__ == "__main__":
    if sys.argv[1:2] == ["watch"] and len(sys.argv) == 4:
        watch(sys.argv[2], Path(sys.argv[3]))
    else:
        sys.exit("usage: python -m tests.autoscaler watch ADDRESS FILE")
