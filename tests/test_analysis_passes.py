"""A big study's statistics in several passes over disjoint configurations equal the one-pass statistics.

Equal up to the last bit of a mean: the streaming engine sums a group's values in the order its morsels arrive,
which differs between passes (measured: 2.8e-17 on accuracies); every other value is exact.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import analysis.stats.training_stats as training
from analysis.data.meta import read_study_meta
from analysis.data.rows import scan_study
from analysis.data.synthetic import write_synthetic_study

GRID = {
    "architecture": ["BERT", "NAP", "sum"],
    "d_model": [8, 16, 32],
    "learning_rate": [0.09, 0.0081, 0.000729],
    "dropout": [0.0, 0.5],
}
SAME = {"rel_tol": 1e-12, "abs_tol": 1e-15}
FINDINGS = [{"description": "NAP learns", "metric": "val_loss", "below": {"NAP": 5.0}}]


def _stats(study_dir: Path, rows_per_pass: int, monkeypatch: pytest.MonkeyPatch) -> training.TrainingStats:
    monkeypatch.setattr(training, "ROWS_PER_PASS", rows_per_pass)
    return training.training_stats(scan_study(study_dir), read_study_meta(study_dir))


@pytest.mark.slow  # 6-21 s (measured 2026-11-28): in `make test`, out of the 3-minute `make test-fast`
def test_passes_give_the_one_pass_statistics(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    study_dir = tmp_path / "s"
    write_synthetic_study(study_dir, GRID, seeds=(0, 1, 2), n_evals=5, meta={"findings": FINDINGS})
    lf = scan_study(study_dir)
    rows = lf.select(pl.len()).collect().item()
    one = _stats(study_dir, rows, monkeypatch)
    many = _stats(study_dir, 40, monkeypatch)
    assert training.n_passes(lf) == -(-rows // 40) > 5  # still patched: the second computation made many passes
    assert one.step_rows == many.step_rows == 54 * 5
    assert one.facets == many.facets and one.axes == many.axes and len(one.facets) == 2
    for name in ("rgb", "case_rgb", "best", "best_steps", "rgb_min"):
        a, b = getattr(one, name), getattr(many, name)
        assert a.keys() == b.keys() and a, name
        for key in a:
            assert_frame_equal(a[key], b[key], **SAME)
    assert "val_loss" in one.rgb_min and {"train", "val"} <= one.case_rgb.keys()
    assert_frame_equal(one.per_seed, many.per_seed, **SAME)
    assert_frame_equal(one.seed_stats, many.seed_stats, **SAME)
    key = ["trial_key", "seed"]
    assert_frame_equal(one.counts.sort(key), many.counts.sort(key), **SAME)
    assert_frame_equal(one.learning_curves(), many.learning_curves(), **SAME)
    assert_frame_equal(one.paper_table(), many.paper_table(), **SAME)
    # the many-pass run keeps per-step rows of a few configurations only, and the one-pass run those of its best
    assert many.curve_steps.height < one.step_rows
    assert one.curve_steps.select(pl.struct(one.axes.by).n_unique()).item() == len(GRID["architecture"])
