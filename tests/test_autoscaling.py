"""Autoscaling and fractional GPUs, on a real Ray autoscaler built from cluster.yaml (issue 17).

Fast tests: the device policy (no silent CPU fallback), packing on GPU trials, the cluster's capacity at full
scale. Slow tests (one local autoscaling cluster for the module, tests/autoscaler.py): `study run` scales the
cluster up from zero simulated-GPU workers, shares each GPU among at most 4 trials, scales back down; a GPU
trial on a node without CUDA fails with one line; a worker killed mid-study loses only its running trials.
What can't exist here is replaced and only that: the cloud (Ray's fake node provider starts real raylets on
this machine) and CUDA (GPUs the nodes declare; `--simulated-gpus` lets their trials train on the CPU).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
import yaml

from search_spaces import StudyError
from study.run.capacity import AUTOSCALER_CONFIG_ENV, Autoscaler, cluster_capacity, read_autoscaler, trials_per_node
from study.trial.devices import DeviceError, packing_device, trial_device
from tests.autoscaler import CLUSTER_YAML, LocalAutoscalingCluster, local_autoscaling_cluster, no_such_gpus, ray_env
from tests.cli import STUDY, finished_trials, rows
from tests.test_study_cli import STUDIES

CONFIG = yaml.safe_load(CLUSTER_YAML.read_text())


def no_cuda() -> tuple[bool, str]:
    """A stand-in for CUDA's absence (a CPU build of torch): the probe `trial_device` calls."""
    return False, "torch 2.13.0+cpu"


# ---------------------------------------------------------------- the device policy (fast)

def test_a_gpu_trial_without_cuda_fails_with_one_line() -> None:
    with pytest.raises(DeviceError) as error:
        trial_device(0.25, where="node 10.0.0.7", probe=no_cuda)
    assert str(error.value) == (
        "trial asked for 0.25 GPU but CUDA is unavailable on node 10.0.0.7 (torch 2.13.0+cpu): a misconfigured "
        "GPU node; only `study run --simulated-gpus` (GPUs that a test cluster declares but does not have) "
        "trains GPU trials on the CPU")
    assert "\n" not in str(error.value)


def test_the_real_probe_agrees_with_torch() -> None:
    """On the project's laptops (CPU build of torch) a GPU trial is refused; on a GPU machine it gets CUDA."""
    import torch

    if torch.cuda.is_available():
        assert trial_device(1.0) == f"cuda:{torch.cuda.current_device()}"
        return
    with pytest.raises(DeviceError, match=r"^trial asked for 1 GPU but CUDA is unavailable on this node \(torch "):
        trial_device(1.0)


@pytest.mark.slow  # a Python subprocess
def test_the_local_clusters_gpus_are_never_real() -> None:
    """Its GPU ids cover the largest node type, and torch sees no device through any of them (also on a GPU
    machine, where the trials of the local cluster must not reach the real GPU)."""
    ids = no_such_gpus(CONFIG)
    assert ids == "1000,1001,1002,1003"  # cluster.yaml's largest worker declares 4 GPUs
    count = "import torch; print(torch.cuda.device_count())"
    for one in (ids, ids.split(",")[-1]):  # a node's list, and what Ray sets for a trial given one GPU of it
        out = subprocess.run([sys.executable, "-c", count], env={**os.environ, "CUDA_VISIBLE_DEVICES": one},
                             capture_output=True, text=True, check=True, timeout=60)
        assert out.stdout.strip() == "0", (one, out.stdout)


def test_devices_cpu_trials_cuda_and_the_explicit_simulation() -> None:
    assert trial_device(0.0, probe=lambda: pytest.fail("CPU trials never probe CUDA")) == "cpu"
    assert trial_device(0.25, probe=lambda: (True, "cuda:0")) == "cuda:0"
    assert trial_device(0.25, probe=lambda: (True, "cuda:0"), simulated_gpus=True) == "cuda:0"  # real GPU wins
    assert trial_device(0.25, probe=no_cuda, simulated_gpus=True) == "cpu"


