"""Published results shipped with the package, mapped into the project's results schema.

The reference Parquet files (``reference_data/<paper>/<name>.parquet``, schema in docs/richter2020.md) hold
the numbers the authors of a paper released, one row per (architecture, x_value, learning_rate, seed,
epoch), with the release's own name of the swept axis in ``swept``. This module maps them onto the columns
of ``docs/results.md`` so every analysis function runs on them unchanged: ``x_value`` becomes the study's
column with the study's type (``model_dimension`` -> ``d_model``, an integer), and ``study``,
``trial_key``, ``step`` and ``status`` are added.

Every swept name of the Richter & Wattenhofer release is in :data:`SWEPT`; another name is an error naming
the file and the name (never a raw Float64 column that no study has). ``step`` follows the release's
evaluation interval, which is 100 steps except where the swept axis changes the run length (batch size,
vocabulary size).

A study whose axis the release spreads over several files, or names otherwise, names a composed reference
(:data:`COMPOSED`): Table 4's regularisation axis is the release's unregularised ``mode__var_dim`` runs at d = 128 and
its ``mode__var_dropout`` and ``mode__var_l2_regularization`` runs, stacked and labelled with the study's value of
that axis; Fig. 9's ablation step is the ablation runs' architecture.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from string import Formatter

import polars as pl

from core.errors import OneLineError, one_line
from search_spaces.record import StudyRecord

REFERENCE_DIR: Path = Path(__file__).parent / "reference_data"

#: Optimiser steps per evaluation in the released results (32 "epochs" x 100 steps) by default.
STEPS_PER_EPOCH: int = 100


#: The columns of every file of the release's schema (docs/richter2020.md), in its order; a cases task's file adds its
#: case accuracies.
RELEASE_COLUMNS: tuple[str, ...] = ("paper", "task", "swept", "architecture", "x_value", "learning_rate", "seed",
                                    "epoch", "train_accuracy", "val_accuracy", "train_loss", "val_loss")


class ReferenceFileError(OneLineError, ValueError):
    """A file given as published results that is not of the release's schema: the message names the file, what is
    wrong with it and what is expected (bad input: exit status 2)."""


@dataclass(frozen=True)
class Swept:
    """A swept axis of the release: the project's column, its type, and the release's steps per epoch."""

    column: str
    dtype: type[pl.DataType]
    #: ``(steps per epoch) = numerator // x`` (batch size) or ``x * numerator // denominator``; None: 100.
    steps_rule: str | None = None

    def steps_per_epoch(self, x: pl.Expr) -> pl.Expr:
        """The release's evaluation interval for swept value ``x`` (its train.py)."""
        if self.steps_rule == "per_batch":  # examples seen kept constant: 100 * 32 // batch size
            return (STEPS_PER_EPOCH * 32) // x
        if self.steps_rule == "per_vocabulary":  # examples per class kept constant: 100 * S // 8
            return (STEPS_PER_EPOCH * x) // 8
        return pl.lit(STEPS_PER_EPOCH, dtype=pl.Int64)


#: Every ``swept`` name of the Richter & Wattenhofer 2020 release (its ``variations[0]["name"]``).
SWEPT: dict[str, Swept] = {
    "model_dimension": Swept("d_model", pl.Int64),
    "layers": Swept("n_layers", pl.Int64),
    "heads": Swept("n_heads", pl.Int64),
    "max_sequence_length": Swept("seq_len", pl.Int64),
    "batch_size": Swept("batch_size", pl.Int64, "per_batch"),
    "vocabulary_size": Swept("vocab_size", pl.Int64, "per_vocabulary"),
    "initial_std_factor": Swept("init_scale", pl.Float64),
    "dropout": Swept("dropout", pl.Float64),
    "L2_regularization": Swept("l2_weight", pl.Float64),
    # The release's integer shift of the case mix; no study sweeps it (Fig. 4 varies N instead).
    "case_bias": Swept("case_bias", pl.Int64),
}


@dataclass(frozen=True)
class Part:
    """One shipped file of a composed reference: the settings its runs had (a column the file has keeps only the
    rows at that value; one it lacks is added at it) and the label of its rows, a format of their columns
    (``"dropout {dropout:g}"``; a label without fields is every row's)."""

    name: str
    label: str
    settings: tuple[tuple[str, int | float], ...] = ()


@dataclass(frozen=True)
class Composed:
    """A reference stacked from shipped files, its rows labelled in ``column`` (a study's Linked axis)."""

    column: str
    parts: tuple[Part, ...]


