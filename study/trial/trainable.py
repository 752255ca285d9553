"""The Tune adapter: one trial = one point and the seeds it trains (study.trial.spec.Trial: every seed with a fixed
budget; with an adaptive one a point's first seeds, then one seed per trial), written to Parquet.

Thin on purpose: the training itself is the model family's `train` (`trainables.catalog` finds it: plain
PyTorch, no Ray). The
adapter resolves the configuration, skips work whose results already exist (resume after a killed
driver re-launches finished trials), reports progress to Tune and writes the trial's rows atomically.
"""

from __future__ import annotations

import contextlib
import math
import socket
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from analysis.stats.rgb import objective
from search_spaces.study import Study
from study.results.storage import TrialStore
from study.trial.devices import packing_device
from study.trial.identity import code_version, machine_text
from study.trial.resources import PRECISIONS, Resources
from study.trial.spec import Trial
from study.trial.stopping import StopRule, read_columns
from trainables.families import FamilyConfig, ModelFamily
from trainables.plugins import rows_label

Report = Callable[[dict[str, Any]], None]


def split_config(study: Study, point: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(training hyperparameters, label columns) of a search-space point.

    The model family (and so the set of hyperparameter names) follows from the point's ``task``. Labels are
    the names the study declares as its own columns (``Study.labels`` and its ``Linked`` axes, e.g.
    ``ablation``): they become Parquet columns beside the hyperparameters they set. Any other name is a
    ValueError naming the key, the study and the valid names: a misspelt hyperparameter must not train at
    its default.
    """
    config = study.configuration(point)
    family = family_of(config)
    fields = family.config.field_names()
    unknown = [k for k in config if k not in fields and k not in study.label_names]
    if unknown:
        declared = ", ".join(study.label_names) or "none declared"
        raise ValueError(f"invalid hyperparameter {unknown[0]!r} in study {study.name} (task {config['task']!r}): "
                         f"not a field of the {family.name} family's config nor a label of the study; allowed: "
                         f"{', '.join(fields)}; labels: {declared}")
    hyper = {k: v for k, v in config.items() if k in fields}
    labels = {k: v for k, v in config.items() if k not in fields}
    return hyper, labels


def family_of(config: dict[str, Any]) -> ModelFamily:
    """The model family that trains the configuration's ``task`` (trainables.catalog)."""
    from trainables.catalog import family_for_task

    if "task" not in config:
        raise ValueError("missing hyperparameter 'task'")
    return family_for_task(config["task"])


def member_configs(hyper: dict[str, Any], family: ModelFamily | None = None) -> list[FamilyConfig]:
    """The configs of a trial: one, or one per packed learning rate (a list in `hyper`); ``family``: the task's
    model family when the caller already has it."""
    family = family or family_of(hyper)
    rates = hyper["learning_rate"] if isinstance(hyper.get("learning_rate"), list | tuple) else None
    if rates is None:
        return [family.config.from_dict(hyper)]
    if not family.packs_learning_rates:
        raise ValueError(f"invalid learning_rate={rates!r} for task {hyper['task']!r}; allowed: one number "
                         f"(family {family.name} does not pack learning rates)")
    return [family.config.from_dict({**hyper, "learning_rate": rate}) for rate in rates]


@dataclass(frozen=True)
class Resolved:
    """A trial's configuration split into its parts once: its key, the family that trains it, its configs (one, or
    one per packed learning rate) and the hyperparameter and label columns of its rows."""

    trial: Trial
    key: str
    family: ModelFamily
    configs: list[FamilyConfig]
    params: dict[str, Any]

    @property
    def single_cell(self) -> bool:
        """Whether the trial is one cell of the grid (not several packed learning rates)."""
        return len(self.configs) == 1


def resolve(study: Study, trial: Trial) -> Resolved:
    """``trial`` split into its parts (:class:`Resolved`)."""
    hyper, labels = split_config(study, dict(trial.point))
    family = family_of(hyper)
    configs = member_configs(hyper, family)
    params = {**configs[0].resolved(), **labels}
    if len(configs) > 1:  # packed learning rates: the row says which one
        params["learning_rate"] = list(hyper["learning_rate"])
    return Resolved(trial, trial.key(study), family, configs, params)


def trial_params(study: Study, point: dict[str, Any]) -> dict[str, Any]:
    """The hyperparameter and label columns of a trial's rows (study.trial.trainable writes these beside every row)."""
    return resolve(study, Trial.every_seed(study, point)).params


def _train_rows(study: Study, resolved: Resolved, resources: Resources, device: str, report: Report, on_row: Report,
                stop: StopRule | None) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """The family's training of ``resolved`` on ``device`` as ``resources`` ask (packing, precision); ``stop``: when a
    model may stop early. :func:`trainables.families.packs` decides ``packed`` from the request and the device whose
    default ``auto`` follows (:func:`study.trial.devices.packing_device`)."""
    from trainables.families import packs

    family, configs = resolved.family, resolved.configs
    packed = packs(family, resources.packing, packing_device(resources.gpus_per_trial, device),
                   n_configs=len(configs))
    rows: list[dict[str, Any]] = []
    # The running objective is recomputed when an evaluation's first row arrives, over the rows before it (complete
    # evaluations): a pack's K rows of one evaluation arrive together, so it costs one G per evaluation, not one per
    # row (quadratic in a large pack's rows). It lags one evaluation; the trial's last report is exact.
    running = {"step": None, "objective": math.nan}

    def on_eval(row: dict[str, Any]) -> bool:
        if row["step"] != running["step"]:
            running["step"] = row["step"]
            running["objective"] = objective(rows, study.metric, study.mode)
        rows.append(row)
        report({"objective": running["objective"], "seed": row["seed"], "step": row["step"]})
        on_row(row)
        return stop is not None and stop(row)

    from trainables.compiling import compile_setting
    from trainables.gpu_share import gpu_share

    share = resources.gpus_per_trial if resources.gpus_per_trial > 0 else 1.0
    with precision_context(device, resources.precision), compile_setting(resources.compile), gpu_share(share):
        result = family.train(configs, list(resolved.trial.seeds), device=device, on_eval=on_eval, packed=packed)
    return [{**resolved.params, **row} for row in result.rows], result.artifacts


def precision_context(device: str, precision: str) -> contextlib.AbstractContextManager[Any]:
    """The numeric precision of a trial, around the family's whole training (none of them needs to know).

    * ``fp32``: nothing to do (PyTorch's default).
    * ``bf16``: bf16 autocast. Matmuls and convolutions run in bfloat16 (their gradients follow the forward's
      dtypes) while losses, softmax and normalisations stay float32 (torch's autocast op lists); parameters and
      optimiser state stay float32. Evaluation runs under it too, so reported accuracies are the bf16 model's.
    * ``fp64``: float64 everywhere (torch's default dtype inside the context: parameters, activations, the
      random draws of initialisation and data). Slower, but the same run on another CPU or SIMD path agrees to
      ~1e-12 instead of drifting apart from the last bit of float32 (docs/reproducibility.md).
    """
    if precision not in PRECISIONS:
        raise ValueError(f"invalid precision={precision!r}; allowed: {', '.join(PRECISIONS)}")
    if precision == "fp32":
        return contextlib.nullcontext()
    import torch

    if precision == "fp64":
        return torch_setting(torch.get_default_dtype, torch.set_default_dtype, torch.float64)
    return torch.autocast(device_type=str(device).split(":")[0], dtype=torch.bfloat16)


@contextlib.contextmanager
def torch_setting(get: Callable[[], Any], put: Callable[[Any], Any], value: Any) -> Iterator[None]:
    """One of torch's process-wide settings (default dtype, thread count) at ``value`` inside, restored after."""
    before = get()
    put(value)
    try:
        yield
    finally:
        put(before)


def _open_tracking(stack: contextlib.ExitStack, track: Sequence[Any], study: Study, resolved: Resolved) -> Report:
    """Each row's callback for the trial's tracker runs (study.tracking), closed with ``stack``."""
    if not track:
        return lambda _: None
    from study.tracking import TrialTracking

    return stack.enter_context(TrialTracking(track, study, resolved.key, resolved.params)).row


def _stop_rule(study: Study, storage: TrialStore, resolved: Resolved) -> StopRule | None:
    """When the trial's models may stop (study.trial.stopping): the rows of its cell's earlier trials, if any."""
    trial = resolved.trial
    keys = [Trial(trial.point, group).key(study) for group in trial.earlier]
    earlier = [row for _, table in storage.read_trials(keys) for row in table.to_pylist()] if keys else []
    return StopRule.for_trial(read_columns(study), study.seeds, trial.seeds, earlier, resolved.single_cell)


def run_trial(study: Study, storage: TrialStore, trial: Trial | Mapping[str, Any], *,
              resources: Resources | None = None, device: str = "cpu", report: Report | None = None,
              node_id: str = "local", track: Sequence[Any] = (), plugins: Sequence[dict[str, Any]] = ()) -> float:
    """Train one trial (a point with its seeds: :class:`study.trial.spec.Trial`; a bare point trains every seed) with
    its family's ``train`` and write its rows; returns the objective.

    `resources` (study.trial.resources; None: one CPU, the defaults) say how it trains on `device` (where the worker
    put it: study.trial.devices). Their `packing` asks how a configuration's seeds train: ``auto`` (the family's
    default on the device the trial asked for), ``on`` or ``off`` (:func:`trainables.families.packs` decides, and warns
    where it cannot honour it); their `precision` (``fp32``, ``bf16`` autocast or ``fp64``: :func:`precision_context`)
    is recorded in every row. `node_id` (the Ray node that ran the trial) and the host name are recorded too.
    `track` (study.tracking.TrackSpec): trackers that get each row as it comes; a trial found on disk logs nothing.
    `plugins` (the driver's trainables.plugins.record): the plugins of yours that made the rows, recorded in their
    ``plugins`` column (a study without any has no such column). A model whose cell's numbers are final stops early
    (study.trial.stopping; its rows say where).
    """
    report = report or (lambda _: None)
    resources = resources or Resources()
    resolved = resolve(study, trial if isinstance(trial, Trial) else Trial.every_seed(study, trial))
    key = resolved.key
    existing = storage.read_trial(key)
    if existing is not None:  # finished before (a relaunch after a killed driver, or a duplicate sample)
        score = objective(existing.to_pylist(), study.metric, study.mode)
        report({"objective": score, "seed": -1, "step": -1})
        return score
    started = time.time()
    with contextlib.ExitStack() as stack:
        on_row = _open_tracking(stack, track, study, resolved)
        rows, artifacts = _train_rows(study, resolved, resources, device, report, on_row,
                                      _stop_rule(study, storage, resolved))
    version, host, where = code_version(), socket.gethostname(), machine_text()
    finished = time.time()  # when the trial's rows were written: their files fold into the table later
    made_by = {"plugins": label} if (label := rows_label(list(plugins))) else {}
    for row in rows:
        row.update(study=study.name, trial_key=key, code_version=version, node_id=node_id, hostname=host, machine=where,
                   precision=resources.precision, finished_at=finished, **made_by)
    for name, table in artifacts.items():  # before the trial file: that file marks the trial finished
        storage.write_artifact(name, key, pa.Table.from_pylist([{**r, "trial_key": key} for r in table]))
    storage.write_trial(key, pa.Table.from_pylist(rows))
    storage.clear_failed(key)
    score = objective(rows, study.metric, study.mode)
    report({"objective": score, "seed": -1, "step": -1, "trial_seconds": time.time() - started})
    return score
