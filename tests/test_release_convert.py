"""The converter of the Richter & Wattenhofer release (analysis/data/release_convert.py) on hand-made pickles in the
release's structure, and the shipped files against their manifest and the paper's printed tables."""

from __future__ import annotations

import collections
import json
import pickle
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from analysis.data.reference import REFERENCE_DIR, load_reference, load_reference_file
from analysis.data.release_convert import (
    MANIFEST_NAME,
    Family,
    axis_values,
    convert_release,
    file_digests,
    load_release_pickle,
    main,
    manifest_problems,
    run_rows,
)

SHIPPED = REFERENCE_DIR / "richter2020"
DIM = {"name": "model_dimension", "min": 3, "range": 2, "base": 2}  # d = 8, 16
RATES = {"name": "learning_rate", "min": 1, "range": 2, "base": 0.3}  # 0.3, 0.09
EPOCHS, SEEDS = 2, 3


def _value(epoch: int, lr: int, x: int, slot: int, seed: int) -> float:
    """A distinct value per position, so a row read from the wrong place shows."""
    return 0.5 + epoch / 10 + lr / 100 + x / 1000 + slot / 10_000 + seed / 100_000


def _results(slots: int, value=_value) -> list:
    """results[epoch][lr][x][slot] = one value per seed, as the release's train.py appends them (numpy scalars)."""
    return [[[[[np.float32(value(e, lr, x, s, seed)) for seed in range(SEEDS)] for s in range(slots)]
              for x in range(DIM["range"])] for lr in range(RATES["range"])] for e in range(EPOCHS)]


