"""Study -> Ray Tune run: samplers, resources, resume, progress.

Grid studies use Tune's own grid over the points not yet finished (every point exactly once, even
with concurrent trials: Optuna's GridSampler can hand one point to two workers, see docs/ray.md).
Random, QMC and TPE studies use Optuna samplers through Tune's OptunaSearch, told about the trials
already on disk so that a resumed study continues the same search instead of starting over.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import os
import time
import traceback
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import ray
from ray import tune

from search_spaces.study import Study, StudyError
from study.identity import machine, machine_text, software_versions, trial_key
from study.journal import JournalRecorder, journal_storage, optuna_space, sync_journal
from study.points import describe, trial_points
from study.preflight import validate
from study.progress import StudyProgress
from study.storage import StudyStorage, first_line
from study.trainable import PRECISIONS, objective

if TYPE_CHECKING:
    from study.capacity import Autoscaler

Echo = Callable[[str], None]
CHUNK_SIZE = 1000  # trials per Tuner run (see run_study)
FOLD_EVERY, FOLD_EVERY_S = 500, 30.0  # fold trial files into the table every 500 trials or 30 s (study.table)
MAX_FAILURES = 2  # Ray retries of a trial whose process or node died
_TUNER_RUNS = itertools.count()  # distinct experiment names even for chunks started within one second


@dataclasses.dataclass(frozen=True, kw_only=True)
class Resources:
    """What each trial asks Ray for, and how many trials run at once."""

    cpus_per_trial: float = 1.0
    gpus_per_trial: float = 0.0
    max_concurrent: int | None = None  # None: as many as fit on the cluster (at full scale if autoscaled)
    packed: bool | None = None  # seeds as one packed model; None: the family's default (trainables.families.packs)
    precision: str = "fp32"  # fp32, bf16 (autocast) or fp64 (study.trainable.precision_context); in every row
    simulated_gpus: bool = False  # GPU trials may train on the CPU where CUDA is missing (study.devices)

    def __post_init__(self) -> None:
        if self.cpus_per_trial <= 0:
            raise StudyError(f"invalid --cpus-per-trial {self.cpus_per_trial!r}; allowed: a number > 0")
        if self.gpus_per_trial < 0:
            raise StudyError(f"invalid --gpus-per-trial {self.gpus_per_trial!r}; allowed: a number >= 0")
        if self.precision not in PRECISIONS:
            raise StudyError(f"invalid --precision {self.precision!r}; allowed: {', '.join(PRECISIONS)}")
        if self.max_concurrent is not None and self.max_concurrent < 1:
            raise StudyError(f"invalid --max-concurrent {self.max_concurrent!r}; allowed: an integer >= 1")
        if self.simulated_gpus and self.gpus_per_trial <= 0:
            raise StudyError("invalid --simulated-gpus with --gpus-per-trial 0; allowed: only with "
                             "--gpus-per-trial > 0 (it lets GPU trials train on the CPU of a simulated GPU node)")


class ClusterError(StudyError):
    """Ray could not be started or reached: not the input's fault (the CLI's exit status 1, not 2)."""


def run_record(resources: Resources) -> dict[str, Any]:
    """What study.json records of the latest run: the driver's machine (study.identity.machine) and the
    settings that decide the numbers. Trials on other nodes record their own machine in every row."""
    driver = {k: v for k, v in machine().items() if k != "threads"}  # the trials' threads are the setting below
    return {"machine": driver, "machine_text": machine_text(driver),
            "threads_per_trial": max(1, int(resources.cpus_per_trial)),
            "precision": resources.precision, "gpus_per_trial": resources.gpus_per_trial,
            "packing": {None: "auto", True: "on", False: "off"}[resources.packed]}


def _optuna_sampler(study: Study, seed: int = 0) -> Any:
    """The study's sampler. `seed`: its own stream, fixed so a study is reproducible; a resumed study passes the
    number of trials it already has (a sampler seeded as before would draw its first points again: duplicates)."""
    import optuna

    if study.sampler == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if study.sampler == "qmc":
        return optuna.samplers.QMCSampler(seed=seed, warn_independent_sampling=False)
    if study.sampler == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    raise StudyError(f"invalid sampler {study.sampler!r}; allowed: random, qmc, tpe")


def finished_points(study: Study, storage: StudyStorage) -> list[tuple[dict[str, Any], float]]:
    """(point, objective) of every finished trial (table and pending files, one scan), for a resumed Optuna
    search; in trial-key order."""
    from analysis.data.rows import open_trials

    scan = open_trials(storage.location)
    if scan.lf is None:
        return []
    names = list(study.axes)
    present = set(scan.lf.collect_schema().names())
    wanted = [c for c in dict.fromkeys([*names, "trial_key", "step", "learning_rate", study.metric]) if c in present]
    frame = scan.lf.select(wanted).collect()
    done = []
    for (_key,), group in sorted(frame.group_by("trial_key"), key=lambda item: str(item[0][0])):
        rows = group.to_dicts()
        done.append(({n: rows[0].get(n) for n in names}, objective(rows, study.metric, study.mode)))
    return done


class _Folder(tune.Callback):
    """Folds finished trial files into the study's table (study.table) every ``every`` finished trials or
    ``every_s`` seconds, whichever comes first; run_study also folds at the end of every Tuner run."""

    def __init__(self, storage: StudyStorage, echo: Echo, every: int = FOLD_EVERY, every_s: float = FOLD_EVERY_S):
        self.storage, self.echo, self.every, self.every_s = storage, echo, every, every_s
        self.since, self.last = 0, time.time()

    def on_trial_complete(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        self.since += 1
        if self.since >= self.every or time.time() - self.last >= self.every_s:
            self.fold(quiet=True)

    def fold(self, *, quiet: bool = False) -> None:
        from study.table import fold_step

        fold_step(self.storage.location, self.echo, quiet=quiet)
        self.since, self.last = 0, time.time()


def start_ray(address: str | None, echo: Echo) -> None:
    """Connect to a Ray cluster (`address`) or start the embedded local one."""
    if ray.is_initialized():
        return
    started = time.time()
    try:
        if address:
            ray.init(address=address, logging_level="ERROR", log_to_driver=False)
        else:
            # "local": always a fresh Ray of our own; a bare init() would join any cluster that `ray start`
            # left recorded in /tmp/ray (even a dead one) and hang.
            ray.init(address="local", include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    except OSError as error:  # a broken Ray install, an unreachable cluster: not the storage's fault
        where = f"connect to the Ray cluster at {address!r}" if address else "start a local Ray"
        raise ClusterError(f"could not {where}: {first_line(error)}") from None
    resources = ray.cluster_resources()
    echo(f"ray: {int(resources.get('CPU', 0))} CPUs, {resources.get('GPU', 0):g} GPUs "
         f"({'cluster ' + address if address else 'local'}, {time.time() - started:.1f} s to start)")


def check_resources(resources: Resources, *, address: str | None = None, echo: Echo = print) -> int:
    """Fail fast when the cluster can never place a trial; returns the default concurrency.

    Counted node by node (a trial needs its CPUs and its GPU fraction on one node). With `address`, an
    autoscaler's configuration on this machine (study.capacity) adds the workers it may launch: a study
    then starts on a cluster with no GPU node yet, and its default concurrency is that of full scale.
    """
    from study.capacity import cluster_capacity, read_autoscaler

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


def _trial_entry(config: dict[str, Any], study: Study, storage: StudyStorage, gpus: float,
                 cpus: float, packed: bool | None, precision: str, simulated_gpus: bool = False,
                 track: tuple[Any, ...] = ()) -> None:
    """What a Ray worker runs for one trial."""
    import torch

    from study.devices import packing_device, trial_device
    from study.trainable import run_trial

    torch.set_num_threads(max(1, int(cpus)))
    context = ray.get_runtime_context()
    # No silent CPU fallback: a GPU trial without CUDA fails here with one line (study.devices.DeviceError).
    device = trial_device(gpus, simulated_gpus=simulated_gpus,
                          where=f"node {ray.util.get_node_ip_address()} (id {context.get_node_id()})")
    point = config.get("point", config)
    run_trial(study, storage, point, device=device, report=tune.report, node_id=context.get_node_id(),
              packed=packed, packing_device=packing_device(gpus, device), precision=precision, track=track)


def _trial_dirname(trial: Any) -> str:
    return trial.trial_id  # Tune's default name spells out the whole configuration


class _OneLineTrialErrors(logging.Filter):
    """Tune logs every failed attempt of a trial with the whole remote traceback; keep only its last line (the
    error itself). The full text stays in Tune's error file, and in failed/<key>.json once retries run out."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is not None:
            last = "".join(traceback.format_exception_only(error)).strip().splitlines()[-1].strip()
            record.msg, record.args = f"{record.getMessage()}: {last}", ()
            record.exc_info, record.exc_text = None, None
        return True


