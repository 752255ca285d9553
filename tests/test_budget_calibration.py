"""The verdicts' stated confidence, measured (issue 41): synthetic studies of known truth, whose findings sit half a
point on the true side of their bounds, replayed with drawn seed noise under the fixed and the adaptive budget. The
share of decided verdicts that contradict the truth stays within 1 - confidence; a noise model that understates the
seed noise (the negative control) breaks it, so the test can fail."""

from __future__ import annotations

import math

import polars as pl
import pytest

from analysis.stats.calibration import near_threshold_truth, simulate, true_verdicts
from search_spaces import Finding
from search_spaces.record import StudyRecord

REPLAYS = 200
EDGE = 0.005  # each finding's truth lies this far on its true side of the bound


def _study() -> StudyRecord:
    truth = near_threshold_truth()
    cells = truth.cells

    def of(arch: str, expr: pl.Expr) -> float:
        return cells.filter(pl.col("architecture") == arch).select(expr).item()

    best_a, best_c = of("A", pl.col("mu").max()), of("C", pl.col("mu").max())
    findings = (Finding(description="A's best", above={"A": best_a - EDGE}),
                Finding(description="C's best", below={"C": best_c + EDGE}),
                Finding(description="B's share", statistic="share", level=0.5,
                        below={"B": of("B", (pl.col("mu") >= 0.5).mean())}),
                Finding(description="A ahead of C", ahead={"A": ("C",)}, margin=best_a - best_c - EDGE),
                Finding(description="B's mean", statistic="mean", above={"B": of("B", pl.col("mu").mean()) - EDGE}))
    return StudyRecord(name="calibration", goal="known truth", tasks=("cases",),
                       scientific={"architecture": ("A", "B", "C"), "d_model": (16, 32, 64, 128)},
                       nuisance={"learning_rate": (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)}, findings=findings)


def test_every_finding_of_the_synthetic_study_is_true() -> None:
    assert [v.status for v in true_verdicts(_study(), near_threshold_truth())] == ["PASS"] * 5


@pytest.mark.parametrize("budget", ["fixed", "adaptive"])
def test_wrong_decided_verdicts_stay_within_the_stated_error(budget: str) -> None:
    study = _study().replace(budget=budget)
    alpha = 1 - study.confidence
    tally = simulate(study, near_threshold_truth(), REPLAYS)
    allowed = alpha + 3 * math.sqrt(alpha * (1 - alpha) / tally.replays)
    assert tally.decided > 0.05 * tally.replays  # the verdicts decide something, not only UNDECIDED
    assert tally.wrong_share <= allowed, tally
    if budget == "adaptive":
        assert tally.models < 0.95  # and it saves models


def test_an_understated_seed_noise_breaks_the_calibration() -> None:
    """The same simulation with every cell's seed sd at a fifth: the wrong verdicts exceed the stated error."""
    study = _study().replace(budget="adaptive")
    tally = simulate(study, near_threshold_truth(), REPLAYS, sd_scale=0.2)
    assert tally.wrong_share > 1 - study.confidence, tally
