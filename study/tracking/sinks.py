"""The trackers themselves, each through its own library: Ray Tune's ``setup_mlflow`` (MLflow), PyTorch's
``SummaryWriter`` (TensorBoard event files), Ray Tune's ``setup_wandb`` (Weights & Biases).

Each sink is one tracker run of one trial: ``log(values, step)`` and ``close()``. :func:`resolve` fills in a
tracker's default target and checks it from the driver, so that a bad target is one line before anything runs.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Any

from core.errors import one_line
from search_spaces.study import Study
from study.results.storage import StudyStorage
from study.tracking.targets import TrackError, TrackSpec

MLFLOW_DB = "mlflow.db"  # default MLflow store: <storage>/<study>/mlflow.db (SQLite)
TENSORBOARD_DIR = "tensorboard"  # default TensorBoard root: <storage>/<study>/tensorboard/<trial_key>/
WANDB_PROJECT = "attention-studies"  # default W&B project; run files under $WANDB_DIR or <storage>/<study>/wandb/


def _absolute_uri(uri: str) -> str:
    """A tracking URI Ray workers (another working directory) read the same: relative paths made absolute."""
    if uri.startswith("sqlite:///") and not uri.startswith("sqlite:////"):
        return "sqlite:///" + str(Path(uri.removeprefix("sqlite:///")).resolve())
    if "://" not in uri and ":" not in uri.split("/")[0]:
        path = Path(uri).resolve()
        return f"sqlite:///{path}" if path.suffix == ".db" else str(path)
    return uri


def _local_default(storage: StudyStorage, kind: str, option: str, what: str) -> Path:
    if not storage.is_local:
        raise TrackError(f"invalid {option} {kind}: --storage {storage.storage!r} is not local; allowed: "
                         f"{option} {kind}={what}")
    return storage.local_path()


def resolve(spec: TrackSpec, study: Study, storage: StudyStorage, option: str) -> TrackSpec:
    """The spec with its target made explicit and usable (MLflow: the study's experiment exists)."""
    if spec.kind == "mlflow":
        target = spec.target or os.environ.get("MLFLOW_TRACKING_URI")
        if not target:
            directory = _local_default(storage, "mlflow", option, "URI")
            directory.mkdir(parents=True, exist_ok=True)
            target = f"sqlite:///{directory / MLFLOW_DB}"
        target = _absolute_uri(target)
        try:
            mlflow_experiment(target, study, str(storage.local_path() / "mlartifacts") if storage.is_local else None)
        except Exception as error:  # noqa: BLE001 - any store error is a target that cannot be used
            raise TrackError(f"invalid {option} mlflow={target!r}: {one_line(error, typed=False)}") from None
        return TrackSpec("mlflow", target)
    if spec.kind == "tensorboard":
        root = Path(spec.target).resolve() if spec.target else (
            _local_default(storage, "tensorboard", option, "DIR") / TENSORBOARD_DIR)
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise TrackError(f"invalid {option} tensorboard={str(root)!r}: {one_line(error, typed=False)}") from None
        return TrackSpec("tensorboard", str(root))
    where = os.environ.get("WANDB_DIR") or str(_local_default(storage, "wandb", option, "PROJECT with WANDB_DIR set"))
    Path(where).mkdir(parents=True, exist_ok=True)
    return TrackSpec("wandb", spec.target or WANDB_PROJECT, str(Path(where).resolve()))


def mlflow_experiment(uri: str, study: Study, artifacts: str | None = None) -> str:
    """The id of the study's MLflow experiment (named after its directory, e.g. ``demo.smoke``), created if new
    (``artifacts``: its artifact location; None: MLflow's default, ./mlruns of the creating process)."""
    import mlflow

    logging.getLogger("mlflow").setLevel(logging.WARNING)  # not its INFO lines about creating tables
    mlflow.set_tracking_uri(uri)
    experiment = mlflow.get_experiment_by_name(study.directory)
    if experiment is not None:
        return experiment.experiment_id
    # MLflow 3's UI opens an experiment of this kind on its training runs (not its GenAI traces).
    return mlflow.create_experiment(study.directory, artifact_location=artifacts,
                                    tags={"mlflow.experimentKind": "custom_model_development"})


class MLflowRun:
    """A trial as an MLflow run of the study's experiment: params, tags ``trial_key``, ``study``, ``scale``."""

    def __init__(self, spec: TrackSpec, study: Study, key: str, params: dict[str, Any]) -> None:
        import mlflow
        from ray.air.integrations.mlflow import setup_mlflow

        experiment_id = mlflow_experiment(str(spec.target), study)
        for run in mlflow.search_runs([experiment_id], filter_string=f"tags.trial_key = '{key}'",
                                      output_format="list"):
            mlflow.delete_run(run.info.run_id)  # an earlier, partial run of this trial: replaced, not doubled
        self.mlflow = setup_mlflow(params, tracking_uri=spec.target, experiment_id=experiment_id, run_name=key,
                                   tags={"trial_key": key, "study": study.name, "scale": study.scale})

    def log(self, values: dict[str, float], step: int) -> None:
        self.mlflow.log_metrics(values, step=step)

    def close(self) -> None:
        self.mlflow.end_run()


class TensorBoardRun:
    """A trial as one TensorBoard run: ``<root>/<trial_key>/`` (its params as a text summary)."""

    def __init__(self, spec: TrackSpec, study: Study, key: str, params: dict[str, Any]) -> None:
        from torch.utils.tensorboard import SummaryWriter

        directory = Path(str(spec.target)) / key
        shutil.rmtree(directory, ignore_errors=True)  # an earlier, partial run of this trial: replaced
        self.writer = SummaryWriter(log_dir=str(directory))
        table = "\n".join(f"| {k} | {v} |" for k, v in params.items())
        self.writer.add_text("params", f"| param | value |\n|---|---|\n{table}", 0)

    def log(self, values: dict[str, float], step: int) -> None:
        for name, value in values.items():
            self.writer.add_scalar(name, value, step)
        self.writer.flush()  # live: TensorBoard shows each evaluation as it happens

    def close(self) -> None:
        self.writer.close()


def open_sink(spec: TrackSpec, study: Study, key: str, params: dict[str, Any]) -> Any:
    """The tracker run of one trial (spec resolved by :func:`resolve`)."""
    if spec.kind == "mlflow":
        return MLflowRun(spec, study, key, params)
    if spec.kind == "tensorboard":
        return TensorBoardRun(spec, study, key, params)
    from study.tracking.wandb_sink import WandbRun

    return WandbRun(spec, study, key, params)
