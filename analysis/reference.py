"""Published results shipped with the package, mapped into the project's results schema.

The reference Parquet files (``reference_data/<paper>/<name>.parquet``) hold the numbers the authors
of a paper released, one row per (architecture, x_value, learning_rate, seed, epoch). This module maps
them onto the columns of ``docs/results.md`` so every analysis function runs on them unchanged: the
generic ``x_value`` becomes the column of the swept hyperparameter (``model_dimension`` -> ``d_model``),
and ``study``, ``trial_key``, ``step`` and ``status`` are added.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import polars as pl

REFERENCE_DIR: Path = Path(__file__).parent / "reference_data"

#: The released files' name of the swept axis -> (project column, dtype of that column).
SWEPT_TO_COLUMN: dict[str, tuple[str, type[pl.DataType]]] = {
    "model_dimension": ("d_model", pl.Int64),
    "sequence_length": ("seq_len", pl.Int64),
    "num_heads": ("n_heads", pl.Int64),
    "num_layers": ("n_layers", pl.Int64),
    "batch_size": ("batch_size", pl.Int64),
    "vocab_size": ("vocab_size", pl.Int64),
    "dropout": ("dropout", pl.Float64),
    "l2_weight": ("l2_weight", pl.Float64),
}

#: Optimiser steps per evaluation in the released results (32 "epochs" x 100 steps).
STEPS_PER_EPOCH: int = 100


def available_references() -> list[str]:
    """Names accepted by :func:`load_reference`, e.g. ``["richter2020/mode__var_dim", ...]``."""
    return sorted(f"{p.parent.name}/{p.stem}" for p in REFERENCE_DIR.glob("*/*.parquet"))


def reference_path(name: str) -> Path:
    """The Parquet file of the published results ``name`` (``"<paper>/<file stem>"``).

    Raises:
        FileNotFoundError: listing the valid names when ``name`` is unknown.
    """
    path = REFERENCE_DIR / f"{name.removesuffix('.parquet')}.parquet"
    if not path.is_file():
        raise FileNotFoundError(f"unknown reference {name!r}; valid: {available_references()}")
    return path


def _trial_key(*parts: object) -> str:
    return hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=8).hexdigest()


def load_reference(name: str) -> pl.LazyFrame:
    """Published results ``name`` (e.g. ``"richter2020/mode__var_dim"``) in the project's schema.

    Columns: ``study`` (``"<paper>.<file stem>"``), ``trial_key`` (16 hex chars, a hash of study,
    architecture, x and learning rate), ``paper``, ``task``, ``architecture``, the swept column
    (``d_model`` for ``model_dimension``, see :data:`SWEPT_TO_COLUMN`), ``learning_rate``, ``seed``,
    ``epoch``, ``step = epoch * 100``, the metric columns and ``status = "ok"``.
    """
    path = reference_path(name)
    raw = pl.scan_parquet(path)
    swept_values = raw.select(pl.col("swept").unique()).collect().to_series().to_list()
    if len(swept_values) != 1:
        raise ValueError(f"{path} mixes swept axes {swept_values}; expected exactly one")
    swept = swept_values[0]
    column, dtype = SWEPT_TO_COLUMN.get(swept, (swept, pl.Float64))
    study = name.removesuffix(".parquet").replace("/", ".")

    configs = raw.select("architecture", "x_value", "learning_rate").unique().collect()
    keys = configs.with_columns(
        pl.Series(
            "trial_key",
            [_trial_key(study, a, x, lr) for a, x, lr in configs.iter_rows()],
            dtype=pl.String,
        )
    )
    return (
        raw.join(keys.lazy(), on=["architecture", "x_value", "learning_rate"], how="left")
        .with_columns(
            pl.lit(study).alias("study"),
            pl.col("x_value").cast(dtype).alias(column),
            pl.col("seed").cast(pl.Int64),
            pl.col("epoch").cast(pl.Int64),
            (pl.col("epoch").cast(pl.Int64) * STEPS_PER_EPOCH).alias("step"),
            pl.lit("ok").alias("status"),
        )
        .drop("x_value", "swept")
        .select("study", "trial_key", pl.exclude("study", "trial_key"))
    )
