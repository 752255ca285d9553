"""Study -> Ray Tune run: which trials are left, study.json, the cluster, the Tuner runs, the counts at the end.

``study.run.cluster`` starts or joins Ray and checks that a trial fits; ``study.run.tuner`` runs the trials through
Ray Tune (grid or Optuna); each trial runs ``study.trial.entry`` on a Ray worker.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ray import tune

from search_spaces.record import RunRecord, StudyRecord
from search_spaces.study import Study
from study.results.storage import StudyStorage
from study.run.cluster import Echo, Resources, check_resources, start_ray
from study.run.journal import JournalRecorder, journal_storage, sync_journal
from study.run.points import describe, trial_points
from study.run.preflight import preflight
from study.run.progress import StudyProgress
from study.run.tuner import Folder, fit, run_grid, tune_config
from study.trial.entry import trial_entry
from study.trial.identity import machine, machine_text, software_versions
from study.trial.trainable import objective
from trainables import plugins

CHUNK_SIZE = 1000  # trials per Tuner run (see run_study)


def run_record(resources: Resources) -> RunRecord:
    """What study.json records of the latest run: the driver's machine (study.trial.identity.machine), the
    settings that decide the numbers and, when there are any, the plugins of yours it loaded (module, origin, version,
    sha256, what each registered: trainables.plugins). Trials on other nodes record their own machine in every row."""
    driver = {k: v for k, v in machine().items() if k != "threads"}  # the trials' threads are the setting below
    run = {"machine": driver, "machine_text": machine_text(driver),
           "threads_per_trial": max(1, int(resources.cpus_per_trial)),
           "precision": resources.precision, "gpus_per_trial": resources.gpus_per_trial,
           "packing": {None: "auto", True: "on", False: "off"}[resources.packed]}
    if plugins.user_plugins():
        run["plugins"] = [p.to_json() for p in plugins.user_plugins()]
    return RunRecord(**run)


def changed_plugins(storage: StudyStorage) -> list[str]:
    """Plugins whose code differs from the one the study's latest run recorded: ``module (sha256 old -> new)``."""
    from analysis.data.meta import MetaError, recorded_run

    try:
        run = recorded_run(storage.location)
        before = {p["module"]: p for p in (run.plugins if run is not None else ())}
    except (MetaError, OSError):
        return []
    now = {p.module: p for p in plugins.user_plugins()}
    return [f"{name} (sha256 {old['sha256'][:12]} -> {now[name].sha256[:12]})" for name, old in before.items()
            if name in now and now[name].sha256 != old["sha256"]]


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


def run_study(study: Study, storage: StudyStorage, resources: Resources, *, address: str | None = None,
              echo: Echo = print, chunk_size: int = CHUNK_SIZE, track: tuple[Any, ...] = (),
              where: Mapping[str, tuple[Any, ...]] | None = None) -> dict[str, int]:
    """Run every trial of `study` not yet on disk; returns counts of finished / failed / total trials.

    A grid runs as several Tuner runs of at most `chunk_size` trials: Tune's experiment state grows
    with the number of trials (and so does the time of each save), so one huge Tuner slows down.
    `track`: trackers each trial logs its curves to (study.tracking.TrackSpec). `where` (grid studies; axis ->
    values, study.run.points): only the grid points it selects run and are counted.
    """
    preflight(study, echo)
    total = study.trial_count()
    points = trial_points(study, where) if study.sampler == "grid" else {}
    if where:
        total = len(points)
        echo(f"subset --where {describe(where)}: {total} of the study's {study.trial_count()} trials")
    for key in sorted(storage.corrupt_keys() if storage.is_local else ()):  # a footer read per pending file
        echo(f"warning: trial file {storage.trial_path(key)} is unreadable; moved to "
             f"{storage.quarantine(key)}, the trial runs again")
    folder = Folder(storage, echo)
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
    changed = changed_plugins(storage) if n_done else []
    if changed:
        echo(f"warning: plugin code changed since this study's last run: {', '.join(changed)}; its {n_done} finished "
             "trials keep the rows the old code made (their `plugins` column says which); a fresh --storage runs "
             "them all with the new code")
    record = StudyRecord.of(study, versions=software_versions(), run=run_record(resources))
    storage.write_json("study.json", record.to_json())
    remaining = total - n_done
    echo(f"study {study.name} (scale {study.scale}): {total} trials x {len(study.seeds)} seeds; "
         f"{n_done} finished before, {remaining} to run; results in {storage.uri}")
    if remaining <= 0:
        return {"finished": n_done, "failed": 0, "total": total}

    start_ray(address, echo)
    default_concurrency = check_resources(resources, address=address, echo=echo)
    entry = tune.with_resources(
        tune.with_parameters(trial_entry, study=study, storage=storage,
                             gpus=resources.gpus_per_trial, cpus=resources.cpus_per_trial,
                             packed=resources.packed, precision=resources.precision,
                             simulated_gpus=resources.simulated_gpus, track=tuple(track),
                             plugins=tuple(plugins.record())),
        {"cpu": resources.cpus_per_trial, "gpu": resources.gpus_per_trial},
    )
    concurrency = resources.max_concurrent or default_concurrency
    config = tune_config(study, concurrency, remaining, journal_storage(storage) if journal is not None else None,
                         previous, n_done)
    progress = StudyProgress(study=study, storage=storage, total=total, already_done=n_done, echo=echo)
    recorder = [JournalRecorder(study, storage)] if journal is not None and study.sampler == "grid" else []
    echo(f"running {remaining} trials, {concurrency} at a time "
         f"({resources.cpus_per_trial:g} CPU, {resources.gpus_per_trial:g} GPU each; sampler {study.sampler})")
    if study.sampler == "grid":
        run_grid(study, todo, chunk_size, (entry, config, [progress, *recorder], storage, folder, progress),
                  echo)
    else:
        fit(entry, {}, config, [progress], storage, folder)
    progress.close()
    if study.sampler != "grid":
        return {"finished": len(storage.finished_keys()), "failed": progress.failed, "total": total}
    keys, finished = set(points), storage.finished_keys()
    # Failed for good: a failed/ record and no result (a lost trial that its second pass finished is not).
    return {"finished": len(finished & keys), "failed": len(storage.failed_keys() & keys - finished), "total": total}
