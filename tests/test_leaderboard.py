"""Robustness leaderboard statistics on hand-made rows with known answers; the report sections render."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from analysis.data.synthetic import synthetic_record
from analysis.papers.leaderboard import (
    definitions,
    hybrid_costs,
    hybrid_section,
    hybrid_verdict,
    leaderboard,
    leaderboard_figure,
    leaderboard_section,
)
from analysis.render.page import Page
from analysis.report.sections import ReportContext

LRS = (0.001, 0.01, 0.1, 1.0)


def _rows(entity: str, value: Any, size: int, lr: float, per_seed: dict[int, list[float]],
          status: str = "ok", task: str = "t1") -> list[dict[str, Any]]:
    """One row per (seed, step) with the given validation accuracies at steps 100, 200, ..."""
    return [
        {entity: value, "task": task, "d_model": size, "learning_rate": lr, "seed": seed, "step": 100 * (i + 1),
         "val_accuracy": acc, "status": status, "trial_key": f"{value}-{size}-{lr}"}
        for seed, accs in per_seed.items() for i, acc in enumerate(accs)
    ]


def _atlas_rows() -> pl.LazyFrame:
    rows: list[dict[str, Any]] = []
    a = {
        0.001: {0: [0.5, 0.6], 1: [0.5, 0.8]},  # G = 0.7 (step 200), seed bests 0.6 / 0.8: spread 0.2
        0.01: {0: [0.9, 0.8], 1: [0.7, 0.8]},  # G = 0.8 (either step), seed bests 0.9 / 0.8: spread 0.1
        0.1: {0: [0.6, 0.78], 1: [0.6, 0.78]},  # G = 0.78, spread 0
        1.0: {0: [0.1, 0.1], 1: [0.3, 0.1]},  # G = 0.2 (step 100), seed bests 0.1 / 0.3: spread 0.2
    }
    for lr, per_seed in a.items():
        rows += _rows("mixer", "A", 16, lr, per_seed)
        rows += _rows("mixer", "A", 32, lr, {0: [0.79, 0.79], 1: [0.79, 0.79]})  # within margin everywhere
    for lr in LRS[:3]:
        rows += _rows("mixer", "B", 16, lr, {0: [0.5, 0.5], 1: [0.5, 0.5]})
    rows += _rows("mixer", "B", 16, 1.0, {0: [0.0, 0.0], 1: [0.0, 0.0]}, status="diverged")
    rows += _rows("mixer", "B", 16, 0.5, {0: [0.9, 0.9], 1: [0.9, 0.9]}, status="failed")  # ignored
    return pl.LazyFrame(rows)


def test_leaderboard_statistics_equal_hand_computed_values() -> None:
    board = leaderboard(_atlas_rows(), entity="mixer", task="task", size="d_model")
    a, b = (board.filter(pl.col("mixer") == m).row(0, named=True) for m in ("A", "B"))
    assert board.get_column("mixer").to_list() == ["A", "B"]  # best first within the task
    assert a["best_g"] == pytest.approx(0.8) and a["best_d_model"] == 16 and a["best_learning_rate"] == 0.01
    assert a["share_within_margin"] == pytest.approx(6 / 8)  # d=16: lr 0.01, 0.1; d=32: all four
    assert a["seed_spread"] == pytest.approx((0.2 + 0.1 + 0.0 + 0.2) / 8)
    # band at the best size only (d=16): 0.01 .. 0.1, one decade (d=32 alone would give three)
    assert (a["lr_band_low"], a["lr_band_high"]) == (0.01, 0.1) and a["lr_band_decades"] == pytest.approx(1.0)
    assert a["n_configs"] == 8 and a["n_seeds"] == 2 and a["diverged_share"] == 0.0
    # B: ties go to the highest rate at the smallest size; the diverged rate is outside the band
    assert b["best_g"] == pytest.approx(0.5) and b["best_learning_rate"] == 0.1
    assert b["share_within_margin"] == pytest.approx(3 / 4) and b["seed_spread"] == pytest.approx(0.0)
    assert b["lr_band_decades"] == pytest.approx(2.0) and b["n_configs"] == 4  # the failed trial is ignored
    assert b["diverged_share"] == pytest.approx(2 / 8)  # both seeds of one of four rates


def _loss_rows() -> pl.LazyFrame:
    """Validation losses (lower is better); mixer A diverges at the highest rate: no finite G there."""
    per_rate = {
        0.001: {0: [0.9, 0.5], 1: [0.9, 0.7]},  # means 0.9, 0.6: G = 0.6; seed bests 0.5 / 0.7: spread 0.2
        0.01: {0: [0.3, 0.2], 1: [0.3, 0.4]},  # G = 0.3 (either step); seed bests 0.2 / 0.3: spread 0.1
        0.1: {0: [0.35, 0.33], 1: [0.35, 0.33]},  # G = 0.33, spread 0
        1.0: {0: [math.nan, math.nan], 1: [math.nan, math.nan]},  # diverged: no G
    }
    rows: list[dict[str, Any]] = []
    for lr, per_seed in per_rate.items():
        for row in _rows("mixer", "A", 16, lr, per_seed, status="diverged" if lr == 1.0 else "ok"):
            row["val_loss"] = row.pop("val_accuracy")
            rows.append(row)
        for row in _rows("mixer", "B", 16, lr, {0: [0.6, 0.5], 1: [0.6, 0.5]}):
            row["val_loss"] = row.pop("val_accuracy")
            rows.append(row)
    return pl.LazyFrame(rows)


def test_a_loss_leaderboard_counts_a_cell_without_g_as_the_losss_worst_value() -> None:
    """A missing G is the metric's worst value (analysis.stats.rgb.worst_value: a loss +inf, never the best), and
    best means lowest for a loss (search_spaces.finding.direction)."""
    board = leaderboard(_loss_rows(), entity="mixer", task="task", size="d_model", metric="val_loss")
    assert board.get_column("mixer").to_list() == ["A", "B"]  # best (lowest) first within the task
    a, b = (board.filter(pl.col("mixer") == m).row(0, named=True) for m in ("A", "B"))
    assert a["best_g"] == pytest.approx(0.3) and a["best_learning_rate"] == 0.01  # not the diverged rate at 0.0
    assert a["share_within_margin"] == pytest.approx(2 / 4)  # 0.3 and 0.33; the diverged cell is outside
    assert (a["lr_band_low"], a["lr_band_high"]) == (0.01, 0.1) and a["lr_band_decades"] == pytest.approx(1.0)
    assert a["seed_spread"] == pytest.approx((0.2 + 0.1 + 0.0) / 3) and a["diverged_share"] == pytest.approx(2 / 8)
    assert b["best_g"] == pytest.approx(0.5) and b["share_within_margin"] == 1.0
    assert b["best_learning_rate"] == 1.0 and b["lr_band_decades"] == pytest.approx(3.0)  # ties: the highest rate
    accuracies = leaderboard(_atlas_rows(), entity="mixer", task="task", size="d_model")
    assert accuracies.filter(pl.col("mixer") == "B").item(0, "share_within_margin") == pytest.approx(3 / 4)


def test_margin_changes_share_and_band() -> None:
    board = leaderboard(_atlas_rows(), entity="mixer", task="task", size="d_model", margin=0.15)
    a = board.filter(pl.col("mixer") == "A").row(0, named=True)
    assert a["share_within_margin"] == pytest.approx(7 / 8)  # 0.7 >= 0.65 joins
    assert a["lr_band_decades"] == pytest.approx(2.0)
    assert "15 pp" in definitions(0.15)[1][1] and len(definitions()) == 5


def test_leaderboard_section_writes_table_heatmap_and_definitions(tmp_path: Path) -> None:
    page = Page(tmp_path)
    meta = synthetic_record("atlas", {"mixer": ("A", "B")}, plot={"panel": "mixer", "x": "d_model",
                                                                  "y": "learning_rate"})
    lines = leaderboard_section(page, ReportContext.of(_atlas_rows(), meta, tmp_path))
    html = "\n".join(page.parts)
    for column, _ in definitions():
        assert f"<b>{column}</b>" in html
    assert "0.01 .. 0.1" in html  # A's band as text
    assert (tmp_path / "leaderboard.png").is_file()
    assert lines[1].startswith("  task=t1: ranks: A is above B")  # which columns rank, then the rows
    assert lines[2].startswith("  mixer=A / t1: best 80.0%, within 5 pp: 75% of grid")
    fig = leaderboard_figure(leaderboard(_atlas_rows(), entity="mixer", task="task", size="d_model"),
                             "mixer", "task")
    assert [ax.get_title() for ax in fig.axes][-1] == "diverged (% of runs)" and len(fig.axes) == 5
    assert lines[3].endswith("diverged 25% of runs")  # mixer B


def _two_columns() -> pl.LazyFrame:
    """Task ``apart``: A beats B by ~30 pp in every cell; task ``plateau``: A and B sit on one level, their order
    varying from cell to cell (what seed noise gives on a plateau)."""
    rows: list[dict[str, Any]] = []
    noise = [0.01, -0.02, 0.015, -0.005, 0.02, -0.01, 0.0, -0.015]
    for k, (size, lr) in enumerate((s, r) for s in (16, 32) for r in LRS):
        rows += _rows("mixer", "A", size, lr, {0: [0.8 + noise[k]], 1: [0.82 + noise[k]]}, task="apart")
        rows += _rows("mixer", "B", size, lr, {0: [0.5 - noise[k]], 1: [0.52]}, task="apart")
        rows += _rows("mixer", "A", size, lr, {0: [0.55 + noise[k]], 1: [0.55]}, task="plateau")
        rows += _rows("mixer", "B", size, lr, {0: [0.55 - noise[k]], 1: [0.55]}, task="plateau")
    return pl.LazyFrame(rows)


def test_a_column_whose_mechanisms_are_not_separated_says_it_does_not_rank(tmp_path: Path) -> None:
    from analysis.stats.separation import separation

    versus = separation(_two_columns(), entity="mixer", task="task", cells=["d_model", "learning_rate"])
    apart = versus.filter(pl.col("task") == "apart").sort("mixer").rows_by_key("mixer", named=True, unique=True)
    assert apart["B"]["best"] == "A" and apart["B"]["separated"] and apart["B"]["ci_high"] < -0.25
    assert apart["B"]["n"] == 8 and apart["B"]["mean_diff"] == pytest.approx(-0.3, abs=0.01)
    plateau = versus.filter(pl.col("task") == "plateau")
    assert not plateau.get_column("ranks").any() and not plateau.get_column("separated").any()
    page = Page(tmp_path)
    meta = synthetic_record("atlas", {"mixer": ("A", "B")}, plot={"panel": "mixer", "x": "d_model",
                                                                  "y": "learning_rate"})
    lines = leaderboard_section(page, ReportContext.of(_two_columns(), meta, tmp_path))
    html = "\n".join(page.parts)
    assert lines[1].startswith("  task=apart: ranks: A is above B")
    assert lines[2].startswith("  task=plateau: does not rank at this scale: the best by mean G")
    assert html.count("does not rank at this scale") >= 3  # the verdict and both rows of the plateau column
    assert "tied with the best" in html and "below it" in html


def _hybrid_rows() -> pl.LazyFrame:
    rows: list[dict[str, Any]] = []
    best = {0: 0.6, 1: 0.7, 2: 0.59}
    for k, g in best.items():
        for lr in LRS:
            acc = g if lr == 0.01 else 0.3
            for r in _rows("conv_layers", k, 32, lr, {0: [acc / 2, acc], 1: [acc / 2, acc]}, task="cases"):
                r.update(n_params=1000 - 100 * k, wall_time_s=r["step"] / (10.0 + k), trial_key=f"{k}-{lr}")
                rows.append(r)
    return pl.LazyFrame(rows)


def test_hybrid_costs_and_verdict() -> None:
    costs = hybrid_costs(_hybrid_rows())
    assert costs.get_column("n_params").to_list() == [1000, 900, 800]
    assert costs.get_column("steps_per_s").to_list() == pytest.approx([10.0, 11.0, 12.0])
    board = leaderboard(_hybrid_rows(), entity="conv_layers", task="task")
    (line,) = hybrid_verdict(board)
    assert line.startswith("  cases: k=0 60.0%; k=1: 70.0% (+10.0 pp, better;")
    assert "k=2: 59.0% (-1.0 pp, same (within 1 pp)" in line


def test_hybrid_section_renders(tmp_path: Path) -> None:
    page = Page(tmp_path)
    meta = synthetic_record("yun2020.hybrid", {"conv_layers": (0, 1, 2)}, plot={"panel": None, "x": None, "y": None})
    lines = hybrid_section(page, ReportContext.of(_hybrid_rows(), meta, tmp_path))
    assert (tmp_path / "hybrid_leaderboard.png").is_file()
    assert any("conv_layers=1 / cases: best 70.0%" in line and "900 params" in line for line in lines)
    assert "Do 1-2 convolution layers at the bottom help?" in "\n".join(page.parts)
    assert not math.isnan(float(lines[1].split("steps/s")[0].rsplit(",", 1)[1]))


def test_two_cells_that_differ_alike_are_too_few_to_rank() -> None:
    """Coarse accuracies make two cells' differences agree exactly (a zero-width t-interval): not a ranking."""
    from analysis.stats.separation import separation, separation_text

    rows: list[dict[str, Any]] = []
    for lr in LRS[:2]:
        rows += _rows("mixer", "A", 16, lr, {0: [0.5], 1: [0.5]})
        rows += _rows("mixer", "B", 16, lr, {0: [0.4375], 1: [0.4375]})
    versus = separation(pl.LazyFrame(rows), entity="mixer", task="task", cells=["d_model", "learning_rate"])
    b = versus.filter(pl.col("mixer") == "B").row(0, named=True)
    assert b["ci_high"] == pytest.approx(b["ci_low"]) and b["ci_high"] < 0  # the interval alone would separate
    assert not b["separated"] and not b["ranks"]
    assert separation_text(b, "mixer") == "-6.2 pp vs the best over 2 cell(s): too few cells to tell"


def test_a_consistent_lead_under_a_point_is_no_ranking() -> None:
    """Every mixer at chance on a fixed evaluation set: a 0.3-point order that seed noise alone would call real."""
    from analysis.stats.separation import separation

    rows: list[dict[str, Any]] = []
    for size, lr in ((s, r) for s in (16, 32) for r in LRS):
        rows += _rows("mixer", "A", size, lr, {0: [0.132], 1: [0.133], 2: [0.132]}, task="ctl")
        rows += _rows("mixer", "B", size, lr, {0: [0.129], 1: [0.13], 2: [0.129]}, task="ctl")
    versus = separation(pl.LazyFrame(rows), entity="mixer", task="task", cells=["d_model", "learning_rate"])
    b = versus.filter(pl.col("mixer") == "B").row(0, named=True)
    assert b["ci_high"] < 0 and -b["mean_diff"] > b["seed_noise"]  # the interval and the seeds alone would rank it
    assert not b["separated"] and not b["ranks"]