def test_packing_is_on_for_gpu_trials_unless_chosen() -> None:
    """One function decides (trainables.families.packs); a GPU trial decides as on a GPU, simulated or not."""
    from trainables.catalog import families
    from trainables.families import packs

    richter, gros, ctl, measure = (families().get(n) for n in ("richter2020", "gros2024", "csordas2021",
                                                               "pooling_scale"))
    assert packing_device(0.25, "cpu") == "cuda" and packing_device(0.25, "cuda:0") == "cuda:0"
    assert packing_device(0.0, "cpu") == "cpu"
    from trainables.families import PackingWarning

    assert packs(richter, "auto", packing_device(0.25, "cpu")) and not packs(richter, "auto", "cpu")
    assert packs(gros, "auto", "cpu") and not packs(gros, "off", "cuda:0")
    assert packs(ctl, "auto", packing_device(0.25, "cpu")) and not packs(ctl, "auto", "cpu")
    with pytest.warns(PackingWarning, match="--packing on cannot be honoured"):
        assert not packs(measure, "on", "cuda:0")  # a measurement's seeds do not stack: said, never silently ignored
    assert not packs(richter, "off", "cuda:0") and packs(richter, "on", "cpu")
    with pytest.warns(PackingWarning, match="--packing off cannot be honoured"):
        assert packs(richter, "off", "cpu", n_configs=2)  # packed learning rates: one model


class _Chosen(Exception):
    """Raised by a spy once the loop was called: the packing it was given is recorded."""


