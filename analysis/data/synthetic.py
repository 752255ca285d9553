"""Synthetic studies in the results schema of ``docs/results.md``, for tests and benchmarks.

The accuracy of a synthetic model rises towards a ceiling that depends smoothly on the
hyperparameters (best at a middle learning rate, better for larger ``d_model``); the highest
learning rates diverge for some seeds (accuracy 0.0 and NaN losses from the divergence on, every row
of that seed marked ``diverged``). Nothing here trains a model.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from search_spaces.record import StudyRecord

#: Fixed hyperparameters written into every row unless the grid varies them.
DEFAULT_FIXED: dict[str, Any] = {
    "task": "cases",
    "d_model": 128,
    "n_layers": 2,
    "n_heads": 4,
    "learning_rate": 0.0027,
    "batch_size": 32,
    "n_steps": 3200,
    "seq_len": 128,
    "val_seq_len": 64,
    "vocab_size": 100,
    "dropout": 0.0,
    "l2_weight": 0.0,
    "init_scale": 1.0,
    "warmup": 0.0,
    "grad_clip": 0.0,
    "ln_placement": "pre_residual",
    "attention_gelu": True,
    "case_mix": "natural",
}

_ARCH_SKILL = {"BERT": 0.97, "MTE": 0.95, "NAP": 0.99, "NON": 0.9, "sum": 0.6, "max": 0.12}


def trial_key(study: str, config: Mapping[str, Any]) -> str:
    """16 hex chars, deterministic in (study name, configuration)."""
    text = study + json.dumps(dict(config), sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def _ceiling(config: Mapping[str, Any]) -> float:
    skill = _ARCH_SKILL.get(str(config.get("architecture")), 0.8)
    lr = float(config.get("learning_rate", 1e-3))
    d = float(config.get("d_model", 64))
    lr_fit = math.exp(-((math.log10(lr) + 2.7) ** 2) / 1.5)  # best near lr = 2e-3
    d_fit = 1.0 - 0.5 * math.exp(-d / 24.0)
    dropout = float(config.get("dropout", 0.0))
    return 0.1 + (skill - 0.1) * lr_fit * d_fit * (1.0 - 0.3 * dropout)


def write_synthetic_study(
    study_dir: str | Path,
    grid: Mapping[str, Sequence[Any]],
    *,
    seeds: Sequence[int] = (0, 1),
    n_evals: int = 4,
    eval_every: int = 100,
    cases: bool = True,
    name: str = "synthetic.study",
    meta: Mapping[str, Any] | None = None,
    rng_seed: int = 0,
) -> dict[str, Any]:
    """Write ``study.json`` and one ``trials/<trial_key>.parquet`` per configuration of ``grid``.

    Args:
        study_dir: the study directory to create.
        grid: hyperparameter -> values; the trials are the Cartesian product (first key varies slowest).
        seeds, n_evals, eval_every: seeds per trial, evaluation points and steps between them.
        cases: whether to fill the case-accuracy columns (null otherwise).
        name: the study name (``study`` column, ``study.json["name"]``).
        meta: extra ``study.json`` entries (``plot``, ``findings``, ``reference``, ...).

    Returns:
        The study definition written to ``study.json``.
    """
    study_dir = Path(study_dir)
    trials_dir = study_dir / "trials"
    trials_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(rng_seed)
    names = list(grid)
    configs = [dict(zip(names, values, strict=True)) for values in itertools.product(*grid.values())]
    for config in configs:
        full = {**DEFAULT_FIXED, **config}
        key = trial_key(name, full)
        table = pa.table(_trial_columns(full, key, name, rng, seeds, n_evals, eval_every, cases))
        tmp = trials_dir / f".{key}.tmp"
        pq.write_table(table, tmp, compression="zstd")
        tmp.rename(trials_dir / f"{key}.parquet")
    definition = _definition(name, grid, seeds, len(configs))
    definition |= dict(meta or {})
    (study_dir / "study.json").write_text(json.dumps(definition, indent=1))
    return definition


def _trial_columns(full: Mapping[str, Any], key: str, name: str, rng: np.random.Generator, seeds: Sequence[int],
                   n_evals: int, eval_every: int, cases: bool) -> dict[str, Any]:
    """The columns of one synthetic trial: rows per (seed, evaluation), rising accuracies, divergences."""
    n_seeds, n_rows = len(seeds), len(seeds) * n_evals
    seed_col = np.repeat(np.asarray(seeds, dtype=np.int64), n_evals)
    epoch_col = np.tile(np.arange(1, n_evals + 1, dtype=np.int64), n_seeds)
    step_col = epoch_col * eval_every
    progress = 1.0 - np.exp(-epoch_col / max(n_evals / 3.0, 1.0))
    ceiling = _ceiling(full)
    seed_skill = np.repeat(rng.normal(0.0, 0.03, n_seeds), n_evals)
    noise = rng.normal(0.0, 0.01, n_rows)
    val = np.clip(ceiling * progress + seed_skill + noise, 0.0, 1.0)
    train = np.clip(val + 0.01 + rng.normal(0.0, 0.005, n_rows), 0.0, 1.0)
    status = np.full(n_rows, "ok", dtype=object)
    if float(full["learning_rate"]) > 0.05:  # some seeds diverge at high learning rates
        bad = rng.random(n_seeds) < 0.5
        for s in np.flatnonzero(bad):
            rows = slice(s * n_evals, (s + 1) * n_evals)
            at = s * n_evals + int(rng.integers(0, n_evals))
            val[at : (s + 1) * n_evals] = 0.0
            train[at : (s + 1) * n_evals] = 0.0
            status[rows] = "diverged"
    train_loss = -np.log(np.clip(train, 1e-3, 1.0))
    val_loss = -np.log(np.clip(val, 1e-3, 1.0))
    train_loss[train == 0.0] = np.nan
    val_loss[val == 0.0] = np.nan
    columns: dict[str, Any] = {
        "study": pa.array([name] * n_rows, pa.string()),
        "trial_key": pa.array([key] * n_rows, pa.string()),
        "seed": seed_col,
        "step": step_col,
        "epoch": epoch_col,
    }
    for hp, value in full.items():
        columns[hp] = pa.array([value] * n_rows)
    columns |= {"train_loss": train_loss, "train_accuracy": train, "val_loss": val_loss, "val_accuracy": val}
    null_f64 = pa.nulls(n_rows, pa.float64())
    for split, acc in (("train", train), ("val", val)):
        for case, shift in (("argmin", 0.02), ("first", 0.05), ("argmax", -0.1)):
            columns[f"{split}_{case}_accuracy"] = np.clip(acc + shift, 0.0, 1.0) if cases else null_f64
    return columns | {
        "status": pa.array(status.tolist(), pa.string()),
        "wall_time_s": step_col * 0.01,
        "n_params": np.full(n_rows, 1000, dtype=np.int64),
        "device": pa.array(["cpu"] * n_rows, pa.string()),
        "code_version": pa.array(["0.1.0+synthetic"] * n_rows, pa.string()),
    }


def _definition(name: str, grid: Mapping[str, Sequence[Any]], seeds: Sequence[int], n_trials: int) -> dict[str, Any]:
    """The study.json of a synthetic study (before the caller's ``meta`` is merged in)."""
    return synthetic_record(
        name, {k: tuple(v) for k, v in grid.items() if k != "learning_rate"},
        nuisance={"learning_rate": tuple(grid["learning_rate"])} if "learning_rate" in grid else {},
        fixed={k: v for k, v in DEFAULT_FIXED.items() if k not in grid and k != "task"}, seeds=tuple(seeds),
        versions={"attention_studies": "0.1.0"})


#: The panel values a synthetic record's architecture axis takes unless the caller names its own.
ARCHITECTURES = ("BERT", "MTE", "NAP", "NON", "sum", "max")


def synthetic_record(name: str = "synthetic.study", scientific: Mapping[str, Any] | None = None,
                     **fields: Any) -> dict[str, Any]:
    """A valid ``study.json`` (:class:`search_spaces.record.StudyRecord`) of a study that trains nothing: the given
    fields over defaults (task ``cases``, an ``architecture`` axis of :data:`ARCHITECTURES`)."""
    axes = dict(scientific if scientific is not None else {"architecture": ARCHITECTURES})
    fields.setdefault("tasks", (DEFAULT_FIXED["task"],) if "task" not in axes else ())
    return StudyRecord(name=name, goal="synthetic study for tests and benchmarks", scientific=axes,
                       **fields).to_json()
