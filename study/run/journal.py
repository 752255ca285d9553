"""The study's own Optuna study, in a journal file beside its results: ``<storage>/<study>/optuna.journal``.

Optuna-sampled studies (random, QMC, TPE) run their search on it (Tune's OptunaSearch with this storage), so a
resumed study restores the sampler's history from the journal; grid studies record every finished trial in it from
the driver (:class:`JournalRecorder`). Either way ``optuna-dashboard <storage>/<study>/optuna.journal`` opens the
study, live while it runs. The Parquet rows stay the record: on every start :func:`sync_journal` adds the finished
trials that the journal lacks (a study run before the journal existed, a driver killed between a trial's file and
its entry) and closes the trials a killed driver left running. Object storage keeps no journal (the file backend
needs a local filesystem): the sampler is then re-fed from the Parquet rows, as before.
"""

from __future__ import annotations

import math
from typing import Any

from ray import tune

from analysis.stats.rgb import objective
from search_spaces.study import Study
from study.results.storage import StudyStorage, ensure_local_dir
from study.trial.spec import Trial

JOURNAL = "optuna.journal"


def optuna_space(study: Study) -> dict[str, Any]:
    """The study's axes as Optuna distributions (a Linked axis: its option names)."""
    return {name: axis.optuna() for name, axis in study.axes.items()}


def journal_storage(storage: StudyStorage) -> Any | None:
    """Optuna's JournalStorage on ``<study dir>/optuna.journal``; None for object storage."""
    directory = ensure_local_dir(storage)
    if directory is None:
        return None
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    return JournalStorage(JournalFileBackend(str(directory / JOURNAL)))


def open_journal(study: Study, storage: StudyStorage) -> Any | None:
    """The study's Optuna study (created on first use); None for object storage."""
    import optuna

    backend = journal_storage(storage)
    if backend is None:
        return None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna.create_study(storage=backend, study_name=study.name, load_if_exists=True,
                               direction="maximize" if study.mode == "max" else "minimize")


def journal_entries(study: Study, point: dict[str, Any], rows: list[dict[str, Any]]
                    ) -> list[tuple[dict[str, Any], float]]:
    """(params, objective) of one finished trial; a trial that packs learning rates is one entry per rate."""
    rates = point.get("learning_rate")
    if not isinstance(rates, list | tuple):
        return [(dict(point), objective(rows, study.metric, study.mode))]
    return [({**point, "learning_rate": rate},
             objective([r for r in rows if r.get("learning_rate") == rate], study.metric, study.mode))
            for rate in rates]


def _journal_key(study: Study, trial: Any) -> str:
    return trial.user_attrs.get("trial_key") or Trial.every_seed(study, trial.params).key(study)


def add_finished(optuna_study: Any, study: Study, key: str, point: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """Record one finished trial (its entries) as completed Optuna trials; a non-finite objective as failed."""
    import optuna

    space = optuna_space(study)
    for params, value in journal_entries(study, point, rows):
        finite = math.isfinite(value)
        optuna_study.add_trial(optuna.trial.create_trial(
            state=optuna.trial.TrialState.COMPLETE if finite else optuna.trial.TrialState.FAIL,
            value=value if finite else None, params=params, distributions={n: space[n] for n in params},
            user_attrs={"trial_key": key}))


def point_from_rows(study: Study, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The search-space point of a trial from its rows (a packed trial's learning rates as a list)."""
    point = {n: rows[0][n] for n in study.axes}
    if study.learning_rates_per_trial > 1:
        rates = {r["learning_rate"] for r in rows}
        point["learning_rate"] = [r for r in study.axes["learning_rate"] if r in rates]  # the axis' order
    return point


def sync_journal(study: Study, storage: StudyStorage) -> Any | None:
    """Open the journal and make it agree with the Parquet rows; returns the Optuna study (None: no journal).

    Trials a killed driver left running are marked failed; finished trials on disk that the journal does not
    have as completed are added (read with StudyStorage.read_trials, only those)."""
    import optuna

    optuna_study = open_journal(study, storage)
    if optuna_study is None:
        return None
    killed = set()
    for trial in optuna_study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        optuna_study.tell(trial.number, state=optuna.trial.TrialState.FAIL)
        killed.add(trial.number)
    done = optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.FAIL
    # a trial left running may have written its file before the kill: it is known only by a later entry (CI saw one
    # such trial on disk that the journal had only as failed, so its result never reached the sampler)
    known = {_journal_key(study, t) for t in optuna_study.get_trials(deepcopy=False, states=done)
             if t.number not in killed}
    for key, table in storage.read_trials(storage.finished_keys() - known):
        if table.num_rows:
            rows = table.to_pylist()
            add_finished(optuna_study, study, key, point_from_rows(study, rows), rows)
    return optuna_study


class JournalRecorder(tune.Callback):
    """Driver side, grid studies: each trial that completes goes into the journal with its params and objective."""

    def __init__(self, study: Study, storage: StudyStorage) -> None:
        self.study, self.storage = study, storage
        self._optuna_study: Any = None

    def __getstate__(self) -> dict[str, Any]:  # Tune pickles its callbacks: the open study is not part of it
        return {**self.__dict__, "_optuna_study": None}

    def on_trial_complete(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        if "trial_seconds" not in (trial.last_result or {}):
            return  # found its rows on disk (study.trial.trainable.run_trial): recorded before, or at the next start
        spec = Trial.from_config(trial.config, self.study)
        point, key = dict(spec.point), spec.key(self.study)
        table = self.storage.read_trial(key)
        if table is None or not table.num_rows:
            return
        if self._optuna_study is None:
            self._optuna_study = open_journal(self.study, self.storage)
        if self._optuna_study is not None:
            add_finished(self._optuna_study, self.study, key, point, table.to_pylist())