@pytest.mark.parametrize(("gpus", "pack"), [(0.25, "auto"), (0.0, 1)])
def test_a_simulated_gpu_trial_trains_packed(gpus: float, pack: object, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """What the runner passes run_trial: a GPU trial training on the CPU packs as on a GPU, a CPU trial not."""
    import trainables.richter2020.family as family
    from study.results.storage import StudyStorage
    from study.trial.resources import Resources
    from study.trial.trainable import run_trial
    from tests.studies_for_tests import AUTOSCALE

    asked: list[object] = []

    def spy(*args: object, **kw: object) -> list[dict[str, object]]:
        asked.append(kw["pack"])
        raise _Chosen  # the choice is made: no need to train

    monkeypatch.setattr(family, "train_members", spy)
    with pytest.raises(_Chosen):
        run_trial(AUTOSCALE, StudyStorage(str(tmp_path), AUTOSCALE.directory),
                  {"architecture": "sum", "learning_rate": 0.03},
                  resources=Resources(gpus_per_trial=gpus, simulated_gpus=gpus > 0), device="cpu")
    assert asked == [pack]


def test_tunes_log_of_a_failed_attempt_keeps_the_errors_last_line() -> None:
    import logging
    import sys

    from study.run.tuner import _OneLineTrialErrors

    try:
        raise DeviceError("remote traceback, then\nstudy.trial.devices.DeviceError: trial asked for 0.25 GPU ...")
    except DeviceError:
        record = logging.LogRecord("ray.tune", logging.ERROR, __file__, 1, "Trial task failed for trial %s",
                                   ("t_00000",), sys.exc_info())
    assert _OneLineTrialErrors().filter(record)
    assert record.getMessage() == "Trial task failed for trial t_00000: study.trial.devices.DeviceError: trial asked " \
                                  "for 0.25 GPU ..."
    assert record.exc_info is None and "\n" not in logging.Formatter().format(record)


def test_a_trial_lost_with_its_node_gets_one_more_pass_but_not_a_trial_that_raised(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from ray import cloudpickle
    from ray.exceptions import ActorUnavailableError, RayTaskError

    from study.run.tuner import _LostTrials

    def trial(name: str, error: Exception | None) -> SimpleNamespace:
        path = tmp_path / f"{name}.pkl"
        if error is not None:
            path.write_bytes(cloudpickle.dumps(error))
        return SimpleNamespace(pickled_error_file=str(path), config={"trial": {"point": {"name": name}, "seeds": [0]}})

    try:
        raise DeviceError("trial asked for 0.25 GPU but CUDA is unavailable")
    except DeviceError as error:
        raised = RayTaskError("train", "Traceback ...", error)
    lost = _LostTrials()
    for t in (trial("node_lost", ActorUnavailableError("Socket closed", None)), trial("raised", raised),
              trial("no_file", None)):
        lost.on_trial_error(0, [], t)
    assert lost.configs == [{"point": {"name": "node_lost"}, "seeds": [0]}]


def test_simulated_gpus_need_a_gpu_request() -> None:
    from study.trial.resources import Resources

    with pytest.raises(StudyError, match=r"^invalid --simulated-gpus with --gpus-per-trial 0; allowed: only with"):
        Resources(simulated_gpus=True)
    assert Resources(gpus_per_trial=0.25, simulated_gpus=True).simulated_gpus


# ---------------------------------------------------------------- capacity (fast)

def test_trials_per_node_counts_cpus_and_gpu_fractions_on_one_node() -> None:
    gpu_node = {"CPU": 4.0, "GPU": 1.0}
    assert trials_per_node(gpu_node, 1.0, 0.25) == 4
    assert trials_per_node(gpu_node, 0.5, 0.25) == 4  # the GPU binds
    assert trials_per_node(gpu_node, 2.0, 0.25) == 2  # the CPUs bind
    assert trials_per_node(gpu_node, 1.0, 0.0) == 4
    assert trials_per_node({"CPU": 0.0}, 1.0, 0.0) == 0  # cluster.yaml's head
    assert trials_per_node({"CPU": 1.0, "GPU": 1.0}, 0.1, 0.1) == 10


def test_cluster_yaml_at_full_scale() -> None:
    autoscaler = Autoscaler.from_config(CONFIG, "cluster.yaml")
    assert [t.describe() for t in autoscaler.node_types] == ["gpu_small (4 CPU, 1 GPU) x 0-12",
                                                              "gpu_large (48 CPU, 4 GPU) x 0-4"]
    assert autoscaler.capacity(1.0, 0.25) == 12 * 4 + 4 * 16  # README: --gpus-per-trial 0.25
    assert autoscaler.capacity(1.0, 0.0) == 12 * 4 + 4 * 48
    head = {"CPU": 0.0, "node:__internal_head__": 1.0}
    assert cluster_capacity([head], autoscaler, 1.0, 0.25).now == 0
    assert cluster_capacity([head], autoscaler, 1.0, 0.25).at_full_scale == 112
    assert cluster_capacity([head], None, 1.0, 0.25).at_full_scale == 0
    # A cap on the workers of all types takes the roomiest nodes first.
    capped = Autoscaler.from_config({**CONFIG, "max_workers": 5}, "capped")
    assert capped.capacity(1.0, 0.25) == 4 * 16 + 1 * 4


def test_the_autoscaler_config_is_read_where_it_lies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(AUTOSCALER_CONFIG_ENV, str(tmp_path / "missing.yaml"))
    assert read_autoscaler() is None
    (tmp_path / "bootstrap.yaml").write_text(CLUSTER_YAML.read_text())
    monkeypatch.setenv(AUTOSCALER_CONFIG_ENV, str(tmp_path / "bootstrap.yaml"))
    found = read_autoscaler()
    assert found is not None and found.source == str(tmp_path / "bootstrap.yaml") and found.max_workers == 16
    (tmp_path / "broken.yaml").write_text("available_node_types: [unclosed\n")
    with pytest.raises(StudyError, match=rf"^invalid autoscaler config {tmp_path}/broken.yaml: .*; allowed: a Ray"):
        read_autoscaler(str(tmp_path / "broken.yaml"))
    # A node type without max_workers may grow to the cluster's cap, as Ray reads it.
    loose = {"max_workers": 3, "available_node_types": {"gpu": {"resources": {"CPU": 4, "GPU": 1}}}}
    assert Autoscaler.from_config(loose, "loose").capacity(1.0, 0.25) == 3 * 4


def test_a_request_no_node_can_hold_is_one_line() -> None:
    from study.run.cluster import _no_room
    from study.trial.resources import Resources

    laptop = [{"CPU": 2.0, "node:__internal_head__": 1.0}]
    assert _no_room(laptop, None, Resources(gpus_per_trial=0.25)) == (
        "invalid --gpus-per-trial 0.25: the Ray cluster has 0 GPUs; allowed: 0 here (trials would wait forever)")
    autoscaler = Autoscaler.from_config(CONFIG, "cluster.yaml")
    head = [{"CPU": 0.0, "node:__internal_head__": 1.0}]
    assert _no_room(head, autoscaler, Resources(gpus_per_trial=8)) == (
        "invalid --gpus-per-trial 8: the Ray cluster has 0 GPUs and its autoscaler (cluster.yaml): gpu_small "
        "(4 CPU, 1 GPU) x 0-12, gpu_large (48 CPU, 4 GPU) x 0-4, at most 16 workers; allowed: at most 4 (one node's)")
    assert _no_room(head, autoscaler, Resources(cpus_per_trial=64)).startswith(
        "invalid --cpus-per-trial 64: the Ray cluster has 0 CPUs and its autoscaler (cluster.yaml)")
    assert _no_room(head, autoscaler, Resources(cpus_per_trial=8, gpus_per_trial=2)).startswith(
        "invalid --cpus-per-trial 8 with --gpus-per-trial 2: no node of the Ray cluster and its autoscaler")


def test_peak_overlap_counts_trials_running_at_the_same_moment() -> None:
    assert _peak_overlap([(0, 2), (1, 3), (2, 4)]) == 2  # one ending as the next starts: not together
    assert _peak_overlap([(0, 10), (1, 2), (3, 4), (3.5, 5)]) == 3
    assert _peak_overlap([]) == 0


# ---------------------------------------------------------------- a real autoscaler (slow)

# cluster.yaml says 5 minutes. Not much shorter: a worker that starts slowly on this loaded 2-core machine
# (6 s from launch to joining) was removed as idle by a 6 s timeout before its trial actors got there.
IDLE_TIMEOUT_MINUTES = 0.25
GPU_FRACTION = 0.25
EIGHT = f"{STUDIES}:AUTOSCALE"  # 8 trials x 2 seeds x 3 evaluations, 120 steps each
# The kill lands after this many trials finished: the last pending trial has just started in the slot that the latest
# one freed, on the node to be killed (later, none may be pending, and that node may be idle).
KILL_AFTER = 3
# 8 trials, at most 5 at once: one more than a GPU worker holds, so that Ray's GPU fractions (not the concurrency) keep
# a GPU at 4 trials and a second worker is needed. Few: a trial process costs ~5 CPU s to start (torch, Ray Tune), and
# Tune started one for nearly every trial here (12-20 for 16 trials, 8 at once). One learning rate per trial: on GPUs
# `auto` would pack each architecture's 4 rates into one trial (2 trials, no waves to scale for).
RUN_OPTIONS = ("--gpus-per-trial", str(GPU_FRACTION), "--cpus-per-trial", "0.5", "--max-concurrent", "5",
               "--learning-rates-per-trial", "1")


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalAutoscalingCluster]:
    """One local autoscaling cluster from cluster.yaml for the slow tests; stopped (all its processes) at the end."""
    with local_autoscaling_cluster(idle_timeout_minutes=IDLE_TIMEOUT_MINUTES) as running:
        yield running
    assert not running.raylets(), "a raylet outlived the cluster"


def _study_run(cluster: LocalAutoscalingCluster, study: str, storage: Path, *options: str) -> subprocess.Popen:
    """`study run STUDY --address <the cluster>` as a user runs it on the head node (its own process group)."""
    return subprocess.Popen([*STUDY, "run", study, "--address", cluster.address, "--storage", str(storage), *options],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            env=ray_env(**{AUTOSCALER_CONFIG_ENV: str(cluster.config_path)}))


def _finish(driver: subprocess.Popen, timeout: float, cluster: LocalAutoscalingCluster | None = None) -> str:
    try:
        return driver.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        os.killpg(driver.pid, signal.SIGKILL)
        why = f"\nnodes: {cluster.snapshots()[-1:]}\nautoscaler: {cluster.head_log()[-4000:]}" if cluster else ""
        raise AssertionError(f"study run did not finish in {timeout:.0f} s: {driver.communicate()[0]}{why}") from None


def _no_workers(cluster: LocalAutoscalingCluster) -> float:
    """Wait until the autoscaler has removed every (idle) worker; returns the seconds waited."""
    return cluster.wait_for("idle workers to be removed", lambda: not cluster.workers(),
                            IDLE_TIMEOUT_MINUTES * 60 + 60)


def _trials(study_dir: Path) -> pl.DataFrame:
    """One row per trial: its node, and when it trained (it writes its rows at its end, `finished_at`; minus its
    training time, the longest `wall_time_s` of its rows, all seeds training together as one packed model)."""
    return (rows(study_dir).group_by("trial_key")
            .agg(pl.col("node_id").unique().first(), end=pl.col("finished_at").max(),
                 start=pl.col("finished_at").max() - pl.col("wall_time_s").max())
            .sort("trial_key"))


def _peak_overlap(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])  # an end before a start
    peak = running = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    return peak


