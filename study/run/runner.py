"""Study -> Ray Tune run, top down: the strategy (study.run.strategies), preflight, the plan (what is left),
study.json, the launch, the counts at the end.

``study.run.cluster`` starts or joins Ray and checks that a trial fits; ``study.run.tuner`` runs the trials through
Ray Tune (grid or Optuna); ``study.run.adaptive`` runs an adaptive budget's rounds; each trial runs
``study.trial.entry`` on a Ray worker.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ray import tune

from search_spaces.record import RunRecord, StudyRecord
from search_spaces.schema import StudyError
from search_spaces.study import Study
from study.results.storage import StudyStorage
from study.run.adaptive import AdaptiveStrategy
from study.run.cluster import Echo, check_resources, start_ray
from study.run.journal import JournalRecorder, journal_storage
from study.run.points import describe
from study.run.preflight import preflight
from study.run.progress import StudyProgress
from study.run.strategies import GridStrategy, Plan, SamplerStrategy, Strategy, read_record
from study.run.tuner import Folder, GridRun, fit, grid_tune_config, sampler_tune_config
from study.trial.entry import trial_entry
from study.trial.identity import machine, machine_text, software_versions
from study.trial.resources import Resources
from study.trial.spec import Trial
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
           "packing": resources.packing}
    if plugins.user_plugins():
        run["plugins"] = [p.to_json() for p in plugins.user_plugins()]
    return RunRecord(**run)


def changed_plugins(storage: StudyStorage, record: StudyRecord | None) -> list[str]:
    """Plugins whose code differs from the one the study's latest run recorded: ``module (sha256 old -> new)``."""
    if record is None or record.run is None:
        return []
    before = {p["module"]: p for p in record.run.plugins}
    now = {p.module: p for p in plugins.user_plugins()}
    return [f"{name} (sha256 {old['sha256'][:12]} -> {now[name].sha256[:12]})" for name, old in before.items()
            if name in now and now[name].sha256 != old["sha256"]]


def strategy_for(study: Study, where: Mapping[str, tuple[Any, ...]] | None = None) -> Strategy:
    """The strategy of ``study`` (study.run.strategies: its sampler and budget)."""
    if study.sampler != "grid":
        return SamplerStrategy()
    if study.budget == "adaptive":
        if where:
            raise StudyError(f"invalid --where with budget adaptive of study {study.name}; allowed: --where with "
                             "budget fixed (an adaptive budget decides its findings on the whole grid)")
        return AdaptiveStrategy()
    return GridStrategy(where)


def prepare(study: Study, where: Mapping[str, tuple[Any, ...]] | None = None, echo: Echo = print) -> Strategy:
    """Everything that can refuse the study before its lock and Ray, once: its strategy (a request it cannot honour)
    and the preflight (every configuration valid, every component one step on the CPU: study.run.preflight)."""
    strategy = strategy_for(study, where)
    preflight(study, echo)
    return strategy


def run_study(study: Study, storage: StudyStorage, resources: Resources, *, address: str | None = None,
              echo: Echo = print, chunk_size: int = CHUNK_SIZE, track: tuple[Any, ...] = (),
              where: Mapping[str, tuple[Any, ...]] | None = None, strategy: Strategy | None = None,
              order_by: str | None = None) -> dict[str, int]:
    """Run every trial of `study` not yet on disk; returns counts of finished / failed / total trials.

    The study's strategy (study.run.strategies: a grid, an adaptive budget, a sampler) says which trials; a grid runs
    as Tuner runs of at most `chunk_size` trials (Tune's experiment state grows with the number of trials, and so
    does the time of each save). `track`: trackers each trial logs its curves to (study.tracking.TrackSpec). `where`
    (grid studies; axis -> values, study.run.points): only the grid points it selects run and are counted.
    `strategy`: what :func:`prepare` returned (`study run` prepares before taking the study's lock); None: prepared
    here. `order_by`: an axis whose ascending values order each round's trials (the smallest models first).
    """
    strategy = strategy if strategy is not None else prepare(study, where, echo)
    check_order_by(study, order_by)
    record = read_record(storage)
    plan = _plan(study, storage, strategy, record, echo)
    written = _write_record(study, storage, resources, record)
    echo(f"study {study.name} (scale {study.scale}): {plan.total} trials x {len(study.seeds)} seeds"
         f"{_budget_words(study)}; {plan.done} finished before, {plan.remaining} to run; results in {storage.uri}")
    if plan.remaining <= 0 and not strategy.adaptive:
        return {"finished": plan.done, "failed": 0, "total": plan.total}
    launcher = _Launcher(study, storage, resources, address, echo, track, chunk_size, strategy.records_journal)
    launcher.order_by = order_by
    strategy.run(study, storage, launcher, plan, written)
    return strategy.counts(study, storage, plan)


