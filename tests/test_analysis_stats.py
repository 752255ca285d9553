"""The statistics of analysis.stats.rgb on hand-built frames with hand-computed expectations."""

from __future__ import annotations

import math

import polars as pl
import pytest

from analysis.stats.rgb import (
    best_config,
    case_rgb,
    epochwise_rgb,
    learning_curves,
    robustness_curve,
    seed_best_stats,
)

BY = ["architecture", "d_model", "learning_rate"]

# accuracy per (config, seed) at steps 100, 200, 300
ACC = {
    8: {0: [0.1, 0.5, 0.4], 1: [0.3, 0.2, 0.6], 2: [0.2, 0.8, 0.5]},
    16: {0: [0.6, 0.7, 0.7], 1: [0.5, 0.9, 0.0], 2: [0.7, 0.7, 0.8]},  # seed 1 diverges at step 300
}


@pytest.fixture
def lf() -> pl.LazyFrame:
    rows = []
    for d, seeds in ACC.items():
        for seed, accs in seeds.items():
            diverged = d == 16 and seed == 1
            for i, acc in enumerate(accs):
                rows.append(
                    {
                        "trial_key": f"k{d}",
                        "architecture": "BERT",
                        "d_model": d,
                        "learning_rate": 0.1,
                        "seed": seed,
                        "step": 100 * (i + 1),
                        "val_accuracy": acc,
                        "val_loss": math.nan if (diverged and i == 2) else 1.0 - acc,
                        "val_argmin_accuracy": acc,
                        "val_first_accuracy": acc / 2,
                        "val_argmax_accuracy": 0.3,
                        "status": "diverged" if diverged else "ok",
                    }
                )
    return pl.DataFrame(rows).lazy()


def _by_d(frame: pl.DataFrame) -> dict[int, dict]:
    return {row["d_model"]: row for row in frame.iter_rows(named=True)}


def test_epochwise_rgb_takes_seed_stats_per_step_then_max_over_training(lf: pl.LazyFrame) -> None:
    rows = _by_d(epochwise_rgb(lf, "val_accuracy", BY).collect())
    # d=8: per-step min [.1,.2,.4], mean [.2,.5,.5], max [.3,.8,.6]
    assert rows[8]["r"] == pytest.approx(0.4)
    assert rows[8]["g"] == pytest.approx(0.5)
    assert rows[8]["b"] == pytest.approx(0.8)
    # d=16: per-step min [.5,.7,0], mean [.6,.7667,.5], max [.7,.9,.8]
    assert rows[16]["r"] == pytest.approx(0.7)
    assert rows[16]["g"] == pytest.approx(2.3 / 3)
    assert rows[16]["b"] == pytest.approx(0.9)
    assert rows[16]["n_seeds"] == 3


def test_seed_best_stats_takes_each_seeds_best_then_seed_stats(lf: pl.LazyFrame) -> None:
    rows = _by_d(seed_best_stats(lf, "val_accuracy", BY).collect())
    # d=8: seed bests .5, .6, .8 (differs from the epoch-wise order: G there is 0.5)
    assert (rows[8]["best_min"], rows[8]["best_mean"], rows[8]["best_max"]) == pytest.approx(
        (0.5, 1.9 / 3, 0.8)
    )
    assert (rows[16]["best_min"], rows[16]["best_mean"], rows[16]["best_max"]) == pytest.approx(
        (0.7, 0.8, 0.9)
    )
    assert rows[8]["n_diverged"] == 0
    assert rows[16]["n_diverged"] == 1
    assert rows[16]["n_seeds"] == 3


def test_mode_min_for_losses_counts_nan_as_worst(lf: pl.LazyFrame) -> None:
    rows = _by_d(epochwise_rgb(lf, "val_loss", BY, mode="min").collect())
    # d=8: loss = 1 - acc; worst (max) per step [.9,.8,.6] -> min .6; mean -> .5; best -> .2
    assert (rows[8]["r"], rows[8]["g"], rows[8]["b"]) == pytest.approx((0.6, 0.5, 0.2))
    # d=16: the NaN makes step 300 worst/mean infinite; best over training ignores it
    assert (rows[16]["r"], rows[16]["g"], rows[16]["b"]) == pytest.approx((0.3, 0.7 / 3, 0.1))
    seed = _by_d(seed_best_stats(lf, "val_loss", BY, mode="min").collect())
    assert seed[16]["best_mean"] == pytest.approx((0.3 + 0.1 + 0.2) / 3)