def _assert_every_row_once(study_dir: Path, trials: int, seeds: int = 2, evaluations: int = 3) -> pl.DataFrame:
    df = rows(study_dir)  # the table and any trial file not folded yet
    assert df["trial_key"].n_unique() == trials and df.height == trials * seeds * evaluations
    assert df.select(pl.struct("trial_key", "seed", "step").is_unique().all()).item()
    return df


def _assert_trained_packed(df: pl.DataFrame, study_dir: Path) -> None:
    """Packing (on by default for GPU trials) ran through Ray: a trial's rows equal a packed run here, bit for
    bit, and differ from one seed after another (so this check can fail)."""
    from search_spaces import get_study
    from study.results.storage import StudyStorage
    from study.trial.resources import Resources
    from study.trial.trainable import run_trial
    from tests.golden.record import VOLATILE
    from trainables.plugins import record

    study = get_study(EIGHT, "smoke")
    key = df["trial_key"][0]
    ours = df.filter(pl.col("trial_key") == key).drop(VOLATILE).sort("seed", "step")
    point = {name: ours[name][0] for name in study.axes}
    local = {}
    for packed in (True, False):
        storage = StudyStorage(storage=str(study_dir.parent / f"local-{packed}"), directory=study.directory)
        resources = Resources(packing="on" if packed else "off")
        run_trial(study, storage, point, resources=resources, plugins=record())  # plugins: as the driver's
        local[packed] = pl.read_parquet(storage.trial_path(key)).drop(VOLATILE).sort("seed", "step")
    assert ours.equals(local[True].select(ours.columns)), "the cluster's trial did not train packed"
    assert not ours.equals(local[False].select(ours.columns))