#: References composed of shipped files, labelled as the study that names them labels its axis. App. E's regularised
#: mode runs are at d = 128 (Table 4), its unregularised row the release's d = 128 column of Fig. 7's runs. The
#: ablation runs (Fig. 9) name their step as the architecture: the one shipped, BERT, is the study's label "BERT" (the
#: four MTE-side steps, missing from the copy of the release converted here, are named otherwise there).
COMPOSED: dict[str, Composed] = {
    "richter2020/ablation__cases": Composed("ablation", (
        Part("richter2020/ablation__cases__var_dim", "{architecture}"),)),
    "richter2020/mode__regularization": Composed("regularization", (
        Part("richter2020/mode__var_dim", "none", (("d_model", 128), ("dropout", 0.0), ("l2_weight", 0.0))),
        Part("richter2020/mode__var_dropout", "dropout {dropout:g}", (("d_model", 128), ("l2_weight", 0.0))),
        Part("richter2020/mode__var_l2_regularization", "L2 {l2_weight:g}", (("d_model", 128), ("dropout", 0.0))),
    )),
}


def available_references() -> list[str]:
    """Names accepted by :func:`load_reference`, e.g. ``["richter2020/mode__var_dim", ...]``."""
    return sorted([*(f"{p.parent.name}/{p.stem}" for p in REFERENCE_DIR.glob("*/*.parquet")), *COMPOSED])


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


def swept_axis(path: str | Path) -> tuple[str, Swept]:
    """The release's swept name of a reference file and how it maps.

    Raises:
        ReferenceFileError: the file is not Parquet or lacks a column of :data:`RELEASE_COLUMNS` (naming them).
        ValueError: the file mixes swept axes, or names one not in :data:`SWEPT` (naming the file, the name
            and the known names).
    """
    check_release_columns(path)
    names = pl.scan_parquet(path).select(pl.col("swept").unique()).collect().to_series().to_list()
    if len(names) != 1:
        raise ValueError(f"{path} mixes swept axes {names}; expected exactly one")
    if names[0] not in SWEPT:
        raise ValueError(f"{path}: unknown swept axis {names[0]!r}; known: {', '.join(SWEPT)}")
    return names[0], SWEPT[names[0]]


def check_release_columns(path: str | Path) -> None:
    """:class:`ReferenceFileError` unless ``path`` is a Parquet file with every column of :data:`RELEASE_COLUMNS`
    (FileNotFoundError when there is no such file)."""
    expected = f"expected a file of the release's schema (docs/richter2020.md): {', '.join(RELEASE_COLUMNS)}"
    try:
        schema = pl.read_parquet_schema(path)
    except pl.exceptions.ComputeError as error:
        raise ReferenceFileError(f"{path}: not a Parquet file ({one_line(error, typed=False)}); {expected}") from None
    missing = [c for c in RELEASE_COLUMNS if c not in schema]
    if missing:
        raise ReferenceFileError(f"{path}: missing column(s) {', '.join(missing)}; {expected}")


def load_reference(name: str) -> pl.LazyFrame:
    """Published results ``name`` (e.g. ``"richter2020/mode__var_dim"``) in the project's schema.

    Columns: ``study`` (``"<paper>.<file stem>"``), ``trial_key`` (16 hex chars, a hash of study,
    architecture, x and learning rate), ``paper``, ``task``, ``architecture``, the swept column
    (``d_model`` for ``model_dimension``, see :data:`SWEPT`), ``learning_rate``, ``seed``, ``epoch``,
    ``step`` (epoch x the release's evaluation interval), the metric columns and ``status = "ok"``.
    """
    return open_reference(name.removesuffix(".parquet"))[0]


def open_reference(name: str) -> tuple[pl.LazyFrame, str]:
    """Published results by shipped or composed name (:func:`load_reference`) or by the path of a ``.parquet`` file
    in the release's schema (:func:`load_reference_file`), and the project column of its swept axis (e.g.
    ``d_model``; a composed reference's ``column``)."""
    if name in COMPOSED:
        return _composed(name, COMPOSED[name]), COMPOSED[name].column
    if name.endswith(".parquet"):
        lf, swept = _mapped(Path(name), None)
    else:
        lf, swept = _mapped(reference_path(name), name.replace("/", "."))
    return lf, swept.column