def test_case_rgb_is_mean_case_accuracy_maxed_over_training(lf: pl.LazyFrame) -> None:
    rows = _by_d(case_rgb(lf, "val", BY).collect())
    assert (rows[8]["r"], rows[8]["g"], rows[8]["b"]) == pytest.approx((0.5, 0.25, 0.3))


def test_best_config_and_robustness_order(lf: pl.LazyFrame) -> None:
    rgb = epochwise_rgb(lf, "val_accuracy", BY)
    best = best_config(rgb, "architecture").collect()
    assert best.height == 1
    assert best.row(0, named=True)["d_model"] == 16
    assert best.row(0, named=True)["g"] == pytest.approx(2.3 / 3)
    per_d = best_config(rgb, "d_model").collect()
    assert per_d.get_column("d_model").to_list() == [8, 16]
    curve = robustness_curve(rgb, "architecture").collect()
    assert curve.get_column("d_model").to_list() == [16, 8]
    assert curve.get_column("rank").to_list() == [1, 2]
    assert curve.get_column("fraction").to_list() == pytest.approx([0.5, 1.0])


def test_learning_curves(lf: pl.LazyFrame) -> None:
    curves = learning_curves(lf, "val_accuracy", BY).collect()
    row = curves.filter(pl.col("d_model") == 8, pl.col("step") == 200).row(0, named=True)
    assert (row["mean"], row["min"], row["max"], row["n_seeds"]) == pytest.approx((0.5, 0.2, 0.8, 3))
    assert curves.height == 6


def test_model_status_is_one_status_per_trained_model() -> None:
    from analysis.stats.coverage import model_status

    lf = pl.LazyFrame({
        "trial_key": ["a", "a", "a", "a", "b", "b"],
        "seed": [0, 0, 1, 1, 0, 0],
        "status": ["ok", "ok", "diverged", "diverged", "failed", "diverged"],
    })
    out = model_status(lf).sort("trial_key", "seed").collect()
    assert out.select("trial_key", "seed", "status", "n_rows").rows() == [
        ("a", 0, "ok", 2), ("a", 1, "diverged", 2), ("b", 0, "failed", 2)]


def test_the_samplers_objective_is_the_reports_g_with_the_same_nan_rule() -> None:
    """One G: a trial's objective (Ray Tune, Optuna) is epochwise_rgb's g of its best learning rate, a diverged seed
    counting as the worst value (a step where one seed diverged is never the best), not the mean of the others."""
    from analysis.stats.rgb import objective

    rows = [{"learning_rate": lr, "seed": s, "step": t, "val_accuracy": v}
            for lr, s, t, v in [(0.1, 0, 1, 0.5), (0.1, 1, 1, 0.7), (0.1, 0, 2, 0.9), (0.1, 1, 2, math.nan),
                                (0.01, 0, 1, 0.6), (0.01, 1, 1, 0.62)]]
    report = epochwise_rgb(pl.DataFrame(rows).lazy(), "val_accuracy", ["learning_rate"]).collect()
    assert objective(rows, "val_accuracy", "max") == pytest.approx(0.61)  # not 0.9 (step 2 without its NaN seed)
    assert objective(rows, "val_accuracy", "max") == pytest.approx(report.get_column("g").max())
    losses = [{"learning_rate": 0.1, "seed": s, "step": 1, "val_loss": v} for s, v in [(0, 0.3), (1, math.nan)]]
    assert objective(losses, "val_loss", "min") == math.inf  # no step without a diverged seed: the worst, as findings
    diverged = [{**row, "val_accuracy": math.nan} for row in rows if row["learning_rate"] == 0.1 and row["seed"] == 1]
    assert objective([*diverged, rows[0], rows[2]], "val_accuracy", "max") == 0.0
    assert math.isnan(objective([], "val_accuracy", "max"))