@pytest.mark.slow
def test_scale_up_from_zero_share_gpus_lose_a_worker_and_scale_down(cluster: LocalAutoscalingCluster,
                                                                    tmp_path: Path, one_torch_thread: None) -> None:
    """Items 1, 2, 3 and 5 of issue 17 in one study on the cluster that cluster.yaml describes."""
    _no_workers(cluster)
    study_dir = tmp_path / "test.autoscale"
    started = time.time()
    driver = _study_run(cluster, EIGHT, tmp_path, *RUN_OPTIONS, "--simulated-gpus")
    victim, before, killed_at = None, pl.DataFrame(), 0.0
    try:  # Kill the node of the latest finished trial: the next trial has started there.
        while victim is None and driver.poll() is None and time.time() < started + 180:
            if finished_trials(study_dir) >= KILL_AFTER:
                victim = rows(study_dir).sort("finished_at")["node_id"][-1]
                assert cluster.kill_node(victim), f"no process of node {victim}"
                killed_at = time.time()
                before = rows(study_dir)  # read after the kill: no trial of the victim can finish in between
            time.sleep(0.2)
        output = _finish(driver, 240, cluster)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
    wall = time.time() - started
    assert driver.returncode == 0, output
    assert "8/8 trials finished, 0 failed" in output
    full_scale = Autoscaler.from_config(CONFIG, "").capacity(0.5, GPU_FRACTION)
    assert f"ray: room for 0 trials on the nodes alive now, {full_scale} at full scale" in output

    # Scaled up from no worker, with workers of cluster.yaml's GPU types.
    seen = [s for s in cluster.snapshots() if s["t"] >= started]
    first = next(s for s in seen if len(s["nodes"]) > 1)
    workers = {k: v for s in seen for k, v in s["nodes"].items() if "node:__internal_head__" not in v}
    declared = {(t["resources"]["CPU"], t["resources"]["GPU"]) for n, t in CONFIG["available_node_types"].items()
                if n != CONFIG["head_node_type"]}
    assert workers and all((r["CPU"], r["GPU"]) in declared for r in workers.values()), workers

    # Every trial once, on a GPU worker (never the 0-CPU head), recording the device it really trained on.
    df = _assert_every_row_once(study_dir, trials=8)
    assert set(df["node_id"]) <= set(workers) and (df["device"] == "cpu").all()

    # At most 4 trials share one GPU at any moment, and at least 2 do at some moment.
    trials = _trials(study_dir)
    per_gpu = {node: _peak_overlap(list(zip(group["start"], group["end"], strict=True))) / workers[node]["GPU"]
               for (node,), group in trials.group_by("node_id")}
    assert max(per_gpu.values()) <= 1 / GPU_FRACTION, per_gpu
    assert max(per_gpu.values()) >= 2, per_gpu

    # The killed worker lost only its running trials: what had finished stays as it was, the rest ran elsewhere.
    n_before = before["trial_key"].n_unique() if victim is not None else 0
    assert victim is not None and 0 < n_before < 8
    assert "Trial task failed for trial" in output, output  # Tune's line for a trial it retries: the kill hit some
    order = ["trial_key", "seed", "step"]
    kept = df.filter(pl.col("trial_key").is_in(before["trial_key"].unique().to_list()))
    assert kept.select(before.columns).sort(order).equals(before.sort(order))  # finished rows unchanged
    later = df.filter(~pl.col("trial_key").is_in(before["trial_key"].unique().to_list()))
    assert (later["node_id"] != victim).all()
    # Ray notices a dead node by missed health checks (seconds): the study may finish before it does.
    noticed = cluster.wait_for(f"killed node {victim} to leave the cluster",
                               lambda: victim not in cluster.workers(), 60)

    _assert_trained_packed(df, study_dir)

    # Idle workers are removed after the study.
    last_trial = trials["end"].max()
    _no_workers(cluster)
    gone = next(s["t"] for s in cluster.snapshots() if s["t"] > last_trial and len(s["nodes"]) == 1)
    measured = {"time_to_first_worker_s": round(first["t"] - started, 1), "workers_launched": len(workers),
                "peak_trials": _peak_overlap(list(zip(trials["start"], trials["end"], strict=True))),
                "peak_trials_per_gpu": max(per_gpu.values()),
                "trials_per_s": round(8 / (last_trial - trials["start"].min()), 2),
                "killed_after_s": round(killed_at - started, 1), "finished_before_kill": n_before,
                "study_run_s": round(wall, 1), "dead_node_noticed_after_study_s": round(noticed, 1),
                "workers_gone_after_last_trial_s": round(gone - last_trial, 1)}
    print(f"\nautoscaling measured: {json.dumps(measured)}")