class _LostTrials(tune.Callback):
    """The points of trials that Tune gave up on because their worker process or node died (not their own error).

    Tune retries such a trial (FailureConfig), but not always: when a Ray node was killed mid-study here, one
    trial's actor logged two failures at the same moment and Tune marked the trial ERROR without its retries.
    run_study gives these trials one more pass; a trial's own exception (a bug, DeviceError) gets none."""

    def __init__(self) -> None:
        self.points: list[dict[str, Any]] = []

    def on_trial_error(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        if _lost_with_its_process(getattr(trial, "pickled_error_file", None)):
            self.points.append(trial.config.get("point", trial.config))


def _lost_with_its_process(pickled_error: str | None) -> bool:
    """Whether the error Tune pickled for a trial is the loss of its actor, worker process or node."""
    from ray import cloudpickle
    from ray.exceptions import NodeDiedError, RayActorError, WorkerCrashedError

    if not pickled_error or not os.path.exists(pickled_error):
        return False
    try:
        with open(pickled_error, "rb") as handle:
            error = cloudpickle.load(handle)
    except Exception:  # an error that cannot be unpickled here is not one of Ray's
        return False
    return isinstance(error, RayActorError | NodeDiedError | WorkerCrashedError)


def _drop_tune_leftovers(fs: Any, experiment: str) -> None:
    """Delete what a finished Tuner run left in its folder under ``_tune/`` that nothing reads: its experiment
    state and its (empty) trial folders. A trial folder holding Tune's error files (``error.txt``,
    ``error.pkl``: the whole traceback of a failed trial; failed/<key>.json has its last lines) stays."""
    import pyarrow.fs as pafs
    from ray.air.constants import EXPR_ERROR_FILE, EXPR_ERROR_PICKLE_FILE

    everything = fs.get_file_info(pafs.FileSelector(experiment, recursive=True, allow_not_found=True))
    failed = {info.path.rsplit("/", 1)[0] for info in everything
              if info.base_name in (EXPR_ERROR_FILE, EXPR_ERROR_PICKLE_FILE)}
    for info in fs.get_file_info(pafs.FileSelector(experiment, allow_not_found=True)):
        if info.type == pafs.FileType.Directory and info.path not in failed:
            fs.delete_dir(info.path)
        elif info.type == pafs.FileType.File:
            fs.delete_file(info.path)
    if not failed:
        fs.delete_dir(experiment)


def _fit(entry: Any, param_space: dict[str, Any], tune_config: Any, callbacks: list[Any],
         storage: StudyStorage, folder: _Folder) -> None:
    tune_log = logging.getLogger("ray.tune.execution.tune_controller")
    if not any(isinstance(f, _OneLineTrialErrors) for f in tune_log.filters):
        tune_log.addFilter(_OneLineTrialErrors())

    run_config = tune.RunConfig(
        name=f"tune-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{next(_TUNER_RUNS)}",
        storage_path=f"{storage.uri}/_tune",
        failure_config=tune.FailureConfig(max_failures=MAX_FAILURES),
        callbacks=[*callbacks, folder],
        verbose=0,
    )
    results = tune.Tuner(entry, param_space=param_space, tune_config=tune_config, run_config=run_config).fit()
    _drop_tune_leftovers(results.filesystem, results.experiment_path)  # after the callbacks read the errors
    folder.fold()  # the end of every Tuner run


def _run_grid(study: Study, todo: list[dict[str, Any]], chunk_size: int, fit: tuple, echo: Echo) -> None:
    """The grid's points as Tuner runs of at most ``chunk_size`` trials; ``fit``: (entry, tune config, callbacks,
    storage, folder, progress)."""
    entry, tune_config, callbacks, storage, folder, progress = fit
    for start in range(0, len(todo), chunk_size):
        chunk = todo[start:start + chunk_size]
        lost = _LostTrials()
        _fit(entry, {"point": tune.grid_search(chunk)}, tune_config, [*callbacks, lost], storage, folder)
        if lost.points:  # lost with their node or process after Ray's retries: once more (then failed/)
            echo(f"{len(lost.points)} trial(s) lost with their worker process or node: running them once more")
            progress.failed -= len(lost.points)  # not failed (yet): counted again if the second pass fails
            _fit(entry, {"point": tune.grid_search(lost.points)}, tune_config, callbacks, storage, folder)
        chunk_keys = {trial_key(study.name, study.configuration(p), study.seeds) for p in chunk}
        if chunk_keys - storage.finished_keys() - storage.failed_keys():
            break  # interrupted (Ctrl+C) or lost trials: stop here, a re-run resumes


def _tune_config(study: Study, concurrency: int, remaining: int, journal: Any | None,
                 previous: list[tuple[dict[str, Any], float]], n_done: int) -> Any:
    """Tune's grid (grid studies) or OptunaSearch on the journal storage (study.journal; None: fed `previous`)."""
    if study.sampler == "grid":
        return tune.TuneConfig(num_samples=1, max_concurrent_trials=concurrency, reuse_actors=True,
                               trial_dirname_creator=_trial_dirname)
    from ray.tune.search.optuna import OptunaSearch

    searcher = OptunaSearch(
        space=optuna_space(study), metric="objective", mode=study.mode, sampler=_optuna_sampler(study, n_done),
        storage=journal, study_name=study.name if journal is not None else None,
        points_to_evaluate=[p for p, _ in previous] or None, evaluated_rewards=[s for _, s in previous] or None,
    )
    return tune.TuneConfig(search_alg=searcher, num_samples=remaining, max_concurrent_trials=concurrency,
                           reuse_actors=True, trial_dirname_creator=_trial_dirname)


def run_study(study: Study, storage: StudyStorage, resources: Resources, *, address: str | None = None,
              echo: Echo = print, chunk_size: int = CHUNK_SIZE, track: tuple[Any, ...] = (),
              where: Mapping[str, tuple[Any, ...]] | None = None) -> dict[str, int]:
    """Run every trial of `study` not yet on disk; returns counts of finished / failed / total trials.

    A grid runs as several Tuner runs of at most `chunk_size` trials: Tune's experiment state grows
    with the number of trials (and so does the time of each save), so one huge Tuner slows down.
    `track`: trackers each trial logs its curves to (study.tracking.TrackSpec). `where` (grid studies; axis ->
    values, study.points): only the grid points it selects run and are counted.
    """
    validate(study)
    total = study.trial_count()
    points = trial_points(study, where) if study.sampler == "grid" else {}
    if where:
        total = len(points)
        echo(f"subset --where {describe(where)}: {total} of the study's {study.trial_count()} trials")
    for key in sorted(storage.corrupt_keys() if storage.is_local else ()):  # a footer read per pending file
        echo(f"warning: trial file {storage.trial_path(key)} is unreadable; moved to "
             f"{storage.quarantine(key)}, the trial runs again")
    folder = _Folder(storage, echo)
    folder.fold()  # what an earlier run left unfolded (or a fold it did not finish)
    journal = sync_journal(study, storage)  # None on object storage: the sampler is re-fed from the rows
    previous: list[tuple[dict[str, Any], float]] = []
    if study.sampler == "grid":
        done = storage.finished_keys() & set(points)
        todo = [p for k, p in points.items() if k not in done]
        n_done = len(done)
    else:
        previous = finished_points(study, storage) if journal is None else []
        n_done = min(len(previous) if journal is None else len(storage.finished_keys()), total)
        todo = []
    storage.write_json("study.json", {**study.to_json(), "versions": software_versions(), "run": run_record(resources)})
    remaining = total - n_done
    echo(f"study {study.name} (scale {study.scale}): {total} trials x {len(study.seeds)} seeds; "
         f"{n_done} finished before, {remaining} to run; results in {storage.uri}")
    if remaining <= 0:
        return {"finished": n_done, "failed": 0, "total": total}

    start_ray(address, echo)
    default_concurrency = check_resources(resources, address=address, echo=echo)
    entry = tune.with_resources(
        tune.with_parameters(_trial_entry, study=study, storage=storage,
                             gpus=resources.gpus_per_trial, cpus=resources.cpus_per_trial,
                             packed=resources.packed, precision=resources.precision,
                             simulated_gpus=resources.simulated_gpus, track=tuple(track)),
        {"cpu": resources.cpus_per_trial, "gpu": resources.gpus_per_trial},
    )
    concurrency = resources.max_concurrent or default_concurrency
    tune_config = _tune_config(study, concurrency, remaining, journal_storage(storage) if journal is not None else None,
                               previous, n_done)
    progress = StudyProgress(study=study, storage=storage, total=total, already_done=n_done, echo=echo)
    recorder = [JournalRecorder(study, storage)] if journal is not None and study.sampler == "grid" else []
    echo(f"running {remaining} trials, {concurrency} at a time "
         f"({resources.cpus_per_trial:g} CPU, {resources.gpus_per_trial:g} GPU each; sampler {study.sampler})")
    if study.sampler == "grid":
        _run_grid(study, todo, chunk_size, (entry, tune_config, [progress, *recorder], storage, folder, progress),
                  echo)
    else:
        _fit(entry, {}, tune_config, [progress], storage, folder)
    progress.close()
    if study.sampler != "grid":
        return {"finished": len(storage.finished_keys()), "failed": progress.failed, "total": total}
    keys, finished = set(points), storage.finished_keys()
    # Failed for good: a failed/ record and no result (a lost trial that its second pass finished is not).
    return {"finished": len(finished & keys), "failed": len(storage.failed_keys() & keys - finished), "total": total}