def _write_run(folder: Path, architecture: str, results: object | None, swept: dict = DIM) -> None:
    """A run as train.py leaves it: ``<arch>_params.pickle`` = [variations, params] and ``<arch>.pickle`` =
    (results, completed runs, run order); ``results=None`` writes the params file only."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{architecture}_params.pickle").write_bytes(
        pickle.dumps([[swept, RATES], {"layers": 2, "model": architecture}], protocol=3))
    if results is not None:
        completed = swept["range"] * RATES["range"] * SEEDS
        data = pickle.dumps((results, completed, 0), protocol=3)  # numpy 2 names numpy 1's numpy.core "numpy._core"
        (folder / f"{architecture}.pickle").write_bytes(data.replace(b"cnumpy._core.", b"cnumpy.core."))


def test_a_mode_run_becomes_one_row_per_epoch_rate_x_and_seed() -> None:
    df = run_rows(_results(4), [DIM, RATES], architecture="NAP", task="mode", where="t")
    assert df.height == EPOCHS * RATES["range"] * DIM["range"] * SEEDS
    assert df.columns == ["paper", "task", "swept", "architecture", "x_value", "learning_rate", "seed", "epoch",
                          "train_accuracy", "val_accuracy", "train_loss", "val_loss"]
    assert [str(t) for t in df.dtypes[4:8]] == ["Float64", "Float64", "Int8", "Int16"]
    assert df.row(0)[:8] == ("richter2020", "mode", "model_dimension", "NAP", 8.0, 0.3, 0, 1)
    # order: epoch, learning rate, x, seed (seed fastest)
    assert df.select("epoch", "learning_rate", "x_value", "seed").row(5) == (1, 0.3, 16.0, 2)
    row = df.filter((pl.col("epoch") == 2) & (pl.col("learning_rate") == 0.3 ** 2) & (pl.col("x_value") == 8.0)
                    & (pl.col("seed") == 2))
    assert row.select("train_accuracy", "val_loss").row(0) == (float(np.float32(_value(1, 1, 0, 0, 2))),
                                                             float(np.float32(_value(1, 1, 0, 3, 2))))


def test_a_cases_run_gets_the_three_case_accuracies_as_correct_over_size() -> None:
    def counts(e: int, lr: int, x: int, s: int, seed: int) -> float:
        if s < 4:
            return 0.25
        return 1000.0 if (s - 4) % 14 >= 7 else float(10 * (s - 4) + seed)  # correct counts, then case sizes

    df = run_rows(_results(32, counts), [DIM, RATES], architecture="BERT", task="cases", where="t")
    assert df.columns[-6:] == ["train_argmin_accuracy", "train_first_accuracy", "train_argmax_accuracy",
                               "val_argmin_accuracy", "val_first_accuracy", "val_argmax_accuracy"]
    # slots (CaseEvaluationCallback): train correct 4-10, sizes 11-17, val correct 18-24, sizes 25-31
    assert df.filter(pl.col("seed") == 1).select(df.columns[-6:]).row(0) == (
        0.001, 0.021, 0.051, 0.141, 0.161, 0.191)


def test_axis_values_follow_the_release_formula() -> None:
    assert axis_values(DIM) == [8.0, 16.0]
    assert axis_values({"min": 1, "range": 4, "base": 0.5}) == [0.5, 0.25, 0.125, 0.0625]
    assert axis_values({"min": 2, "range": 3, "base": 0}) == [2.0, 3.0, 4.0]  # no base: min + index


def test_a_run_that_does_not_fit_its_grid_is_refused_naming_the_file() -> None:
    ragged = _results(4)
    ragged[0][0][0][0] = ragged[0][0][0][0][:2]
    with pytest.raises(ValueError, match="r.pickle: cells hold different numbers of seeds"):
        run_rows(ragged, [DIM, RATES], architecture="NAP", task="mode", where="r.pickle")
    with pytest.raises(ValueError, match=r"r.pickle: results of shape \(2, 2, 2, 4, 3\); expected \(epochs, 2, 3"):
        run_rows(_results(4), [{**DIM, "range": 3}, RATES], architecture="NAP", task="mode", where="r.pickle")
    with pytest.raises(ValueError, match="r.pickle: 5 metric slots per run; expected one of"):
        run_rows(_results(5), [DIM, RATES], architecture="NAP", task="mode", where="r.pickle")
    with pytest.raises(ValueError, match="r.pickle: sweep 'depth' x 'learning_rate'; expected one of"):
        run_rows(_results(4), [{**DIM, "name": "depth"}, RATES], architecture="NAP", task="mode", where="r.pickle")


def test_the_unpickler_takes_numpy_arrays_and_scalars_and_refuses_anything_else(tmp_path: Path) -> None:
    (tmp_path / "a.pickle").write_bytes(pickle.dumps((np.arange(6.0).reshape(2, 3), np.int64(400), 0), protocol=3))
    array, runs, _ = load_release_pickle(tmp_path / "a.pickle")
    assert array.tolist() == [[0, 1, 2], [3, 4, 5]] and runs == 400
    (tmp_path / "b.pickle").write_bytes(pickle.dumps(collections.OrderedDict(a=1), protocol=3))
    with pytest.raises(pickle.UnpicklingError, match="release pickle names collections.OrderedDict; allowed: numpy"):
        load_release_pickle(tmp_path / "b.pickle")


def test_family_names_and_tasks() -> None:
    assert (Family("cases/first_token_output/var_dim").stem, Family("cases/first_token_output/var_dim").task) == (
        "cases__first_token_output__var_dim", "cases_first_token")
    assert Family("mode/var_dropout_1_4_0.5").stem == "mode__var_dropout"
    assert Family("mode/var_l2_regularization_1_4_0.1").stem == "mode__var_l2_regularization"
    assert (Family("ablation/cases/var_dim").stem, Family("ablation/cases/var_dim").task) == (
        "ablation__cases__var_dim", "cases")


def test_file_digests_give_the_git_blob_id(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"hello\n")
    assert file_digests(tmp_path / "f")["git_blob"] == "ce013625030ba8dba906f756967f9e9ca394464a"  # git hash-object


def test_a_checkout_converts_to_files_and_a_manifest_tracing_each_source(tmp_path: Path) -> None:
    root = tmp_path / "checkout" / "paper_results"
    _write_run(root / "mode" / "var_dim", "NAP", _results(4))  # lists of numpy scalars
    _write_run(root / "mode" / "var_dim", "BERT", np.asarray(_results(4), dtype=np.float64))  # an array
    _write_run(root / "mode" / "var_dim", "sum", None)  # params only: its results are missing
    _write_run(root / "cases" / "var_seq", "MTE", None)
    manifest = convert_release(tmp_path / "checkout", tmp_path / "out", commit="abc")

    [entry] = manifest["files"]
    assert (entry["file"], entry["rows"], entry["task"]) == ("mode__var_dim.parquet", 48, "mode")
    assert [s["architecture"] for s in entry["sources"]] == ["BERT", "NAP"]
    nap = entry["sources"][1]
    assert nap["path"] == "paper_results/mode/var_dim/NAP.pickle" and nap["rows"] == 24
    assert nap["git_blob"] == file_digests(root / "mode" / "var_dim" / "NAP.pickle")["git_blob"]
    assert nap["params"]["path"] == "paper_results/mode/var_dim/NAP_params.pickle"
    assert entry["missing"] == ["paper_results/mode/var_dim/sum.pickle"]
    assert manifest["not_converted"] == [{"family": "paper_results/cases/var_seq",
                                          "missing": ["paper_results/cases/var_seq/MTE.pickle"]}]
    assert manifest["release"]["commit"] == "abc"
    assert json.loads((tmp_path / "out" / MANIFEST_NAME).read_text()) == manifest
    assert manifest_problems(tmp_path / "out") == []

    df = pl.read_parquet(tmp_path / "out" / "mode__var_dim.parquet")
    assert df.get_column("architecture").unique(maintain_order=True).to_list() == ["BERT", "NAP"]
    # both pickle forms hold the same numbers, so BERT's rows equal NAP's but for the name
    assert df.filter(pl.col("architecture") == "BERT").drop("architecture").equals(
        df.filter(pl.col("architecture") == "NAP").drop("architecture"))
    mapped = load_reference_file(tmp_path / "out" / "mode__var_dim.parquet").collect()
    assert mapped.schema["d_model"] == pl.Int64 and sorted(mapped["d_model"].unique()) == [8, 16]


def test_the_command_converts_and_says_what_is_wrong_in_one_line(tmp_path: Path, capsys) -> None:
    _write_run(tmp_path / "checkout" / "paper_results" / "mode" / "var_vocab", "max",
               _results(4), {"name": "vocabulary_size", "min": 1, "range": 2, "base": 2})
    main([str(tmp_path / "checkout"), str(tmp_path / "out")])
    assert capsys.readouterr().out == "mode__var_vocab.parquet: 24 rows, " \
        f"{(tmp_path / 'out' / 'mode__var_vocab.parquet').stat().st_size} bytes, 1 sources, 0 missing\n"
    with pytest.raises(SystemExit) as exit_info:
        main([str(tmp_path / "nope"), str(tmp_path / "out")])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == f"error: checkout {tmp_path / 'nope'}: no paper_results/ folder; expected a " \
        "checkout of OliverRichter/normalized-attention\n"


def test_the_shipped_files_match_their_manifest() -> None:
    """A changed, missing or unlisted shipped file fails here (the manifest is the converter's record)."""
    assert manifest_problems(SHIPPED) == []
    manifest = json.loads((SHIPPED / MANIFEST_NAME).read_text())
    assert {e["file"] for e in manifest["files"]} == {p.name for p in SHIPPED.glob("*.parquet")}
    assert manifest["release"]["commit"] == "13e38c7039293a07f3d39d1562f9bfba4d7eeab1"
    assert all(s["rows"] > 0 and len(s["git_blob"]) == 40 for e in manifest["files"] for s in e["sources"])
    assert sum(s["rows"] for s in manifest["files"][0]["sources"]) == manifest["files"][0]["rows"]


def test_the_manifest_check_finds_a_changed_or_unlisted_file(tmp_path: Path) -> None:
    shutil.copy(SHIPPED / MANIFEST_NAME, tmp_path)
    manifest = json.loads((tmp_path / MANIFEST_NAME).read_text())
    for entry in manifest["files"]:
        shutil.copy(SHIPPED / entry["file"], tmp_path)
    pl.read_parquet(tmp_path / "mode__var_dim.parquet").head(5).write_parquet(tmp_path / "mode__var_dim.parquet")
    pl.DataFrame({"a": [1]}).write_parquet(tmp_path / "extra.parquet")
    (tmp_path / "mode__var_vocab.parquet").unlink()
    problems = manifest_problems(tmp_path)
    assert problems[0] == f"extra.parquet: not in {MANIFEST_NAME}"
    assert any(p.startswith("mode__var_dim.parquet: sha256 ") for p in problems)
    assert "mode__var_dim.parquet: rows 5 != manifest 76800" in problems
    assert f"mode__var_vocab.parquet: listed in {MANIFEST_NAME} but missing" in problems


def _best_mean(name: str, metric: str, by: str | list[str]) -> dict[str, float]:
    """The paper's "best mean accuracy": the seed mean, maximised over epochs and the grid, per ``by``."""
    cells = ["architecture", "x_value", "learning_rate", "epoch"]
    df = pl.read_parquet(SHIPPED / f"{name}.parquet")
    best = df.group_by(cells).agg(pl.col(metric).mean()).group_by(by).agg(pl.col(metric).max())
    return {"|".join(map(str, k)): v for *k, v in best.iter_rows()}


@pytest.mark.parametrize(("name", "row_label"), [("mode__var_dropout", "with dropout"),
                                                 ("mode__var_l2_regularization", "with L2-regularization")])
def test_the_regularised_mode_runs_give_table_4s_printed_values(name: str, row_label: str) -> None:
    printed = pl.read_csv(SHIPPED / "nap_tables2to4.csv").filter(
        (pl.col("table") == "Table 4") & (pl.col("row_label") == row_label))
    assert printed.height == 12
    for metric, block in (("train_accuracy", "training"), ("val_accuracy", "validation")):
        computed = _best_mean(name, metric, "architecture")
        rows = printed.filter(pl.col("block").str.contains(block))
        assert {a: round(computed[a], 3) for a in rows["column_label"]} == dict(rows.select("column_label", "value")
                                                                                 .iter_rows())


def test_the_vocabulary_runs_give_table_5s_printed_values() -> None:
    printed = pl.read_csv(SHIPPED / "nap_table5.csv")
    for metric, block in (("train_accuracy", "training"), ("val_accuracy", "validation")):
        computed = _best_mean("mode__var_vocab", metric, ["architecture", "x_value"])
        rows = printed.filter(pl.col("block").str.contains(block))
        assert rows.height == 48
        for arch, size, value in rows.select("row_label", "column_label", "value").iter_rows():
            key = f"{arch}|{float(size.removeprefix('S = '))}"
            assert abs(computed[key] - value) <= 0.0005 + 1e-6, (arch, size, computed[key], value)


def test_the_new_files_map_into_the_results_schema() -> None:
    dropout = load_reference("richter2020/mode__var_dropout").collect()
    assert sorted(dropout["dropout"].unique()) == [0.0625, 0.125, 0.25, 0.5]
    layers = load_reference("richter2020/cases__first_token_output__var_layers").collect()
    assert layers.schema["n_layers"] == pl.Int64 and sorted(layers["n_layers"].unique()) == [1, 2, 4, 8, 16, 32, 64]
    vocab = load_reference("richter2020/mode__var_vocab").filter(pl.col("epoch") == 32).collect()
    assert dict(vocab.group_by("vocab_size").agg(pl.col("step").first()).sort("vocab_size").iter_rows()) == {
        s: 32 * 100 * s // 8 for s in (2, 4, 8, 16, 32, 64, 128, 256)}
