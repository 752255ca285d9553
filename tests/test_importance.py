"""Which hyperparameter matters: Optuna's PED-ANOVA on a synthetic study whose importances are known."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from analysis.data.meta import read_study_meta
from analysis.data.synthetic import synthetic_record
from analysis.stats.importance import importances

LRS = [0.3**k for k in range(1, 9)]
DS = [8, 16, 32, 64, 128, 256, 512, 1024]


def _accuracy(arch: str, d: int, lr: float) -> float:
    """A depends on the learning rate only (a peak at 0.3^4), B on the width only (rising with d)."""
    if arch == "A":
        return 0.95 - 0.12 * abs(np.log(lr / 0.3**4) / np.log(0.3))
    return 0.2 + 0.1 * np.log2(d / 8)


def _write(study_dir: Path, archs: tuple[str, ...] = ("A", "B"), lrs: list[float] = LRS) -> None:
    rows = []
    for arch in archs:
        for d in DS:
            for lr in lrs:
                key = f"{arch}-{d}-{lr:.3g}"
                for seed in (0, 1):
                    for step in (100, 200):
                        acc = _accuracy(arch, d, lr) * step / 200 + 0.001 * seed
                        rows.append({"study": "imp", "trial_key": key, "architecture": arch, "d_model": d,
                                     "learning_rate": lr, "seed": seed, "step": step, "val_accuracy": acc,
                                     "status": "ok"})
    (study_dir / "trials").mkdir(parents=True)
    pl.DataFrame(rows).write_parquet(study_dir / "trials" / "all.parquet")
    meta = synthetic_record("demo", {"architecture": tuple(archs), "d_model": tuple(DS)},
                            nuisance={"learning_rate": tuple(lrs)}, seeds=(0, 1))
    (study_dir / "study.json").write_text(json.dumps(meta))


def test_ped_anova_finds_the_hyperparameter_that_matters(tmp_path: Path) -> None:
    _write(tmp_path / "s")
    lf = pl.scan_parquet(tmp_path / "s" / "trials" / "*.parquet")
    meta = read_study_meta(tmp_path / "s")
    table = importances(lf, meta, panel="architecture")
    got = {(r["architecture"], r["hyperparameter"]): r["importance"] for r in table.iter_rows(named=True)}
    assert got[("A", "learning_rate")] > 0.9 > 0.1 > got[("A", "d_model")]
    assert got[("B", "d_model")] > 0.9 > 0.1 > got[("B", "learning_rate")]
    assert got[("A", "learning_rate")] + got[("A", "d_model")] == pytest.approx(1.0)
    assert set(table.get_column("n_configurations")) == {64}


def test_too_few_configurations_say_so_instead_of_a_number(tmp_path: Path) -> None:
    _write(tmp_path / "s", archs=("A",), lrs=LRS[:1])  # 8 configurations: fewer than 10
    lf = pl.scan_parquet(tmp_path / "s" / "trials" / "*.parquet")
    meta = read_study_meta(tmp_path / "s")
    table = importances(lf, meta, panel="architecture")
    assert table.height == 1 and table["importance"].to_list() == [None]
    assert table["note"].to_list() == ["8 configurations with a value (< 10)"]


def test_cli_importance_prints_the_ranking(tmp_path: Path) -> None:
    from study.cli import main

    _write(tmp_path / "demo")
    result = CliRunner().invoke(main, ["importance", "demo", "--storage", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("demo (scale paper): importance of each hyperparameter for the best G of val_accuracy")
    assert re.fullmatch(r"  A: learning_rate (0\.9\d|1\.00), d_model 0\.0\d \(64 configurations\)", lines[1])
    assert re.fullmatch(r"  B: d_model (0\.9\d|1\.00), learning_rate 0\.0\d \(64 configurations\)", lines[2])
    bad = CliRunner().invoke(main, ["importance", "demo", "--storage", str(tmp_path), "--metric", "nope"])
    assert bad.exit_code == 2 and "invalid metric 'nope'" in bad.output


def test_fanova_needs_scikit_learn_or_works(tmp_path: Path) -> None:
    _write(tmp_path / "s")
    lf = pl.scan_parquet(tmp_path / "s" / "trials" / "*.parquet")
    meta = read_study_meta(tmp_path / "s")
    try:
        import sklearn  # noqa: F401
    except ImportError:
        with pytest.raises(ValueError, match="evaluator 'fanova' needs scikit-learn"):
            importances(lf, meta, panel="architecture", evaluator="fanova")
    else:
        table = importances(lf, meta, panel="architecture", evaluator="fanova")
        a = table.filter(pl.col("architecture") == "A").row(0, named=True)
        assert a["hyperparameter"] == "learning_rate"
