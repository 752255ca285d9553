"""The published results shipped with analysis/ and the paper's headline numbers computed from them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from analysis.data.reference import SWEPT, available_references, load_reference, load_reference_file
from analysis.stats.rgb import best_config, epochwise_rgb, seed_best_stats

BY = ["architecture", "d_model", "learning_rate"]


def test_available_references() -> None:
    assert available_references() == [  # the shipped files and the references composed of them (COMPOSED)
        "richter2020/ablation__cases",
        "richter2020/ablation__cases__var_dim",
        "richter2020/cases__first_token_output__var_dim",
        "richter2020/cases__first_token_output__var_layers",
        "richter2020/cases__var_dim",
        "richter2020/mode__regularization",
        "richter2020/mode__var_dim",
        "richter2020/mode__var_dropout",
        "richter2020/mode__var_l2_regularization",
        "richter2020/mode__var_vocab",
    ]


def test_load_reference_maps_columns_into_the_results_schema() -> None:
    df = load_reference("richter2020/cases__var_dim").collect()
    schema = df.schema
    assert "x_value" not in schema and "swept" not in schema
    assert schema["d_model"] == pl.Int64
    assert sorted(df.get_column("d_model").unique().to_list()) == [8, 16, 32, 64, 128, 256, 512, 1024]
    assert (df.get_column("step") == df.get_column("epoch") * 100).all()
    assert df.get_column("step").min() == 100 and df.get_column("step").max() == 3200
    assert df.get_column("status").unique().to_list() == ["ok"]
    assert df.get_column("study").unique().to_list() == ["richter2020.cases__var_dim"]
    keys = df.group_by("trial_key").agg(pl.struct(BY).n_unique().alias("n"))
    assert keys.height == 80 and (keys.get_column("n") == 1).all()  # 8 d x 10 lr, one config per key
    assert df.get_column("trial_key").str.len_chars().unique().to_list() == [16]


def test_unknown_reference_lists_valid_names() -> None:
    with pytest.raises(FileNotFoundError, match="mode__var_dim"):
        load_reference("richter2020/nope")


def test_published_bert_cases_best_is_97_2_percent_at_d64_lr_0_00243() -> None:
    lf = load_reference("richter2020/cases__var_dim")
    best = best_config(epochwise_rgb(lf, "val_accuracy", BY), "architecture").collect().row(0, named=True)
    assert best["architecture"] == "BERT"
    assert best["g"] == pytest.approx(0.971875)
    assert round(100 * best["g"], 1) == 97.2
    assert best["d_model"] == 64
    assert best["learning_rate"] == pytest.approx(0.00243)
    # the other order (each seed's best, then the mean) is a different, larger statistic
    seed = seed_best_stats(lf, "val_accuracy", BY).collect()
    assert seed.get_column("best_mean").max() == pytest.approx(0.977, abs=5e-4)


def test_published_max_pooling_fails_mode_finding() -> None:
    lf = load_reference("richter2020/mode__var_dim")
    best = best_config(epochwise_rgb(lf, "val_accuracy", BY), "architecture").collect()
    g = dict(best.select("architecture", "g").iter_rows())
    assert g["max"] < 0.15
    assert all(g[a] > 0.9 for a in ("BERT", "MTE", "NAP", "NON", "sum"))


# ---------------------------------------------------------------- the release's swept names (unseen files)

RELEASE_INT = {"model_dimension": [8, 16], "layers": [1, 2, 4], "heads": [1, 4], "max_sequence_length": [4, 8],
               "batch_size": [2, 64], "vocabulary_size": [2, 4, 256], "case_bias": [-3, 0]}
RELEASE_FLOAT = {"dropout": [0.0625, 0.5], "L2_regularization": [1e-4, 0.1], "initial_std_factor": [0.25, 4.0]}


def write_release_file(path: Path, swept: str, xs: list[float], *, archs: tuple[str, ...] = ("NAP", "max"),
                       lrs: tuple[float, ...] = (0.09, 0.0081, 0.000729), seeds: int = 2, epochs: int = 3) -> Path:
    """A results file in the release's schema (docs/richter2020.md): one row per (arch, x, lr, seed, epoch)."""
    rng = np.random.default_rng(len(swept))
    rows = []
    for a in archs:
        for x in xs:
            for lr in lrs:
                level = (0.95 if a == "NAP" else 0.12) - 0.02 * np.log2(max(float(x), 1.0)) * (a == "NAP")
                for seed in range(seeds):
                    for epoch in range(1, epochs + 1):
                        acc = float(np.clip(level * epoch / epochs + rng.normal(0, 0.02), 0, 1))
                        rows.append({"paper": "richter2020", "task": "mode", "swept": swept, "architecture": a,
                                     "x_value": float(x), "learning_rate": lr, "seed": seed, "epoch": epoch,
                                     "train_accuracy": acc, "val_accuracy": acc - 0.01, "train_loss": 1 - acc,
                                     "val_loss": 1.01 - acc})
    schema = {"seed": pl.Int8, "epoch": pl.Int16}
    pl.DataFrame(rows).with_columns(pl.col(c).cast(t) for c, t in schema.items()).write_parquet(path)
    return path


