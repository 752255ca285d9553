"""Calibration by simulation: studies of known truth, replayed many times with drawn seed noise, through the same
verdicts and budget as real studies. The share of decided verdicts that contradict the truth must stay within the
error a verdict states (1 - confidence).

A synthetic truth is a grid of cells (``architecture`` x ``d_model`` x ``learning_rate``) with a true mean ``mu`` and
a true seed standard deviation ``sigma`` per cell; some cells are *bimodal* (a seed learns with probability
``p_learn`` and reaches ``mu_high``, else stays at ``mu_low``): the cells where seeds disagree that real studies have.
A replay draws every seed of every cell once, then lets the adaptive budget (or the fixed one) see the first ``n``
seeds of each cell it asks for.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from analysis.stats.budget import DECIDED, Budget, run_budget
from analysis.stats.findings import FindingData, Verdict, evaluate_findings
from search_spaces.record import StudyRecord

KEYS = ("architecture", "d_model", "learning_rate")


@dataclass(frozen=True)
class Truth:
    """Per cell: ``mu`` (the true mean of a seed's value), ``sigma`` (its seeds' noise) and, for a bimodal cell,
    ``p_learn`` > 0 with ``mu_low`` / ``mu_high`` (its ``mu`` is then their mixture)."""

    cells: pl.DataFrame

    def draw(self, rng: np.random.Generator, seeds: int) -> np.ndarray:
        """One value per (cell, seed): normal around ``mu``, or the bimodal cells' mixture; clipped to [0, 1]."""
        frame = self.cells
        mu, sigma = frame.get_column("mu").to_numpy(), frame.get_column("sigma").to_numpy()
        values = rng.normal(mu[:, None], sigma[:, None], (len(mu), seeds))
        p = frame.get_column("p_learn").to_numpy()
        learned = rng.random((len(mu), seeds)) < p[:, None]
        low, high = frame.get_column("mu_low").to_numpy(), frame.get_column("mu_high").to_numpy()
        bimodal = np.where(learned, high[:, None], low[:, None]) + rng.normal(0, sigma[:, None], values.shape)
        return np.clip(np.where(p[:, None] > 0, bimodal, values), 0.0, 1.0)


def _data(truth: Truth, values: np.ndarray, n: np.ndarray, max_seeds: int, sd_scale: float = 1.0) -> FindingData:
    """What findings see of the first ``n`` seeds of each cell."""
    seen = np.where(np.arange(values.shape[1])[None, :] < n[:, None], values, np.nan)
    g = np.nanmean(seen, axis=1)
    with np.errstate(invalid="ignore"):
        sd = np.where(n > 1, np.nanstd(seen, axis=1, ddof=1), 0.0) * sd_scale
    cells = truth.cells.select(KEYS).with_columns(g=pl.Series(g), r=pl.Series(np.nanmin(seen, axis=1)),
                                                  b=pl.Series(np.nanmax(seen, axis=1)), sd=pl.Series(sd),
                                                  n=pl.Series(n.astype(np.int64)))
    return FindingData(cells={"val_accuracy": cells}, panel="architecture", select_metric="val_accuracy",
                       max_seeds=max_seeds)


def true_verdicts(meta: StudyRecord, truth: Truth) -> list[Verdict]:
    """The verdicts on the true means (no noise: every bound decided exactly)."""
    cells = truth.cells.select(KEYS).with_columns(g=truth.cells.get_column("mu"), sd=pl.lit(0.0),
                                                  n=pl.lit(10**9, pl.Int64))
    data = FindingData(cells={"val_accuracy": cells}, panel="architecture", select_metric="val_accuracy",
                       max_seeds=10**9)
    return evaluate_findings(meta.replace(budget="fixed"), data)


@dataclass(frozen=True)
class Tally:
    """Over the replays: decided verdicts, how many contradict the truth, the models the budget gave."""

    decided: int
    wrong: int
    replays: int
    models: float  # mean share of all models

    @property
    def wrong_share(self) -> float:
        """Wrong decided verdicts per finding and replay (what 1 - confidence bounds)."""
        return self.wrong / max(self.replays, 1)


def simulate(meta: StudyRecord, truth: Truth, replays: int, seed: int = 0, sd_scale: float = 1.0) -> Tally:
    """Replay ``meta``'s budget (adaptive or fixed) ``replays`` times over seeds drawn from ``truth``; a finding counts
    wrong when its verdict is decided and contradicts the true one (``sd_scale`` < 1 understates the seed noise: a
    miscalibrated model, the negative control)."""
    rng = np.random.default_rng(seed)
    truths = [v.status for v in true_verdicts(meta, truth)]
    keys = truth.cells.select(KEYS)
    seeds = len(meta.seeds)
    decided = wrong = 0
    models = 0.0
    order = {tuple(row): i for i, row in enumerate(keys.iter_rows())}
    for _ in range(replays):
        values = truth.draw(rng, seeds)

        def view(budget: Budget, values: np.ndarray = values) -> FindingData:
            n = np.zeros(len(order), dtype=np.int64)
            for row in budget.cells.iter_rows():
                n[order[tuple(row[:-1])]] = row[-1]
            return _data(truth, values, n, seeds, sd_scale)

        if meta.budget == "adaptive":
            outcome = run_budget(meta, keys, view)
            verdicts, given = outcome.verdicts(), outcome.budget.models() if outcome.budget else 0
        else:
            verdicts = evaluate_findings(meta, _data(truth, values, np.full(len(order), seeds), seeds, sd_scale))
            given = len(order) * seeds
        models += given / (len(order) * seeds)
        for verdict, true in zip(verdicts, truths, strict=True):
            if verdict.status in DECIDED:
                decided += 1
                wrong += verdict.status != true
    return Tally(decided, wrong, replays * len(truths), models / replays)


def near_threshold_truth(rng_seed: int = 1) -> Truth:
    """A 3 x 4 x 5 grid (architectures A, B, C) whose findings sit near their bounds: A's best within a point of 90%,
    B's share of cells above 50% near one half, C behind A by about the margin; a fifth of the cells bimodal."""
    rng = np.random.default_rng(rng_seed)
    rows = []
    for arch, base in (("A", 0.86), ("B", 0.5), ("C", 0.8)):
        for d in (16, 32, 64, 128):
            for i, lr in enumerate((1e-4, 3e-4, 1e-3, 3e-3, 1e-2)):
                mu = float(np.clip(base + 0.04 * np.log2(d / 32) - 0.02 * abs(i - 2) + rng.normal(0, 0.03), 0, 1))
                bimodal = rng.random() < 0.2
                low, high = max(mu - 0.3, 0.05), min(mu + 0.1, 1.0)
                p = (mu - low) / (high - low) if bimodal else 0.0
                rows.append({"architecture": arch, "d_model": d, "learning_rate": lr, "mu": mu,
                             "sigma": 0.01 + 0.02 * rng.random(), "p_learn": p, "mu_low": low, "mu_high": high})
    return Truth(pl.DataFrame(rows))