def _plan(study: Study, storage: StudyStorage, strategy: Strategy, record: StudyRecord | None, echo: Echo) -> Plan:
    """What is left to run, after tidying what an earlier run left (unreadable trial files, an unfinished fold)."""
    for key in sorted(storage.corrupt_keys() if storage.is_local else ()):  # a footer read per pending file
        echo(f"warning: trial file {storage.trial_path(key)} is unreadable; moved to "
             f"{storage.quarantine(key)}, the trial runs again")
    Folder(storage, echo).fold()  # what an earlier run left unfolded (or a fold it did not finish)
    strategy.tidy(study, storage)
    plan = strategy.plan(study, storage, record)
    if strategy.where:  # a grid's subset
        echo(f"subset --where {describe(strategy.where)}: {plan.total} of the study's {study.trial_count()} trials")
    changed = changed_plugins(storage, record) if plan.done else []
    if changed:
        echo(f"warning: plugin code changed since this study's last run: {', '.join(changed)}; its {plan.done} "
             "finished trials keep the rows the old code made (their `plugins` column says which); a fresh --storage "
             "runs them all with the new code")
    return plan


def _write_record(study: Study, storage: StudyStorage, resources: Resources, record: StudyRecord | None
                  ) -> StudyRecord:
    """study.json: the study as it runs now, the software and the run; an adaptive budget's looks so far are kept
    (they are replayed, never decided again). Returns what it wrote."""
    looks = record.looks_taken if record is not None else ()
    written = StudyRecord.of(study, versions=software_versions(), run=run_record(resources)).replace(looks_taken=looks)
    storage.write_json("study.json", written.to_json())
    return written


def _budget_words(study: Study) -> str:
    if study.budget == "fixed":
        return ""
    return (f", adaptive budget (every cell starts with {len(study.starting_seeds)} seed(s); up to {study.looks} "
            f"looks at {100 * study.confidence:g}% confidence)")


def check_order_by(study: Study, axis: str | None) -> None:
    """``--order-by``: an axis of the study's grid whose values are numbers; else a StudyError (one line)."""
    if axis is None:
        return
    numeric = [name for name, a in study.axes.items() if a.on_grid and name != "learning_rate"
               and all(isinstance(v, int | float) for v in a.grid_values())]
    if axis not in numeric:
        raise StudyError(f"invalid --order-by {axis!r} for study {study.name}; allowed: an axis of numbers of its grid "
                         f"({', '.join(numeric) or 'it has none'})")


class _Launcher:
    """Ray started, the trial entry and its resources, the callbacks: what every Tuner run of this study shares."""

    order_by: str | None = None  # an axis whose ascending values order the trials of each Tuner run

    def __init__(self, study: Study, storage: StudyStorage, resources: Resources, address: str | None, echo: Echo,
                 track: tuple[Any, ...], chunk_size: int, records_journal: bool) -> None:
        start_ray(address, echo)
        room = check_resources(resources, address=address, echo=echo)  # refuses a trial no node can hold
        concurrency = resources.max_concurrent or room
        self.entry = tune.with_resources(
            tune.with_parameters(trial_entry, study=study, storage=storage, resources=resources, track=tuple(track),
                                 plugins=tuple(plugins.record())),
            {"cpu": resources.cpus_per_trial, "gpu": resources.gpus_per_trial},
        )
        self.study, self.storage, self.resources, self.echo = study, storage, resources, echo
        self.concurrency, self.chunk_size = concurrency, chunk_size
        self.folder = Folder(storage, echo)
        self.journal = journal_storage(storage) if records_journal else None

    def _progress(self, total: int, done: int) -> StudyProgress:
        return StudyProgress(study=self.study, storage=self.storage, total=total, already_done=done, echo=self.echo)

    def _say(self, count: int) -> None:
        r = self.resources
        self.echo(f"running {count} trials, {self.concurrency} at a time ({r.cpus_per_trial:g} CPU, "
                  f"{r.gpus_per_trial:g} GPU each; sampler {self.study.sampler})")

    def grid(self, todo: list[Trial], stage: str) -> bool:
        """Listed trials through Ray Tune's grid (every one exactly once); False when interrupted."""
        axis = self.order_by
        if axis is not None:  # stable: the grid's order within a value
            todo = sorted(todo, key=lambda trial: float(trial.point[axis]))
        progress = self._progress(len(todo), 0)
        progress.stage = stage
        recorder = [JournalRecorder(self.study, self.storage)] if self.journal is not None else []
        config = grid_tune_config(self.concurrency)
        self._say(len(todo))
        run = GridRun(self.study, self.storage, self.entry, config, [progress, *recorder], self.folder, progress,
                      self.echo, self.chunk_size)
        try:
            return run.run(todo)
        finally:
            progress.close()

    def sample(self, plan: Plan) -> None:
        """An Optuna sampler's remaining trials (resumed from its journal or the rows)."""
        progress = self._progress(plan.total, plan.done)
        config = sampler_tune_config(self.study, self.concurrency, plan.remaining, plan.journal, plan.previous,
                                     plan.done)
        self._say(plan.remaining)
        try:
            fit(self.entry, {}, config, [progress], self.storage, self.folder)
        finally:
            progress.close()
