"""Replays of a study in the calibration's world: each finding's decided verdicts and the wrong ones, counted per
finding (:class:`Tally`), through the same rows, statistics, verdicts and budget as real studies.

**The negative controls** the calibration tests must catch (:mod:`analysis.calibration.controls`): seed noise
understated (``sd_scale``), and a wrong noise model (``noise``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from scipy import stats

from analysis.calibration.world import METRIC, World, true_verdicts
from analysis.stats.budget.adaptive import Budget, run_budget
from analysis.stats.noise import NoiseModel
from analysis.stats.table import CellTable
from analysis.stats.training_stats import training_stats
from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.evaluate import Verdict, evaluate_findings
from analysis.stats.verdicts.status import DECIDED, Status
from search_spaces.record import StudyRecord


@dataclass
class Tally:
    """Per finding over the replays: decided verdicts, the wrong ones; the models the budget gave."""

    findings: list[str]
    truths: list[Status]
    decided: np.ndarray
    wrong: np.ndarray
    replays: int = 0
    models: float = 0.0  # mean share of all models
    per_replay: list[int] = field(default_factory=list)  # wrong decided verdicts of each replay
    facts: np.ndarray | None = None  # per finding: decided verdicts that state a fact of the seeds run (``simulate``)
    #: per RNG seed of the replays (:func:`simulate_seeds`): each finding's wrong decisions under it
    wrong_by_seed: dict[int, np.ndarray] = field(default_factory=dict)

    def rates(self, confidence: float = 0.95) -> pl.DataFrame:
        """Per finding: its true verdict, the share of replays it was decided and decided wrong with that share's
        exact binomial interval (Clopper-Pearson, ``wrong_low`` and ``wrong_high`` at ``confidence``), the wrong count
        (and, where counted, the share decided on a fact of the seeds run: never wrong)."""
        k, n, tail = self.wrong, self.replays, (1 - confidence) / 2
        low = np.where(k > 0, stats.beta.ppf(tail, k, n - k + 1), 0.0)
        high = np.where(k < n, stats.beta.ppf(1 - tail, k + 1, n - k), 1.0)
        rates = pl.DataFrame({"finding": self.findings, "truth": [str(t) for t in self.truths],
                              "decided": self.decided / n, "wrong": k / n, "wrong_low": low, "wrong_high": high,
                              "wrong_count": k})
        return rates if self.facts is None else rates.with_columns(fact=pl.Series(self.facts / n))

    def plus(self, other: Tally) -> Tally:
        """Two tallies of the same findings as one (their replays pooled)."""
        replays = self.replays + other.replays
        models = (self.models * self.replays + other.models * other.replays) / max(replays, 1)
        facts = None if self.facts is None or other.facts is None else self.facts + other.facts
        return Tally(self.findings, self.truths, self.decided + other.decided, self.wrong + other.wrong, replays,
                     models, self.per_replay + other.per_replay, facts, {**self.wrong_by_seed, **other.wrong_by_seed})


def simulate_seeds(meta: StudyRecord, world: World, replays: int, seeds: Sequence[int],
                   **options: Any) -> Tally:
    """:func:`simulate` under each RNG seed of ``seeds`` (``replays`` each), pooled: a rate that holds over several
    draws of the replays, not one; each seed's wrong counts kept (:attr:`Tally.wrong_by_seed`)."""
    tallies = []
    for seed in seeds:
        tally = simulate(meta, world, replays, seed=seed, **options)
        tally.wrong_by_seed = {seed: tally.wrong.copy()}
        tallies.append(tally)
    return functools.reduce(Tally.plus, tallies)


def simulate(meta: StudyRecord, world: World, replays: int, seed: int = 0, sd_scale: float = 1.0,
             noise: Callable[[CellTable], NoiseModel] | None = None,
             fact: Callable[[Verdict], bool] | None = None) -> Tally:
    """Replay ``meta``'s budget (adaptive or fixed) ``replays`` times on seeds drawn from ``world``; a finding counts
    wrong when its verdict is decided and differs from the true one, unless ``fact`` says it states a fact of the
    seeds run, no inference (counted apart). ``sd_scale`` < 1 understates the seed noise and ``noise`` replaces the
    noise model: the negative controls."""
    rng = np.random.default_rng(seed)
    truths = [v.status for v in true_verdicts(meta, world)]
    seeds = len(meta.seeds)
    zeros = np.zeros(len(truths), int)
    tally = Tally([f.description for f in meta.findings], truths, zeros.copy(), zeros.copy(),
                  facts=None if fact is None else zeros.copy())
    order = {tuple(row): i for i, row in enumerate(world.cells.iter_rows())}
    for _ in range(replays):
        values = world.draw(rng, seeds)

        def view(budget: Budget, values: np.ndarray = values) -> FindingData:
            given = np.zeros(len(order), dtype=np.int64)
            for row in budget.cells.iter_rows():
                given[order[tuple(row[:-1])]] = row[-1]
            return _data(meta, world, world.rows(values, given), seeds, sd_scale, noise)

        if meta.budget == "adaptive":
            outcome = run_budget(meta, world.cells, view)
            verdicts, given = outcome.verdicts(), outcome.budget.models() if outcome.budget else 0
        else:
            verdicts, given = first_seeds_verdicts(meta, world, values, seeds, sd_scale, noise), len(order) * seeds
        tally.models += given / (len(order) * seeds) / replays
        decided = np.array([v.status in DECIDED for v in verdicts])
        wrong = decided & np.array([v.status != t for v, t in zip(verdicts, truths, strict=True)])
        if fact is not None and tally.facts is not None:
            facts = decided & np.array([fact(v) for v in verdicts])
            tally.facts += facts
            wrong &= ~facts
        tally.decided += decided
        tally.wrong += wrong
        tally.per_replay.append(int(wrong.sum()))
        tally.replays += 1
    return tally


def first_seeds_verdicts(meta: StudyRecord, world: World, values: np.ndarray, seeds: int, sd_scale: float = 1.0,
                         noise: Callable[[CellTable], NoiseModel] | None = None) -> list[Verdict]:
    """The verdicts of ``meta`` (one look) on the first ``seeds`` of every cell's drawn ``values``."""
    given = np.full(world.cells.height, seeds)
    return evaluate_findings(meta, _data(meta, world, world.rows(values, given), len(meta.seeds), sd_scale, noise))


def _data(meta: StudyRecord, world: World, rows: pl.LazyFrame, seeds: int, sd_scale: float,
          noise: Callable[[CellTable], NoiseModel] | None) -> FindingData:
    """What the findings see of the rows (the project's statistics), the seed noise scaled by ``sd_scale`` (on a
    learning curve: each evaluation's seeds drawn towards their mean)."""
    stats = training_stats(rows, meta, report=False)
    cells, evaluations = stats.finding_cells(), stats.evaluations
    if sd_scale != 1.0:
        cells = {m: c.with_columns(pl.col("sd") * sd_scale, pl.col("gmd_var") * sd_scale**2) for m, c in cells.items()}
        if evaluations is not None:
            mean = pl.col(METRIC).mean().over(*world.keys, "step")
            evaluations = evaluations.with_columns(mean + sd_scale * (pl.col(METRIC) - mean))
    return FindingData(cells=cells, panel="architecture", select_metric=METRIC, max_seeds=seeds, noise=noise,
                       evaluations=evaluations)
