"""Expressive-attention report sections on synthetic results: ladder, levels and convergence, the full report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from analysis.papers.gros2024 import (
    LADDER_THRESHOLD,
    curves_figure,
    dynamic_range,
    ladder_table,
    seed_curves,
    summary_table,
)
from analysis.report.build import build_report
from search_spaces.gros2024 import FIG3, LADDER
from study.results.storage import StudyStorage


def _rows(attention: str, n_context: int, accs: list[float], final: list[float], basis: int = 16,
          delay: int = 2) -> list[dict[str, Any]]:
    """One trial: per seed (len(final) seeds) an accuracy curve ``accs`` (+ seed offset), final on the last."""
    rows = []
    for seed, fin in enumerate(final):
        for i, acc in enumerate(accs):
            last = i == len(accs) - 1
            rows.append({"task": "nt", "attention": attention, "n_context": n_context, "basis": basis,
                         "delay": delay, "learning_rate": 0.02, "seed": seed, "step": 10 * (i + 1),
                         "epoch": 10 * (i + 1), "val_accuracy": min(1.0, acc + 0.01 * seed),
                         "train_accuracy": acc, "train_loss": 1.0 - acc + 0.01, "val_loss": 1.0 - acc,
                         "final_accuracy": fin if last else None, "status": "ok", "n_params": 100 + n_context,
                         "wall_time_s": 1.0, "device": "cpu",
                         "trial_key": f"{attention}{n_context}{basis}{delay}".ljust(16, "0")})
    return rows


def test_ladder_takes_the_smallest_context_whose_seed_mean_reaches_the_threshold() -> None:
    rows = (_rows("ea", 8, [0.5], [0.9, 1.0]) + _rows("ea", 16, [0.5], [1.0, 1.0])
            + _rows("ea", 32, [0.5], [1.0, 1.0]) + _rows("dpa", 8, [0.5], [0.5, 0.6])
            + _rows("dpa", 16, [0.5], [1.0, 0.99]) + _rows("dpa", 32, [0.5], [1.0, 0.999]))
    table = ladder_table(pl.LazyFrame(rows))
    got = {r["attention"]: r["min_n_context_100"] for r in table.iter_rows(named=True)}
    assert got == {"ea": 16, "dpa": 32}  # dpa at 16: mean 0.995 < 0.999
    assert LADDER_THRESHOLD == 0.999
    never = ladder_table(pl.LazyFrame(_rows("dpa", 8, [0.5], [0.5, 0.5])))
    assert never["min_n_context_100"].to_list() == [None] and never["max_n_context_tried"].to_list() == [8]


def test_summary_levels_and_convergence_epochs() -> None:
    accs = [0.3, 0.55, 0.55, 0.55, 0.55, 0.55, 0.55, 0.55, 0.9, 1.0]  # plateau, then escape
    table = summary_table(pl.LazyFrame(_rows("ea", 32, accs, [1.0, 0.98])), ["attention", "n_context"], 100)
    r = table.row(0, named=True)
    assert r["plateau_acc"] == pytest.approx(0.305)  # epoch 10 = 10% of 100, seed mean of 0.30 and 0.31
    assert r["epoch_mean_99"] == 100 and r["best_mean_acc"] == pytest.approx(1.0)
    assert r["seeds_reaching_100"] == 2 and r["median_epoch_seed_100"] == 100
    assert r["final_mean"] == pytest.approx(0.99) and r["seeds_final_100"] == 1 and r["n_params"] == 132


def test_curves_figure_draws_a_configuration_whose_seeds_all_diverged(tmp_path: Path) -> None:
    """Every seed diverged (NaN loss): its loss curve is empty, the figure still renders, the others keep a log axis."""
    ok = _rows("ea", 32, [0.3, 0.6, 0.9], [1.0, 1.0])
    dead = [{**r, "attention": "dpa", "n_context": 64, "train_loss": float("nan"), "val_accuracy": 0.0,
             "status": "diverged"} for r in _rows("dpa", 64, [0.3, 0.6, 0.9], [0.0, 0.0])]
    lf = pl.LazyFrame(ok + dead)
    curves = seed_curves(lf, ["val_accuracy", "train_loss"], ["attention", "n_context"])
    fig = curves_figure(curves, [{"n_context": 32}, {"n_context": 64}], ["n_context"], ["val_accuracy"], "t")
    fig.savefig(tmp_path / "curves.png")
    assert (tmp_path / "curves.png").stat().st_size > 1000
    loss_axes = [row[1] for row in np.asarray(fig.axes).reshape(2, 2)]
    assert [ax.get_yscale() for ax in loss_axes] == ["log", "linear"]
    assert len(loss_axes[0].lines) == 1 and len(loss_axes[1].lines) == 0
    # The empty panel says why; the drawn one says nothing.
    assert [t.get_text() for t in loss_axes[1].texts] == ["DPA: no finite training loss (every seed diverged)"]
    assert not loss_axes[0].texts


def test_dynamic_range_counts_decades_of_positive_entries() -> None:
    m = np.array([[1.0, np.nan], [1e-3, 1.0]])
    assert dynamic_range(m) == pytest.approx(3.0)


@pytest.mark.parametrize("study", [FIG3, LADDER])
def test_full_report_with_the_sections(tmp_path: Path, study: Any) -> None:
    smoke = study.at_scale("smoke")
    storage = StudyStorage(str(tmp_path), smoke.directory)
    rows = []
    for att in ("dpa", "ea"):
        for n_context, delay in ((4, 1), (8, 2)):
            rows += _rows(att, n_context, [0.4, 0.8, 1.0 if att == "ea" else 0.7],
                          [1.0, 1.0] if att == "ea" else [0.7, 0.8], basis=2, delay=delay)
    for key in {r["trial_key"] for r in rows}:
        storage.write_trial(key, pa.Table.from_pylist([r for r in rows if r["trial_key"] == key]))
        t = 4
        snaps = [{"seed": 0, "epoch": 30, "query": q, "key": k, "weight": 1.0 / (q + 1), "rule": 0,
                  "trial_key": key} for q in range(t) for k in range(q + 1)]
        storage.write_artifact("attention", key, pa.Table.from_pylist(snaps))
    study_dir = tmp_path / smoke.directory
    (study_dir / "study.json").write_text(json.dumps(smoke.to_json()))
    report = build_report(study_dir, tmp_path / "out")
    names = {p.name for p in report.figures}
    if study is LADDER:
        assert "expressive_ladder.png" in names
        assert "ea N2T1: 4" in report.summary and "dpa N2T1: > 4" in report.summary
    else:
        assert {"expressive_curves_0.png", "expressive_attention.png"} <= names
        assert "attention=ea, n_context=4: plateau" in report.summary
