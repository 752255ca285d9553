"""The results table (study/results/table.py, analysis/data/lake.py): trial files folded into a real Delta table,
crash-safe.

Every test folds real Parquet files into a real Delta table with the real deltalake and reads it back with polars;
the crash tests kill a real subprocess (SIGKILL) at each step of a fold.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest
from deltalake import DeltaTable

from analysis.data.location import Location
from analysis.data.rows import open_trials, scan_artifacts, scan_study
from analysis.data.synthetic import write_synthetic_study
from study.results.storage import StudyStorage
from study.results.table import CRASH_ENV, FoldError, fold
from tests.cli import ROOT, run_cli

GRID = {"architecture": ["BERT", "NAP"], "d_model": [8, 16, 32], "learning_rate": [0.09, 0.0081, 0.000729, 1e-4]}
N_TRIALS = 24  # 2 x 3 x 4
ORDER = ["trial_key", "seed", "step"]


@pytest.fixture
def study(tmp_path: Path) -> Path:
    study_dir = tmp_path / "synthetic.study"
    write_synthetic_study(study_dir, GRID, seeds=(0, 1), n_evals=3)
    return study_dir


def _files(study_dir: Path) -> list[Path]:
    return sorted((study_dir / "trials").glob("*.parquet"))


def _all_rows(study_dir: Path) -> pl.DataFrame:
    return scan_study(study_dir).collect().sort(ORDER)


def test_a_fold_moves_every_row_into_the_table_once_and_deletes_the_files(study: Path) -> None:
    before = _all_rows(study)
    result = fold(Location.of(study), batch=10)
    assert (result.trials, result.commits, result.cleaned, result.unreadable) == (N_TRIALS, 3, 0, [])
    assert _files(study) == []
    after = _all_rows(study)
    assert after.select(before.columns).equals(before)
    table = DeltaTable(str(study / "table"))
    assert table.version() == 2 and len(table.file_uris()) == 3  # one commit and one file per batch
    assert [h["operation"] for h in table.history()] == ["WRITE"] * 3
    raw = pl.read_parquet(table.file_uris()[0])
    assert raw.select(ORDER).equals(raw.select(ORDER).sort(ORDER))  # rows sorted within each file
    assert fold(Location.of(study)).commits == 0  # nothing left: no empty commit


def test_many_small_folds_are_rewritten_into_few_files_and_no_row_changes(
        study: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import study.results.table as folding

    monkeypatch.setattr(folding, "MAX_TABLE_FILES", 8)
    before = _all_rows(study)
    assert fold(Location.of(study), batch=2).commits == 12  # 12 small commits, then one rewrite
    table = DeltaTable(str(study / "table"))
    assert table.history()[0]["operation"] == "OPTIMIZE" and len(table.file_uris()) == 1
    assert _all_rows(study).select(before.columns).equals(before)
    assert len(open_trials(study).readable) == N_TRIALS


def test_a_study_with_nothing_folded_yet_reads_as_before(study: Path) -> None:
    scan = open_trials(study)
    assert len(scan.readable) == N_TRIALS and scan.unreadable == ()
    assert not (study / "table").exists()


def _fold_in_a_process_killed_at(study: Path, point: str) -> subprocess.CompletedProcess:
    code = ("import sys; from analysis.data.location import Location; from study.results.table import fold; "
            "fold(Location.of(sys.argv[1]), batch=10)")
    return subprocess.run([sys.executable, "-c", code, str(study)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), CRASH_ENV: point})


@pytest.mark.slow  # a Python subprocess
@pytest.mark.parametrize(("point", "in_table", "files_left"), [
    ("before_commit", 0, N_TRIALS),  # nothing committed: every file still pending
    ("after_commit", 10, N_TRIALS),  # the first batch committed, none of its files deleted yet
    ("mid_delete", 10, N_TRIALS - 5),  # the first batch committed, half of its files deleted
])
def test_a_fold_killed_at_any_step_loses_no_row_shows_none_twice_and_the_next_fold_finishes(
        study: Path, point: str, in_table: int, files_left: int) -> None:
    before = _all_rows(study)
    killed = _fold_in_a_process_killed_at(study, point)
    assert killed.returncode == -9, killed.stderr  # SIGKILL, at that step
    assert len(_files(study)) == files_left
    table = DeltaTable(str(study / "table")) if (study / "table" / "_delta_log").exists() else None
    keys = set() if table is None else set(pl.from_arrow(table.to_pyarrow_table(columns=["trial_key"]))["trial_key"])
    assert len(keys) == in_table

    # every reader: the analysis scan, the resume's keys, a trial checking whether it already ran
    assert _all_rows(study).select(before.columns).equals(before)
    storage = StudyStorage(str(study.parent), study.name)
    assert len(storage.finished_keys()) == N_TRIALS and storage.corrupt_keys() == set()
    folded_key = sorted(keys)[0] if keys else before["trial_key"][0]
    assert pl.from_arrow(storage.read_trial(folded_key)).sort(ORDER).select(before.columns).equals(
        before.filter(pl.col("trial_key") == folded_key))
    assert len(open_trials(study).readable) == N_TRIALS

    result = fold(Location.of(study), batch=10)  # the next fold (a run's, or `study compact`'s) finishes the job
    assert result.trials == N_TRIALS - in_table
    assert result.cleaned == (files_left - (N_TRIALS - in_table))  # committed files the killed fold left
    assert _files(study) == []
    assert _all_rows(study).select(before.columns).equals(before)


def test_new_columns_join_the_schema_and_all_null_columns_are_kept(tmp_path: Path) -> None:
    storage = StudyStorage(str(tmp_path), "s")
    storage.write_trial("a" * 16, pa.Table.from_pylist([{"trial_key": "a" * 16, "seed": 0, "step": 1,
                                                         "case_acc": None, "val_accuracy": 0.5}]))
    fold(storage.location)
    storage.write_trial("b" * 16, pa.Table.from_pylist([{"trial_key": "b" * 16, "seed": 0, "step": 1,
                                                         "case_acc": 0.75, "val_accuracy": 0.25,
                                                         "depth_val_accuracy": 0.125}]))
    fold(storage.location)
    frame = scan_study(tmp_path / "s").collect().sort("trial_key")
    assert frame["case_acc"].to_list() == [None, 0.75] and frame["depth_val_accuracy"].to_list() == [None, 0.125]
    schema = DeltaTable(str(tmp_path / "s" / "table")).schema().to_arrow()
    assert {f.name for f in schema} == {"trial_key", "seed", "step", "case_acc", "val_accuracy", "depth_val_accuracy"}


def test_a_column_the_table_types_otherwise_stops_the_fold_and_its_files_stay_readable(tmp_path: Path) -> None:
    storage = StudyStorage(str(tmp_path), "s")
    storage.write_trial("a" * 16, pa.Table.from_pylist([{"trial_key": "a" * 16, "seed": 0, "step": 1, "x": 3}]))
    fold(storage.location)
    storage.write_trial("b" * 16, pa.Table.from_pylist([{"trial_key": "b" * 16, "seed": 0, "step": 1, "x": 2.5}]))
    with pytest.raises(FoldError, match=r"column 'x' is Float64 in the trial files and Int64 in the table"):
        fold(storage.location)
    assert len(list((tmp_path / "s" / "trials").glob("*.parquet"))) == 1
    assert sorted(scan_study(tmp_path / "s").collect()["x"].to_list()) == [2.5, 3.0]  # nothing lost, nothing cast


def test_an_unreadable_trial_file_is_left_in_place_and_named(study: Path) -> None:
    victim = _files(study)[0]
    victim.write_bytes(victim.read_bytes()[:100])
    result = fold(Location.of(study))
    assert result.trials == N_TRIALS - 1 and result.unreadable == [str(victim)]
    assert _files(study) == [victim]
    scan = open_trials(study)
    assert len(scan.readable) == N_TRIALS - 1 and scan.unreadable == (str(victim),)


def test_artifacts_fold_into_their_own_table_once_their_trial_is_in_the_table(tmp_path: Path) -> None:
    storage = StudyStorage(str(tmp_path), "s")
    done, running = "a" * 16, "b" * 16
    for key in (done, running):
        storage.write_artifact("probe", key, pa.Table.from_pylist([{"trial_key": key, "x": float(len(key))}]))
    storage.write_trial(done, pa.Table.from_pylist([{"trial_key": done, "seed": 0, "step": 1}]))
    result = fold(storage.location)
    assert (result.trials, result.artifacts) == (1, 1)
    assert (tmp_path / "s" / "artifacts_table" / "probe" / "_delta_log").is_dir()
    left = sorted(p.name for p in (tmp_path / "s" / "artifacts" / "probe").iterdir())
    assert left == [f"{running}.parquet"]  # its trial has not finished: it may still be rewritten
    assert scan_artifacts(tmp_path / "s", "probe").collect().sort("trial_key")["trial_key"].to_list() == [done, running]


def test_study_compact_folds_an_old_study_in_place(tmp_path: Path) -> None:
    from tests.test_study_cli import STUDIES

    name = f"{STUDIES}:INTERRUPTIBLE"
    study_dir = tmp_path / "test.interruptible"
    write_synthetic_study(study_dir, {"architecture": ["MTE"], "d_model": [8, 16], "learning_rate": [0.01, 0.001]},
                          seeds=(0, 1), n_evals=3, name="test.interruptible")
    rows_before = _all_rows(study_dir)
    result = run_cli("compact", name, "--storage", str(tmp_path), timeout=120)
    assert result.returncode == 0, result.stderr
    assert "table: 4 trial file(s) folded in 1 commit(s), 0 artifact file(s)" in result.stdout
    assert _files(study_dir) == [] and _all_rows(study_dir).select(rows_before.columns).equals(rows_before)
    assert StudyStorage(str(tmp_path), "test.interruptible").finished_keys() == set(rows_before["trial_key"])
    again = run_cli("compact", name, "--storage", str(tmp_path), timeout=120)
    assert "table: 0 trial file(s) folded in 0 commit(s)" in again.stdout  # safe to run again
    missing = run_cli("compact", name, "--storage", str(tmp_path / "nowhere"), timeout=120)
    assert missing.returncode == 2 and "invalid --storage" in missing.stderr and "\n" not in missing.stderr.strip()
    (tmp_path / "empty").mkdir()
    empty = run_cli("compact", name, "--storage", str(tmp_path / "empty"), timeout=120)
    assert empty.returncode == 1 and "no results for study test.interruptible" in empty.stderr


def _doc_snippets() -> list[str]:
    """The two ways docs/results.md opens a study without this project: polars alone, deltalake alone."""
    text = (ROOT / "docs" / "results.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    snippets = [b for b in blocks if "scan_delta" in b or "DeltaTable(" in b]
    assert len(snippets) == 2
    return snippets


@pytest.mark.slow
def test_the_documented_readers_find_every_row_that_status_counts(tmp_path: Path) -> None:
    run = run_cli("run", "demo", "--scale", "smoke", "--storage", str(tmp_path))
    assert run.returncode == 0, run.stdout + run.stderr
    study_dir = tmp_path / "demo.smoke"
    table = DeltaTable(str(study_dir / "table"))
    keys = sorted(set(pl.from_arrow(table.to_pyarrow_table(columns=["trial_key"]))["trial_key"]))
    assert len(keys) == 9 and _files(study_dir) == []
    # one trial pending (out of the table, in its file) and one file left by a fold killed after its commit
    pending, leftover = keys[0], keys[1]
    for key in (pending, leftover):
        pl.scan_delta(table).filter(pl.col("trial_key") == key).collect().write_parquet(
            study_dir / "trials" / f"{key}.parquet")
    table.delete(f"trial_key = '{pending}'")

    status = run_cli("status", "demo", "--scale", "smoke", "--storage", str(tmp_path))
    assert "done 9 | running 0 | failed 0 | unreadable 0 | pending 0 | total 9" in status.stdout
    for snippet in _doc_snippets():
        code = snippet.replace('Path("results/richter2020.fig7.smoke")', f"Path({str(study_dir)!r})")
        code += "\nimport sys; assert not {'analysis', 'study'} & set(sys.modules)\n"  # no project code
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                             cwd=tmp_path, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "9 trials, 18 rows"  # 9 trials x 1 seed x 2 evaluations, none twice


def test_read_trials_gives_what_read_trial_gives_for_table_and_pending_trials(
        study: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import study.results.storage as storage_module

    keys = [p.stem for p in _files(study)]
    pending = _files(study)[:5]
    kept = {p: p.read_bytes() for p in pending}
    fold(Location.of(study), batch=10)
    for path, data in kept.items():  # five trial files written again: pending beside the table (and in it)
        path.write_bytes(data)
    (study / "trials" / pending[0].name).unlink()  # ... one of them not: in the table only
    storage = StudyStorage(str(study.parent), study.name)
    monkeypatch.setattr(storage_module, "READ_BATCH", 7)  # several table scans
    wanted = [*keys, "no-such-trial"]
    got = dict(storage.read_trials(wanted))
    assert sorted(got) == sorted(keys)  # every finished trial once; an unknown key skipped
    for key in keys:
        assert pl.from_arrow(got[key]).equals(pl.from_arrow(storage.read_trial(key))), key  # values, not string widths
    assert sum(t.num_rows for t in got.values()) == _all_rows(study).height
