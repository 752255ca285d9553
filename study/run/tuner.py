"""The study's trials through Ray Tune: the Tuner runs, their callbacks, Tune's failure handling and leftovers.

Grid studies use Tune's own grid over the points not yet finished (every point exactly once, even with concurrent
trials: Optuna's GridSampler can hand one point to two workers, see docs/ray.md), in Tuner runs of bounded size.
Random, QMC and TPE studies use Optuna samplers through Tune's OptunaSearch, told about the trials already on disk so
that a resumed study continues the same search instead of starting over.
"""

from __future__ import annotations

import itertools
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ray import tune

from core.errors import one_line
from search_spaces.schema import StudyError
from search_spaces.study import Study
from study.results.storage import StudyStorage
from study.run.journal import optuna_space
from study.trial.spec import Trial

Echo = Callable[[str], None]
FOLD_EVERY, FOLD_EVERY_S = 500, 30.0  # fold trial files into the table every 500 trials or 30 s (study.results.table)
MAX_FAILURES = 2  # Ray retries of a trial whose process or node died
_TUNER_RUNS = itertools.count()  # distinct experiment names even for chunks started within one second


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


class Folder(tune.Callback):
    """Folds finished trial files into the study's table (study.results.table) every ``every`` finished trials or
    ``every_s`` seconds, whichever comes first; run_study also folds at the end of every Tuner run."""

    said = False  # the line about a missing deltalake, once per process

    def __init__(self, storage: StudyStorage, echo: Echo, every: int = FOLD_EVERY, every_s: float = FOLD_EVERY_S):
        self.storage, self.echo, self.every, self.every_s = storage, echo, every, every_s
        self.since, self.last = 0, time.time()

    def on_trial_complete(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        self.since += 1
        if self.since >= self.every or time.time() - self.last >= self.every_s:
            self.fold(quiet=True)

    def fold(self, *, quiet: bool = False) -> None:
        from analysis.data.lake import has_deltalake

        self.since, self.last = 0, time.time()
        if not has_deltalake():  # a GPU node's bundle leaves deltalake out (docs/gpu.md): the files are the rows
            if not Folder.said:
                self.echo("deltalake is not installed: trial files stay in trials/ (readers take them as they are; "
                          "`study compact` folds them where deltalake is)")
                Folder.said = True
            return
        from study.results.table import fold_step

        fold_step(self.storage.location, self.echo, quiet=quiet)
        self.since, self.last = 0, time.time()


def _trial_dirname(trial: Any) -> str:
    return str(trial.trial_id)  # Tune's default name spells out the whole configuration


class _OneLineTrialErrors(logging.Filter):
    """Tune logs every failed attempt of a trial with the whole remote traceback; keep only its last line (the
    error itself). The full text stays in Tune's error file, and in failed/<key>.json once retries run out."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is not None:
            record.msg, record.args = f"{record.getMessage()}: {one_line(error)}", ()
            record.exc_info, record.exc_text = None, None
        return True


class _LostTrials(tune.Callback):
    """The points of trials that Tune gave up on because their worker process or node died (not their own error).

    Tune retries such a trial (FailureConfig), but not always: when a Ray node was killed mid-study here, one
    trial's actor logged two failures at the same moment and Tune marked the trial ERROR without its retries.
    run_study gives these trials one more pass; a trial's own exception (a bug, DeviceError) gets none."""

    def __init__(self) -> None:
        self.configs: list[dict[str, Any]] = []

    def on_trial_error(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        if _lost_with_its_process(getattr(trial, "pickled_error_file", None)):
            self.configs.append(trial.config.get("trial", trial.config))


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


def _skip_callback_census() -> None:
    """Tune counts a run's callbacks by class for Ray's usage telemetry (``ray.air._internal.usage.tag_callbacks``),
    and to do so imports its wandb, mlflow and comet integrations, and those their libraries: 2.7 s of every
    ``study run`` on this project's 2-core machine where the tracking extras are installed, for a tag nothing here
    reads. The census is replaced by a no-op; Ray's other usage tags stay as they are."""
    from ray.air._internal import usage

    if getattr(usage, "tag_callbacks", None) is not None:
        usage.tag_callbacks = lambda callbacks: False


def fit(entry: Any, param_space: dict[str, Any], tune_config: Any, callbacks: list[Any],
         storage: StudyStorage, folder: Folder) -> None:
    _skip_callback_census()
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


@dataclass(frozen=True)
class GridRun:
    """What every Tuner run of a study's listed trials shares: the entry, Tune's config, the callbacks."""

    study: Study
    storage: StudyStorage
    entry: Any
    tune_config: Any
    callbacks: list[Any]
    folder: Folder
    progress: Any  # study.run.progress.StudyProgress
    echo: Echo
    chunk_size: int

    def run(self, todo: list[Trial]) -> bool:
        """The trials as Tuner runs of at most ``chunk_size``; False when interrupted (Ctrl+C, lost trials): a
        re-run resumes."""
        for start in range(0, len(todo), self.chunk_size):
            chunk = todo[start:start + self.chunk_size]
            lost = _LostTrials()
            fit(self.entry, {"trial": tune.grid_search([t.to_config() for t in chunk])}, self.tune_config,
                [*self.callbacks, lost], self.storage, self.folder)
            if lost.configs:  # lost with their node or process after Ray's retries: once more (then failed/)
                self.echo(f"{len(lost.configs)} trial(s) lost with their worker process or node: running them once "
                          "more")
                self.progress.failed -= len(lost.configs)  # not failed (yet): counted again if the second pass fails
                fit(self.entry, {"trial": tune.grid_search(lost.configs)}, self.tune_config, self.callbacks,
                    self.storage, self.folder)
            chunk_keys = {t.key(self.study) for t in chunk}
            if chunk_keys - self.storage.finished_keys() - self.storage.failed_keys():
                return False
        return True


def grid_tune_config(concurrency: int) -> Any:
    """Tune's config of a run of listed trials (its grid over them: every one exactly once)."""
    return tune.TuneConfig(num_samples=1, max_concurrent_trials=concurrency, reuse_actors=True,
                           trial_dirname_creator=_trial_dirname)


def sampler_tune_config(study: Study, concurrency: int, remaining: int, journal: Any | None,
                        previous: list[tuple[dict[str, Any], float]], n_done: int) -> Any:
    """OptunaSearch on the journal storage (study.run.journal; None: fed `previous`), ``remaining`` samples."""
    from ray.tune.search.optuna import OptunaSearch

    searcher = OptunaSearch(
        space=optuna_space(study), metric="objective", mode=study.mode, sampler=_optuna_sampler(study, n_done),
        storage=journal, study_name=study.name if journal is not None else None,
        points_to_evaluate=[p for p, _ in previous] or None, evaluated_rewards=[s for _, s in previous] or None,
    )
    return tune.TuneConfig(search_alg=searcher, num_samples=remaining, max_concurrent_trials=concurrency,
                           reuse_actors=True, trial_dirname_creator=_trial_dirname)


