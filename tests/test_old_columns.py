"""A study written before ``mixer`` meant one thing (analysis/data/columns.py) reads, folds and resumes as one now.

Old rows: ``mixer`` = ``stack`` (a Richter stack), ``dpa`` / ``ea`` (Gros' head), ``own`` (a CTL model's attention),
and ``attention`` = the unused Gros hyperparameter or the CTL registry mixer's name beside a registry mixer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import write_deltalake

from analysis.data.columns import current_columns
from analysis.data.location import Location
from analysis.data.rows import scan_study
from analysis.stats.rgb import objective
from search_spaces import Study, get_study
from study.results.storage import StudyStorage
from study.results.table import fold
from study.trial.identity import trial_key
from study.trial.trainable import run_trial

#: (trial key, mixer, attention, mixer_stack, model) as written before issue 25 -> (mixer, attention) now.
OLD = {
    "00000000000000a1": (("stack", None, "sepconv,softmax", None), (None, None)),  # Richter hybrid stack
    "00000000000000a2": (("softmax", None, "softmax,softmax", None), ("softmax", None)),  # Richter, one mixer
    "00000000000000b1": (("dpa", "dpa", None, None), (None, "dpa")),  # Gros' paper head
    "00000000000000b2": (("ea", "ea", None, None), (None, "ea")),
    "00000000000000b3": (("bilinear", "ea", None, None), ("bilinear", None)),  # Gros with a registry mixer
    "00000000000000c1": (("own", "relative", None, "+ rel"), (None, "relative")),  # a CTL model's own attention
    "00000000000000c2": (("sepconv", "sepconv", None, "Transformer"), ("sepconv", None)),  # CTL + registry mixer
}
WANT = {key: now for key, (_, now) in OLD.items()}


def _old_rows(key: str) -> list[dict[str, Any]]:
    mixer, attention, stack, model = OLD[key][0]
    return [{"study": "old.study", "trial_key": key, "seed": seed, "step": step, "epoch": step // 10,
             "mixer": mixer, "attention": attention, "mixer_stack": stack, "model": model,
             "val_accuracy": 0.25 * seed + step / 100, "status": "ok"}
            for seed in (0, 1) for step in (10, 20)]


def _write_old_study(study_dir: Path, keys: list[str]) -> None:
    (study_dir / "trials").mkdir(parents=True)
    for key in keys:
        pq.write_table(pa.Table.from_pylist(_old_rows(key)), study_dir / "trials" / f"{key}.parquet")


def _now(frame: pl.DataFrame) -> dict[str, tuple[str | None, str | None]]:
    pairs = frame.select("trial_key", "mixer", "attention").unique().sort("trial_key").iter_rows()
    return {key: (mixer, attention) for key, mixer, attention in pairs}


def test_current_columns_maps_old_values_and_leaves_new_rows_alone() -> None:
    old = pl.DataFrame([row for key in OLD for row in _old_rows(key)])
    now = current_columns(old)
    assert _now(now) == WANT
    assert current_columns(now).equals(now)  # new rows (and rows mapped once) stay as they are
    assert now.drop("mixer", "attention").equals(old.drop("mixer", "attention"))  # nothing else changes
    richter_only = pl.DataFrame({"mixer": ["stack", "sum"], "mixer_stack": ["sum,max", "sum,sum"]})
    assert current_columns(richter_only)["mixer"].to_list() == [None, "sum"]  # no attention column: none added
    assert current_columns(richter_only).columns == ["mixer", "mixer_stack"]


def test_an_old_study_reads_and_folds_into_the_new_columns(tmp_path: Path) -> None:
    study_dir = tmp_path / "old.study"
    _write_old_study(study_dir, list(OLD))
    assert _now(scan_study(study_dir).collect()) == WANT  # the trial files, read as written now
    result = fold(Location.of(study_dir))
    assert result.trials == len(OLD) and not list((study_dir / "trials").glob("*.parquet"))
    stored = pl.read_delta(str(study_dir / "table"))
    assert _now(stored) == WANT  # `study compact` / a run's fold wrote the new columns
    folded = scan_study(study_dir).collect().sort("trial_key", "seed", "step")
    assert _now(folded) == WANT
    assert folded["val_accuracy"].to_list() == [r["val_accuracy"] for k in sorted(OLD) for r in _old_rows(k)]


def test_old_rows_already_in_the_table_read_as_new_ones(tmp_path: Path) -> None:
    """A table folded before the change (old values in it) beside a new trial file: one meaning when read."""
    study_dir = tmp_path / "old.study"
    keys = list(OLD)
    old = pa.Table.from_pylist([row for key in keys[:4] for row in _old_rows(key)])
    write_deltalake(str(study_dir / "table"), old)  # the old table, as an old fold left it
    _write_old_study(study_dir, keys[4:])
    assert _now(scan_study(study_dir).collect()) == WANT
    fold(Location.of(study_dir))  # appends the files' rows in the new layout; the old table rows stay old
    assert _now(scan_study(study_dir).collect()) == WANT
    storage = StudyStorage(storage=str(tmp_path), directory="old.study")
    trial = storage.read_trial(keys[0])  # the stack trial, read back from the table (resume, verify)
    assert trial is not None and set(trial.column("mixer").to_pylist()) == {None}


GROS = Study(name="old.gros", goal="an old Gros study on disk resumes", tasks=("nt",),
             scientific={"attention": ("dpa", "ea")},
             fixed={"basis": 4, "delay": 1, "n_context": 6, "n_epochs": 20, "eval_every": 10, "eval_series": 8,
                    "eval_predictions": 6, "final_eval_series": 16}, seeds=(0, 1))


def test_a_trial_written_in_the_old_layout_is_not_run_again(tmp_path: Path) -> None:
    storage = StudyStorage(storage=str(tmp_path), directory=GROS.directory)
    point = {"attention": "dpa"}
    key = trial_key(GROS.name, GROS.configuration(point), GROS.seeds)
    rows = [{**row, "trial_key": key, "val_accuracy": 0.123 + row["seed"]} for row in _old_rows("00000000000000b1")]
    path = Path(storage.trial_path(key))
    path.parent.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    written = path.read_bytes()
    score = run_trial(GROS, storage, point)  # finds the old file: returns its objective, trains nothing
    assert score == objective(rows, GROS.metric, GROS.mode)
    assert path.read_bytes() == written


def test_the_rename_keeps_the_trial_keys_of_studies_on_disk() -> None:
    """Keys hash (study name, configuration, seeds): the configurations of these studies are those of before
    the rename (recorded on the commit before it), so a resumed study skips every finished trial."""
    one = Study(name="keys.one", goal="g", tasks=("mode",), scientific={"d_model": (8, 16)}, fixed={"n_steps": 10})
    assert [trial_key(one.name, c, one.seeds) for c in one.grid()] == ["e1c716dd4176a6af", "6f593aa1e36c04a9"]
    for name, key in (("atlas", "d0672db2db6df2f9"), ("yun2020.hybrid", "d1bd6aec52e5c9ca")):
        study = get_study(name)
        assert trial_key(study.name, next(iter(study.grid())), study.seeds) == key, name
