"""`study compare`: analysis.stats.compare on hand-computed rows, synthetic studies and the published data."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from analysis.data.reference import load_reference
from analysis.data.synthetic import write_synthetic_study
from analysis.render.comparison import format_comparison
from analysis.stats.compare import common_grid, compare_sides, side_summary
from analysis.stats.paired import format_paired, paired_differences, sign_test
from analysis.stats.rgb import epochwise_rgb
from study.cli import main

BY = ["architecture", "d_model", "learning_rate"]


def _rows(accs: dict[tuple[str, int, float], list[list[float]]]) -> pl.LazyFrame:
    """Rows of the results schema from {(arch, d, lr): [[acc per step] per seed]}."""
    out = []
    for (arch, d, lr), seeds in accs.items():
        for seed, curve in enumerate(seeds):
            for k, acc in enumerate(curve):
                out.append(
                    {"architecture": arch, "d_model": d, "learning_rate": lr, "seed": seed, "step": 100 * (k + 1),
                     "val_accuracy": acc, "status": "ok"}
                )
    return pl.DataFrame(out).lazy()


# A: NAP mean curves (0.3, 0.7) at lr 0.1 and (0.3, 0.3) at lr 0.01 -> best G 0.7, 1 of 2 configs >= 0.5.
A = _rows(
    {
        ("NAP", 8, 0.1): [[0.2, 0.6], [0.4, 0.8]],
        ("NAP", 8, 0.01): [[0.5, 0.3], [0.1, 0.3]],
        ("max", 8, 0.1): [[0.1, 0.1], [0.1, 0.2]],
        ("max", 8, 0.01): [[0.1, 0.1], [0.1, 0.1]],
    }
)
# B: NAP best G 0.9 at lr 0.01 (both >= 0.5); max 0.15; an extra lr 0.001 only B ran.
B = _rows(
    {
        ("NAP", 8, 0.1): [[0.5, 0.6], [0.6, 0.6]],
        ("NAP", 8, 0.01): [[0.8, 0.9], [0.9, 0.9]],
        ("NAP", 8, 0.001): [[1.0, 1.0], [1.0, 1.0]],
        ("max", 8, 0.1): [[0.1, 0.1], [0.2, 0.2]],
        ("max", 8, 0.01): [[0.1, 0.1], [0.1, 0.1]],
    }
)


def test_side_summary_hand_computed() -> None:
    s = side_summary(A, panel="architecture", x="d_model", y="learning_rate", metrics=["val_accuracy"])
    nap = s.filter(pl.col("architecture") == "NAP").row(0, named=True)
    assert nap["best_g"] == pytest.approx(0.7)
    assert nap["at"] == "d_model=8, learning_rate=0.1"
    assert nap["robust_share"] == pytest.approx(0.5) and nap["n_configs"] == 2
    mx = s.filter(pl.col("architecture") == "max").row(0, named=True)
    assert mx["best_g"] == pytest.approx(0.15) and mx["robust_share"] == 0.0


def test_compare_sides_common_grid_and_differences() -> None:
    df = compare_sides(A, B)
    assert df.get_column("architecture").to_list() == ["NAP", "max"]  # the paper's panel order
    nap = df.row(0, named=True)
    # B's lr 0.001 (G 1.0) is outside the common grid: B's best is 0.9 at lr 0.01
    assert nap["b_best_g"] == pytest.approx(0.9) and nap["b_at"] == "d_model=8, learning_rate=0.01"
    assert nap["diff_best_g"] == pytest.approx(0.7 - 0.9)
    assert nap["b_robust_share"] == pytest.approx(1.0)
    assert nap["diff_robust_share"] == pytest.approx(0.5 - 1.0)
    assert nap["a_n_configs"] == nap["b_n_configs"] == 2
    assert df.row(1, named=True)["diff_best_g"] == pytest.approx(0.0)  # max: 0.15 on both sides

    whole = compare_sides(A, B, common=False)
    nap = whole.row(0, named=True)
    assert nap["b_best_g"] == pytest.approx(1.0) and nap["b_n_configs"] == 3
    assert nap["b_robust_share"] == pytest.approx(1.0)

    text = format_comparison(df, "architecture", "A-study", "B-study", 0.5)
    assert "A = A-study" in text and "-20.0" in text and "-50.0" in text


def test_no_common_values_is_a_clear_error() -> None:
    other = A.with_columns(pl.lit(999).alias("d_model"))
    with pytest.raises(ValueError, match="share no d_model value"):
        compare_sides(A, other)


def test_synthetic_study_against_itself_and_another_seed(tmp_path: Path) -> None:
    grid = {"architecture": ["BERT", "NAP", "max"], "d_model": [8, 32], "learning_rate": [0.09, 0.0027, 0.00024]}
    write_synthetic_study(tmp_path / "a", grid, seeds=(0, 1, 2), cases=False)
    write_synthetic_study(tmp_path / "b", grid, seeds=(0, 1, 2), cases=False, rng_seed=1)
    from analysis.data.rows import scan_study

    a, b = scan_study(tmp_path / "a"), scan_study(tmp_path / "b")
    same = compare_sides(a, a, metrics=["val_accuracy", "train_accuracy"])
    assert same.height == 6
    assert same.get_column("diff_best_g").abs().max() == 0.0
    assert same.get_column("diff_robust_share").abs().max() == 0.0

    df = compare_sides(a, b)
    for arch in ("BERT", "NAP", "max"):
        got = df.filter(pl.col("architecture") == arch).row(0, named=True)
        ga = epochwise_rgb(a.filter(pl.col("architecture") == arch), "val_accuracy", BY).collect()
        gb = epochwise_rgb(b.filter(pl.col("architecture") == arch), "val_accuracy", BY).collect()
        assert got["a_best_g"] == pytest.approx(ga["g"].max())
        assert got["diff_best_g"] == pytest.approx(ga["g"].max() - gb["g"].max())
        assert got["a_robust_share"] == pytest.approx((ga["g"] >= 0.5).mean())
    # synthetic skill: NAP learns, max does not
    nap = df.filter(pl.col("architecture") == "NAP").row(0, named=True)
    mx = df.filter(pl.col("architecture") == "max").row(0, named=True)
    assert nap["a_best_g"] > 0.5 > mx["a_best_g"] and mx["a_robust_share"] == 0.0


def test_against_published_reference(tmp_path: Path) -> None:
    grid = {"architecture": ["MTE", "max"], "d_model": [8, 16], "learning_rate": [0.027, 0.000729]}
    write_synthetic_study(tmp_path / "s", grid, cases=False, meta={"reference": "richter2020/mode__var_dim"})
    from analysis.data.rows import scan_study

    ref = load_reference("richter2020/mode__var_dim")
    df = compare_sides(scan_study(tmp_path / "s"), ref)
    assert df.get_column("architecture").to_list() == ["MTE", "max"]
    expected = (
        epochwise_rgb(
            ref.filter(
                pl.col("architecture").is_in(["MTE", "max"]),
                pl.col("d_model").is_in([8, 16]),
                pl.col("learning_rate").round_sig_figs(6).is_in([0.027, 0.000729]),
            ),
            "val_accuracy",
            BY,
        )
        .group_by("architecture")
        .agg(pl.col("g").max(), (pl.col("g") >= 0.5).mean().alias("share"), pl.len().alias("n"))
        .collect()
    )
    for row in expected.iter_rows(named=True):
        got = df.filter(pl.col("architecture") == row["architecture"]).row(0, named=True)
        assert got["b_best_g"] == pytest.approx(row["g"])
        assert got["b_robust_share"] == pytest.approx(row["share"])
        assert got["b_n_configs"] == row["n"] == 4
    # published max pooling cannot find the mode (<= 15% in the paper) even on these cells
    assert df.filter(pl.col("architecture") == "max")["b_best_g"].item() < 0.2


def test_common_grid_matches_inexact_floats() -> None:
    a = pl.LazyFrame({"lr": [0.3**3, 0.3**6], "d": [8, 16]})
    b = pl.LazyFrame({"lr": [0.027, 0.09], "d": [8, 32]})
    assert common_grid(a, b, ["lr", "d"]) == {"lr": [0.3**3], "d": [8]}


def test_cli_compare_directory_with_published_and_out(tmp_path: Path) -> None:
    grid = {"architecture": ["MTE", "max"], "d_model": [8, 16], "learning_rate": [0.027, 0.000729]}
    write_synthetic_study(tmp_path / "s", grid, cases=False, meta={"reference": "richter2020/mode__var_dim"})
    runner = CliRunner()
    result = runner.invoke(main, ["compare", str(tmp_path / "s"), "published", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert "B = published:richter2020/mode__var_dim" in result.output
    assert "val_accuracy" in result.output and "train_accuracy" in result.output
    page = (tmp_path / "o" / "index.html").read_text()
    assert "data:image/png;base64," in page and "http" not in page
    assert pl.read_csv(tmp_path / "o" / "compare.csv").height == 4
    assert "paired over the cells both ran (val_accuracy G" in result.output and "paired over" in page
    paired = pl.read_csv(tmp_path / "o" / "paired_val_accuracy.csv")
    assert paired.get_column("architecture").to_list() == ["MTE", "max"] and paired.get_column("n").min() >= 1

    bad = runner.invoke(main, ["compare", "no.such.study@smoke", "published:richter2020/nope"])
    assert bad.exit_code != 0 and "Error" in bad.output
    bad = runner.invoke(main, ["compare", str(tmp_path / "s"), "published:richter2020/nope"])
    assert bad.exit_code != 0 and "mode__var_dim" in bad.output  # lists the valid names


@pytest.mark.slow  # a Python subprocess
def test_analysis_compare_imports_neither_torch_nor_ray() -> None:
    import subprocess
    import sys

    code = (
        "import sys, analysis.stats.compare, analysis.stats.paired, analysis.report.build; "
        "print(','.join(m for m in ('torch', 'ray', 'trainables', 'study', 'optuna') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_cli_compare_two_published_sides() -> None:
    result = CliRunner().invoke(main, ["compare", "published:richter2020/mode__var_dim",
                                       "published:richter2020/cases__var_dim", "--metric", "val_accuracy"])
    assert result.exit_code == 0, result.output
    # common grid: BERT only (cases__var_dim has BERT alone); its best G per side, recomputed here
    for name, column in (("mode__var_dim", 2), ("cases__var_dim", 5)):  # "at" is two words
        rgb = epochwise_rgb(load_reference(f"richter2020/{name}").filter(pl.col("architecture") == "BERT"),
                            "val_accuracy", BY).collect()
        row = next(line for line in result.output.splitlines() if line.startswith("val_accuracy"))
        assert row.split()[column] == f"{100 * rgb['g'].max():.1f}"
    assert "97.2" in result.output  # the paper's Fig. 3 BERT number, on side B


def test_cli_compare_a_study_with_an_unseen_release_file(tmp_path: Path) -> None:
    from tests.test_analysis_reference import write_release_file

    release = write_release_file(tmp_path / "mode__var_vocab.parquet", "vocabulary_size", [2, 4, 8])
    grid = {"architecture": ["NAP", "max"], "vocab_size": [2, 4], "learning_rate": [0.0081, 0.000729]}
    write_synthetic_study(tmp_path / "s", grid, cases=False,
                          meta={"plot": {"panel": "architecture", "x": "vocab_size", "y": "learning_rate"}})
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "s"), f"published:{release}"])
    assert result.exit_code == 0, result.output
    assert "over the common grid of architecture x vocab_size x learning_rate" in result.output
    assert "configs A/B" in result.output and " 4/4" in result.output  # 2 sizes x 2 rates on both sides
    # different x axes are refused with both named
    bad = CliRunner().invoke(main, ["compare", str(tmp_path / "s"), "published:richter2020/mode__var_dim"])
    assert bad.exit_code == 2
    assert "different plot axes" in bad.output and "vocab_size" in bad.output and "d_model" in bad.output


def test_cli_compare_says_when_a_side_lost_a_trial_file(tmp_path: Path) -> None:
    grid = {"architecture": ["MTE", "max"], "d_model": [8, 16], "learning_rate": [0.027, 0.000729]}
    write_synthetic_study(tmp_path / "s", grid, cases=False)
    victim = sorted((tmp_path / "s" / "trials").glob("*.parquet"))[0]
    victim.write_bytes(victim.read_bytes()[:100])
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "s"), "published:richter2020/mode__var_dim"])
    assert result.exit_code == 0, result.output
    assert f"INCOMPLETE: {tmp_path / 's'}: 1 unreadable trial file(s) left out of every number: {victim}" \
        in result.output


def test_sign_test_exact_values() -> None:
    assert sign_test(0, 12) == pytest.approx(2 / 4096)  # every cell lower: 2 x 0.5^12
    assert sign_test(3, 9) == pytest.approx(2 * (1 + 12 + 66 + 220) / 4096)
    assert sign_test(6, 6) == 1.0 and sign_test(0, 0) == 1.0


def _paired(a: pl.LazyFrame, b: pl.LazyFrame) -> pl.DataFrame:
    return paired_differences(a, b, panel="architecture", x="d_model", y="learning_rate", metric="val_accuracy")


def test_paired_differences_hand_computed() -> None:
    """Cell by cell on the cells both ran: NAP A - B = 0.7 - 0.6 (lr 0.1) and 0.3 - 0.9 (lr 0.01); B's lr 0.001
    is unpaired. Differences +0.1, -0.6: mean -0.25, sd 0.7 / sqrt(2), t(1) = 12.7062 (scipy), so the interval is
    -0.25 +- 12.7062 x 0.35."""
    df = _paired(A, B)
    nap = df.filter(pl.col("architecture") == "NAP").row(0, named=True)
    assert (nap["n"], nap["n_up"], nap["n_down"], nap["only_a"], nap["only_b"]) == (2, 1, 1, 0, 1)
    assert nap["mean_diff"] == pytest.approx(-0.25)
    assert [nap["ci_low"], nap["ci_high"]] == pytest.approx([-0.25 - 12.7062 * 0.35, -0.25 + 12.7062 * 0.35], rel=1e-5)
    assert nap["sign_p"] == 1.0
    mx = df.filter(pl.col("architecture") == "max").row(0, named=True)
    assert mx["n"] == 2 and mx["mean_diff"] == pytest.approx(0.0) and mx["only_b"] == 0
    assert df.get_column("architecture").to_list() == ["NAP", "max"]  # the paper's panel order
    text = format_paired(df, "architecture", "val_accuracy")
    assert "  NAP: -25.0 (-469.7 .. +419.7) over 2 cells; A higher in 1, lower in 1, sign test p = 1; " \
           "unpaired: 1 with a G in B only" in text


def test_a_uniform_shift_is_found_whatever_the_key_types_and_rounding() -> None:
    """B = A - 0.05 in every cell, B's learning rates off by float rounding and its d_model a float: the cells
    still pair, once each."""
    shifted = A.with_columns(pl.col("val_accuracy") - 0.05, pl.col("learning_rate") * (1 + 1e-9),
                             pl.col("d_model").cast(pl.Float64))
    df = _paired(A, shifted)
    for row in df.iter_rows(named=True):
        assert (row["n"], row["n_up"], row["n_down"], row["only_a"], row["only_b"]) == (2, 2, 0, 0, 0)
        assert [row["mean_diff"], row["ci_low"], row["ci_high"]] == pytest.approx([0.05] * 3)
    text = format_paired(df, "architecture", "val_accuracy")
    assert "  NAP: +5.0 (+5.0 .. +5.0) over 2 cells; A higher in 2, lower in 0, sign test p = 0.5" in text


def test_an_int_axis_meets_a_float_one_in_the_table_and_the_pairs() -> None:
    """One side's d_model stored as float (a release file, another writer): the table and the pairs both run."""
    as_float = B.with_columns(pl.col("d_model").cast(pl.Float64))
    table = compare_sides(A, as_float, metrics=["val_accuracy"])
    assert table.filter(pl.col("architecture") == "NAP")["b_best_g"].item() == pytest.approx(0.9)
    assert _paired(A, as_float).filter(pl.col("architecture") == "NAP")["n"].item() == 2