@pytest.mark.parametrize("swept", [*RELEASE_INT, *RELEASE_FLOAT])
def test_every_swept_name_of_the_release_maps_to_the_study_column_and_type(swept: str, tmp_path: Path) -> None:
    xs = RELEASE_INT.get(swept) or RELEASE_FLOAT[swept]
    df = load_reference_file(write_release_file(tmp_path / f"mode__var_{swept}.parquet", swept, xs)).collect()
    column, dtype = SWEPT[swept].column, SWEPT[swept].dtype
    assert "x_value" not in df.columns and "swept" not in df.columns
    assert df.schema[column] == dtype
    assert sorted(df.get_column(column).unique().to_list()) == sorted(xs)
    assert df.get_column("study").unique().to_list() == [f"richter2020.mode__var_{swept}"]
    # the release's evaluation interval (its train.py): 100 steps, except batch and vocabulary sweeps
    per_epoch = {x: (3200 // x if swept == "batch_size" else 100 * x // 8 if swept == "vocabulary_size" else 100)
                 for x in xs}
    expected = [per_epoch[x] * e for x, e in df.select(column, "epoch").iter_rows()]
    assert df.get_column("step").to_list() == expected


def test_the_release_names_of_vocabulary_and_layers_are_known() -> None:
    assert SWEPT["vocabulary_size"].column == "vocab_size" and SWEPT["layers"].column == "n_layers"
    assert SWEPT["vocabulary_size"].dtype == pl.Int64 == SWEPT["layers"].dtype


def test_an_unknown_swept_name_is_an_error_naming_the_file_and_the_name(tmp_path: Path) -> None:
    path = write_release_file(tmp_path / "mode__var_vocab.parquet", "vocab_sz", [2, 4])
    with pytest.raises(ValueError, match=r"mode__var_vocab.parquet: unknown swept axis 'vocab_sz'; known: model_dim"):
        load_reference_file(path)


def test_a_fractional_value_of_an_integer_axis_is_an_error(tmp_path: Path) -> None:
    path = write_release_file(tmp_path / "x.parquet", "layers", [1, 2.5])
    with pytest.raises(ValueError, match=r"x.parquet: swept n_layers must be whole numbers; got \[2.5\]"):
        load_reference_file(path)


@pytest.mark.parametrize("command", ["findings", "compare"])
def test_a_published_file_without_the_releases_columns_is_one_line_naming_what_is_missing(
        command: str, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from analysis.data.reference import reference_path
    from study.cli import main

    shipped = pl.read_parquet(reference_path("richter2020/mode__var_dim"))
    files = {"no_swept": shipped.drop("swept"), "no_seed_nor_metric": shipped.drop("seed", "val_accuracy"),
             "other": pl.DataFrame({"architecture": ["BERT"], "foo": [1.0]})}
    missing = {"no_swept": "swept", "no_seed_nor_metric": "seed, val_accuracy",
               "other": "paper, task, swept, x_value, learning_rate, seed, epoch, train_accuracy, val_accuracy, "
                        "train_loss, val_loss"}
    for name, frame in files.items():
        path = tmp_path / f"{name}.parquet"
        frame.write_parquet(path)
        args = (["findings", "richter2020.fig7", "--data", f"published:{path}"] if command == "findings" else
                ["compare", "published:richter2020/mode__var_dim", f"published:{path}"])
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, result.output  # bad input (docs/cli.md: a bad --data, an unknown reference)
        assert result.output.count("\n") == 1 and result.output.startswith("Error: "), result.output
        assert (f"{path}: missing column(s) {missing[name]}; expected a file of the release's schema (docs/"
                "richter2020.md): paper, task, swept, architecture, x_value, learning_rate, seed, epoch, "
                "train_accuracy, val_accuracy, train_loss, val_loss") in result.output, result.output
    text = tmp_path / "text.parquet"
    text.write_text("not Parquet")
    result = CliRunner().invoke(main, ["findings", "richter2020.fig7", "--data", f"published:{text}"] if
                                command == "findings" else ["compare", "published:richter2020/mode__var_dim",
                                                            f"published:{text}"])
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert f"{text}: not a Parquet file (" in result.output