@pytest.mark.slow
def test_a_gpu_trial_on_a_node_without_cuda_fails_with_one_line(tmp_path: Path) -> None:
    """Item 4: without --simulated-gpus, a GPU trial on a node that has no CUDA fails (no silent CPU fallback).

    On a cluster of its own: on the module's cluster, right after the test that kills a worker node, the
    autoscaler twice launched no node within 180 s (2 of 3 whole-module runs on a quiet machine; never when
    this test ran alone; cause not established, and _finish now prints the autoscaler's log if it recurs)."""
    with local_autoscaling_cluster(idle_timeout_minutes=IDLE_TIMEOUT_MINUTES) as fresh:
        driver = _study_run(fresh, f"{STUDIES}:ONE_GPU_TRIAL", tmp_path, "--gpus-per-trial", str(GPU_FRACTION))
        output = _finish(driver, 180, fresh)
    assert driver.returncode == 1, output
    study_dir = tmp_path / "test.one_gpu_trial"
    assert finished_trials(study_dir) == 0, "no silent CPU fallback"
    (failed,) = (study_dir / "failed").glob("*.json")
    line = (f"trial {failed.stem} failed after retries: study.trial.devices.DeviceError: trial asked for 0.25 GPU but "
            "CUDA is unavailable on node ")
    assert line in output, output
    reason = output.split(line, 1)[1].splitlines()[0]
    assert reason.endswith("only `study run --simulated-gpus` (GPUs that a test cluster declares but does not "
                           "have) trains GPU trials on the CPU"), reason
    assert json.loads(failed.read_text())["error"].strip().splitlines()[-1].endswith(reason)
    assert "0/1 trials finished, 1 failed" in output
    assert "Traceback" not in output  # Tune's log of each failed attempt keeps the error's last line only


@pytest.mark.slow
def test_a_failing_test_leaves_no_ray_process_behind() -> None:
    """The harness stops its own cluster, the workers the autoscaler launched included, however the block ends."""
    from tests.autoscaler import session_pids

    with pytest.raises(RuntimeError, match="a test failing"), \
            local_autoscaling_cluster(idle_timeout_minutes=IDLE_TIMEOUT_MINUTES) as running:
        ask = ("import ray; from ray.autoscaler.sdk import request_resources; "
               f"ray.init(address={running.address!r}, logging_level='ERROR'); "
               "request_resources(bundles=[{'GPU': 1}])")
        subprocess.run([sys.executable, "-c", ask], env=ray_env(), check=True, timeout=60, capture_output=True)
        running.wait_for("a GPU worker", lambda: bool(running.workers()), 60)
        assert len(running.raylets()) == 2  # the head's and the worker's
        raise RuntimeError("a test failing")
    assert not session_pids(running.head.pid) and not running.directory.exists()