def test_unpaired_cells_one_cell_and_nothing_in_common_are_said() -> None:
    one = _rows({("NAP", 8, 0.1): [[0.2, 0.6], [0.4, 0.8]], ("sum", 8, 0.1): [[0.5, 0.5], [0.5, 0.5]]})
    nan = float("nan")
    other = _rows({("NAP", 8, 0.1): [[0.5, 0.5], [0.5, 0.5]], ("sum", 8, 0.1): [[nan, nan], [nan, nan]]})
    text = format_paired(_paired(one, other), "architecture", "val_accuracy")
    assert "  NAP: +20.0 (no interval from 1 cell) over 1 cells; A higher in 1, lower in 0, sign test p = 1" in text
    assert "  sum: no cell with a G on both sides; unpaired: 1 with a G in A only" in text  # B diverged there
    far = _rows({("BERT", 16, 0.5): [[0.5, 0.5]]})
    apart = format_paired(_paired(one, far), "architecture", "val_accuracy")
    assert "  BERT: no cell with a G on both sides; unpaired: 1 with a G in B only" in apart
    assert "  NAP: no cell with a G on both sides; unpaired: 1 with a G in A only" in apart
    empty = pl.DataFrame()
    assert format_paired(empty, "architecture", "val_accuracy").endswith(" no cells in common")
