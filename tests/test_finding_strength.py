"""Findings as strong as the paper's sentences (issue 36): a tie is no lead, half a claim is no PASS, a diverged
cell counts the same in every statistic, and "all three cases" means at the same evaluation. Each test fails on the
evaluator as it was before (the comments say how)."""

from __future__ import annotations

import polars as pl
import pytest

from analysis.data.meta import parse_meta
from analysis.data.synthetic import ARCHITECTURES, synthetic_record
from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.evaluate import evaluate_findings
from analysis.stats.verdicts.status import Status


def _grid(g: dict[str, list[float | None]], sd: float = 0.05, n: int = 5) -> pl.DataFrame:
    """One G per (architecture, d_model): d = 16, 32, ... in order; every cell's seeds spread by ``sd``."""
    return pl.DataFrame([{"architecture": a, "d_model": 16 * 2**i, "r": v, "g": v, "b": v, "n_seeds": n, "sd": sd}
                         for a, values in g.items() for i, v in enumerate(values)])


def _one(finding: dict, grid: pl.DataFrame):
    sizes = tuple(sorted(set(grid.get_column("d_model").to_list())))
    meta = parse_meta(synthetic_record(scientific={"architecture": ARCHITECTURES, "d_model": sizes},
                                       findings=[{"description": "d", **finding}]))
    data = FindingData(cells={"val_accuracy": grid}, panel="architecture", select_metric="val_accuracy", max_seeds=5)
    (verdict,) = evaluate_findings(meta, data)
    return verdict


def test_a_tie_is_not_a_lead_and_a_lead_must_clear_the_seed_noise() -> None:
    tie = _grid({"NAP": [0.9, 0.5], "BERT": [0.9, 0.4]})
    assert _one({"ahead": {"NAP": ["BERT"]}}, tie).status == Status.UNDECIDED  # before issue 36: ">=" called it a lead
    assert _one({"ahead": {"NAP": ["BERT"]}}, _grid({"NAP": [0.93, 0.5], "BERT": [0.9,
                0.4]})).status == Status.UNDECIDED
    assert _one({"ahead": {"NAP": ["BERT"]}}, _grid({"NAP": [0.99, 0.5], "BERT": [0.8, 0.4]})).status == Status.PASS
    assert _one({"ahead": {"NAP": ["BERT"]}}, _grid({"NAP": [0.7, 0.5], "BERT": [0.9, 0.4]})).status == Status.FAIL
    # a stated margin is the bound on the lead; a negative one ("similar: within 2 points") is used as it is
    assert "+ 10.0 pp =" in _one({"ahead": {"NAP": ["BERT"]}, "margin": 0.1}, tie).checks[0].text()
    assert _one({"ahead": {"NAP": ["BERT"]}, "margin": -0.2}, tie).status == Status.PASS


def test_a_share_lead_is_measured_against_the_cells_near_the_level() -> None:
    grid = _grid({"NAP": [0.91, 0.89, 0.3, 0.3], "BERT": [0.89, 0.3, 0.3, 0.3]})  # shares 1/4 vs 0/4 at level 0.9
    verdict = _one({"ahead": {"NAP": ["BERT"]}, "statistic": "share", "level": 0.9}, grid)
    assert verdict.status == Status.UNDECIDED  # every deciding cell sits within its interval of the level: noise
    far = _grid({"NAP": [0.99, 0.99, 0.3, 0.3], "BERT": [0.3, 0.3, 0.3, 0.3]}, sd=0.01)
    assert _one({"ahead": {"NAP": ["BERT"]}, "statistic": "share", "level": 0.9}, far).status == Status.PASS


def test_a_cell_where_every_seed_diverged_counts_as_accuracy_zero_in_every_statistic() -> None:
    grid = _grid({"NAP": [0.9, None], "sum": [0.9, 0.9]}, sd=0.01)
    # before: null skipped, mean 90%
    assert _one({"statistic": "mean", "below": {"NAP": 0.5}}, grid).status == Status.PASS
    assert _one({"statistic": "worst", "below": {"NAP": 0.1}}, grid).status == Status.PASS  # before: worst 90%
    assert _one({"statistic": "share", "level": 0.5, "below": {"NAP": 0.5}}, grid).status == Status.PASS  # as before


def _cases_rows() -> pl.LazyFrame:
    """One configuration, 2 seeds: argmin is learned at step 100 and lost by step 200, argmax the other way round."""
    rows = []
    for seed in (0, 1):
        for step, argmin, argmax in ((100, 0.95, 0.05), (200, 0.1, 0.95)):
            rows.append({"architecture": "BERT", "d_model": 16, "learning_rate": 0.01, "seed": seed, "step": step,
                         "trial_key": "k", "status": "ok", "train_accuracy": 0.7, "train_argmin_accuracy": argmin,
                         "train_first_accuracy": 0.9, "train_argmax_accuracy": argmax})
    return pl.LazyFrame(rows)


def test_all_three_cases_means_at_the_same_evaluation() -> None:
    from analysis.stats.training_stats import training_stats

    all_cases = "min(train_argmin_accuracy, train_first_accuracy, train_argmax_accuracy)"
    meta = parse_meta(synthetic_record(scientific={"architecture": ARCHITECTURES, "d_model": (16,)},
                                       nuisance={"learning_rate": (0.01,)}, metric="train_accuracy",
                                       findings=[{"description": "BERT learns all three cases", "metric": all_cases,
                                                  "above": {"BERT": 0.5}}]))
    stats = training_stats(_cases_rows(), meta)
    assert stats.finding_rgb[all_cases].get_column("g").to_list() == [pytest.approx(0.1)]  # max over steps of the min
    data = FindingData(cells=stats.finding_cells(), panel="architecture", select_metric="train_accuracy",
                       max_seeds=2)
    (verdict,) = evaluate_findings(meta, data)
    assert verdict.status == Status.FAIL  # before: each case's peak on its own (95%, 90%, 95%): min 90%, a PASS


@pytest.mark.slow  # 6-21 s (measured 2026-11-28): in `make test`, out of the 3-minute `make test-fast`
def test_the_mode_base_rates_are_the_samplers() -> None:
    import torch

    from search_spaces.richter2020_findings import MODE_BASE_RATE
    from trainables.counter_draws import Draws, member_keys
    from trainables.richter2020.tasks.mode import ModeTask

    for size, rate in MODE_BASE_RATE.items():
        _, labels = ModeTask(vocab_size=size).sample(40_000, 128, Draws(member_keys([1], 1, 0, "cpu"), size))
        labels = labels[0]
        measured = torch.bincount(labels, minlength=size).max().item() / labels.numel()
        assert measured == pytest.approx(rate, abs=0.008), size  # 40,000 draws: a standard error under 0.003


def test_the_atlas_mode_base_rates_are_the_samplers() -> None:
    import torch

    from search_spaces.atlas import MODE_BASE_RATE_S10
    from trainables.counter_draws import Draws, member_keys
    from trainables.richter2020.tasks.mode import ModeTask

    for length, rate in MODE_BASE_RATE_S10.items():
        _, labels = ModeTask(vocab_size=10).sample(40_000, length, Draws(member_keys([2], 1, 0, "cpu"), length))
        labels = labels[0]
        measured = torch.bincount(labels, minlength=10).max().item() / labels.numel()
        assert measured == pytest.approx(rate, abs=0.008), length