def _composed(name: str, composed: Composed) -> pl.LazyFrame:
    """The parts' rows at their settings, stacked, labelled in ``composed.column`` and keyed as one study."""
    study = name.replace("/", ".")
    frames = []
    for part in composed.parts:
        lf = load_reference(part.name)
        present = lf.collect_schema().names()
        kept = [pl.col(c) == v for c, v in part.settings if c in present]
        lf = lf.filter(*kept) if kept else lf
        added = [pl.lit(v, dtype=pl.Int64 if isinstance(v, int) else pl.Float64).alias(c)
                 for c, v in part.settings if c not in present]
        frames.append(_labelled(lf.with_columns(*added), part.label, composed.column).with_columns(study=pl.lit(study)))
    stacked = pl.concat(frames, how="diagonal")
    configs = stacked.select("architecture", composed.column, "learning_rate").unique().collect()
    keys = configs.with_columns(pl.Series(
        "trial_key", [_trial_key(study, a, x, lr) for a, x, lr in configs.iter_rows()], dtype=pl.String))
    return (stacked.drop("trial_key").join(keys.lazy(), on=["architecture", composed.column, "learning_rate"])
            .select("study", "trial_key", pl.exclude("study", "trial_key")))


def _labelled(lf: pl.LazyFrame, label: str, column: str) -> pl.LazyFrame:
    """``lf`` with ``column`` = ``label`` formatted with each row's values of the columns it names."""
    fields = list(dict.fromkeys(f for _, f, _, _ in Formatter().parse(label) if f))
    if not fields:
        return lf.with_columns(pl.lit(label).alias(column))
    values = lf.select(fields).unique().collect()
    labels = values.with_columns(pl.Series(column, [label.format_map(row) for row in values.iter_rows(named=True)],
                                           dtype=pl.String))
    return lf.join(labels.lazy(), on=fields, how="left")


def load_reference_file(path: str | Path, study: str | None = None) -> pl.LazyFrame:
    """A reference file in the release's schema (shipped or not) mapped like :func:`load_reference`.

    Raises:
        ValueError: an unknown swept name, or an integer axis with a non-integer value (naming the file).
    """
    return _mapped(Path(path), study)[0]


def _mapped(path: Path, study: str | None) -> tuple[pl.LazyFrame, Swept]:
    _, swept = swept_axis(path)
    raw = pl.scan_parquet(path)
    if study is None:
        paper = raw.select(pl.col("paper").first()).collect().item()
        study = f"{paper}.{path.stem}"
    configs = raw.select("architecture", "x_value", "learning_rate").unique().collect()
    if swept.dtype == pl.Int64:
        bad = configs.filter(pl.col("x_value") != pl.col("x_value").round(0)).get_column("x_value").to_list()
        if bad:
            raise ValueError(f"{path}: swept {swept.column} must be whole numbers; got {sorted(set(bad))[:5]}")
    keys = configs.with_columns(pl.Series(
        "trial_key", [_trial_key(study, a, x, lr) for a, x, lr in configs.iter_rows()], dtype=pl.String))
    x = pl.col("x_value").cast(swept.dtype)
    mapped = (
        raw.join(keys.lazy(), on=["architecture", "x_value", "learning_rate"], how="left")
        .with_columns(
            pl.lit(study).alias("study"),
            x.alias(swept.column),
            pl.col("seed").cast(pl.Int64),
            pl.col("epoch").cast(pl.Int64),
            (pl.col("epoch").cast(pl.Int64) * swept.steps_per_epoch(x).cast(pl.Int64)).alias("step"),
            pl.lit("ok").alias("status"),
        )
        .drop("x_value", "swept")
        .select("study", "trial_key", pl.exclude("study", "trial_key"))
    )
    return mapped, swept


def published_record(name: str, lf: pl.LazyFrame, column: str) -> StudyRecord:
    """The record of published results as a study of their own: an architecture x ``column`` x learning-rate grid
    of the values the data holds (what `study compare` reads of a published side)."""
    values = lf.select(pl.col("task").first(), *(pl.col(c).unique().sort().implode()
                                                 for c in ("architecture", column, "learning_rate"))).collect().row(0)
    task, architectures, xs, rates = values
    return StudyRecord(name=f"published:{name}", goal=f"the published results {name}", tasks=(task,),
                       scientific={"architecture": tuple(architectures), column: tuple(xs)},
                       nuisance={"learning_rate": tuple(rates)}, seeds=tuple(range(5)),
                       plot={"panel": "architecture", "x": column, "y": "learning_rate"}, source=f"published:{name}")
