"""Calibration by simulation: studies whose truth is known, built from the authors' own cells, replayed many times
through the same rows, statistics, verdicts and budget as real studies (bench/calibration.py,
tests/test_budget_calibration.py).

**The world.** Every cell of a release file (all five seeds' learning curves of one configuration: cells whose seeds
all learn, all fail, and the mixed ones where some do and some do not) is a population: a replay's seed of that cell
is one of its five curves drawn at random (the bootstrap), plus the evaluation noise of a finite validation set
(binomial, each evaluation anew); the truth of a cell is the G of its whole population, the best over training of
the mean of its five curves. Each cell draws its seeds on its own: the release's seeds are correlated across
neighbouring cells (a seed that learns in one cell tends to in the next), which this world does not keep - the
holdout on the release's own seeds (:mod:`analysis.stats.holdout`) is the check that does. A seed of a replay is
rows in the results schema, and everything from there (G as the best over training of the seeds' mean, the seed
noise, the intervals, the budget's looks) is the project's own code.

**The findings.** Every statistic and relation, each at bounds set around its true value: on it, inside by 0.5 to 2
points and outside by as much (:func:`calibration_findings`), so that a PASS is wrong for half of them and a FAIL for
the others. A decided verdict is wrong when it differs from the verdict on the truth; each finding's wrong rate is
counted on its own, never pooled. The kinds issue 50 added (time axis, two-sided levels, worst seed against best):
:mod:`analysis.stats.calibration_time`.

**The negative controls** the calibration test must catch: seed noise understated three times (``sd_scale``), and
the noise model this project used before (:class:`LevelBinnedNoise`: a prior grouped by each cell's observed G, so
a cell whose first seeds happened to learn borrows the small noise of cells near 100%).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl
from scipy import special, stats

from analysis.data.reference import open_reference
from analysis.stats.budget import Budget, run_budget
from analysis.stats.finding_cells import VALUES
from analysis.stats.findings import FindingData, Verdict, evaluate_findings
from analysis.stats.seed_noise import NoiseModel
from analysis.stats.training_stats import training_stats
from analysis.stats.verdicts import DECIDED
from search_spaces import Finding
from search_spaces.record import StudyRecord

KEYS = ("architecture", "d_model", "learning_rate")
METRIC = "val_accuracy"
#: Validation examples behind one evaluation of the release's mode task (N = 256 sequences x 4 per batch).
EVALUATION_EXAMPLES = 1024
#: Offsets of a bound from the truth, in accuracy (a share: in cells): on it, and 0.5 and 2 points either side.
OFFSETS = (-0.02, -0.005, 0.0, 0.005, 0.02)
#: Where NON's seeds split (learning rates >= 0.09: of its 16 cells there, 11 have seeds that learn and seeds that do
#: not, five-seed sd 5 to 30 points): a best there rests on cells whose first seeds may all have learned, or none.
MIXED = {"learning_rate": {"min": 0.09}}


@dataclass(frozen=True)
class World:
    """Real cells as populations: per cell (``cells``) its seeds' curves (``curves``: cells x seeds x evaluations)."""

    cells: pl.DataFrame
    curves: np.ndarray
    steps: np.ndarray

    @classmethod
    def of_release(cls, name: str = "richter2020/mode__var_dim", architectures: Sequence[str] | None = None) -> World:
        """The cells of a shipped release file (``architectures``: a subset of its panel values)."""
        lf, _ = open_reference(name)
        if architectures:
            lf = lf.filter(pl.col("architecture").is_in(list(architectures)))
        rows = lf.select(*KEYS, "seed", "step", METRIC).collect().sort([*KEYS, "seed", "step"])
        cells = rows.select(KEYS).unique(maintain_order=True)
        seeds, steps = rows.get_column("seed").n_unique(), np.sort(rows.get_column("step").unique().to_numpy())
        curves = np.nan_to_num(rows.get_column(METRIC).to_numpy().reshape(cells.height, seeds, len(steps)), nan=0.0)
        return cls(cells, curves, steps)

    def truth(self, draws: int = 32) -> pl.DataFrame:
        """Per cell the population's G (the best over training of its curves' mean: the evaluation noise averages
        out), its best curve's best (``b``) and the mean absolute difference of two seeds' bests drawn from it
        (``gmd``, by simulation: ``draws`` noisy copies of each curve, since a seed's best over noisy evaluations is
        itself noisy): a cell table of infinitely many seeds (``sd`` 0)."""
        rng = np.random.default_rng(0)
        noisy = rng.binomial(EVALUATION_EXAMPLES, np.clip(np.repeat(self.curves, draws, axis=1), 0.0, 1.0))
        best = (noisy / EVALUATION_EXAMPLES).max(axis=2)
        gmd = np.abs(best[:, :, None] - best[:, None, :]).mean(axis=(1, 2))
        return self.cells.with_columns(g=pl.Series(self.curves.mean(axis=1).max(axis=1)), r=pl.lit(None, pl.Float64),
                                       b=pl.Series(self.curves.max(axis=(1, 2))), sd=pl.lit(0.0), gmd=pl.Series(gmd),
                                       gmd_var=pl.lit(0.0), n=pl.lit(10**9, pl.Int64))

    def draw(self, rng: np.random.Generator, seeds: int) -> np.ndarray:
        """One replay's seeds: cells x seeds x evaluations, each seed one of its cell's curves drawn at random (the
        bootstrap: the cell's five curves are its population) plus binomial evaluation noise."""
        cells, curves, _ = self.curves.shape
        chosen = rng.integers(0, curves, (cells, seeds))
        values = np.take_along_axis(self.curves, chosen[:, :, None], axis=1)
        noisy = rng.binomial(EVALUATION_EXAMPLES, np.clip(values, 0.0, 1.0)) / EVALUATION_EXAMPLES
        return noisy.astype(float)

    def rows(self, values: np.ndarray, given: np.ndarray) -> pl.LazyFrame:
        """The results rows of the first ``given[c]`` seeds of every cell ``c``."""
        given_mask = np.arange(values.shape[1])[None, :, None] < given[:, None, None]
        cell, seed, step = np.nonzero(np.broadcast_to(given_mask, values.shape))
        frame = self.cells.with_row_index("_cell")
        return pl.DataFrame({"_cell": cell.astype(np.uint32), "seed": seed, "step": self.steps[step],
                             METRIC: values[cell, seed, step]}).join(frame, on="_cell").with_columns(
            trial_key=pl.col("_cell").cast(pl.String), status=pl.lit("ok")).drop("_cell").lazy()


def study(findings: Sequence[Finding], world: World, budget: str = "fixed", seeds: int = 5) -> StudyRecord:
    """The record of a study of ``world``'s grid (architecture x d_model x learning rate) with ``findings``."""
    axes = {c: tuple(sorted(world.cells.get_column(c).unique().to_list())) for c in KEYS}
    return StudyRecord(name="calibration", goal="known truth", tasks=("mode",), metric=METRIC,
                       scientific={"architecture": axes["architecture"], "d_model": axes["d_model"]},
                       nuisance={"learning_rate": axes["learning_rate"]}, findings=tuple(findings),
                       seeds=tuple(range(seeds)), budget=budget)


def true_verdicts(meta: StudyRecord, world: World) -> list[Verdict]:
    """The verdicts on the truth (no seed noise: every bound decided exactly). A time-axis bound reads a cell's
    population mean curve (two seeds that agree exactly: an interval of width 0); ``worst_beats_best`` reads every
    seed at its cell's G (its truth the sign of the true lead, :mod:`analysis.stats.calibration_time`), 500 seeds a
    cell (their separation chance below any error; 10**9 overflows it)."""
    truth = world.truth()
    if any(f.worst_beats_best for f in meta.findings):
        truth = truth.with_columns(worst_seed=pl.col("g"), best_seed=pl.col("g"), n=pl.lit(500, pl.Int64))
    evaluations = None
    if any(f.timed() for f in meta.findings):
        mean = np.repeat(world.curves.mean(axis=1, keepdims=True), 2, axis=1)
        evaluations = world.rows(mean, np.full(world.cells.height, 2)).collect()
    data = FindingData(cells={METRIC: truth}, panel="architecture", select_metric=METRIC, max_seeds=10**9,
                       evaluations=evaluations)
    return evaluate_findings(meta.replace(budget="fixed"), data)


def calibration_findings(world: World, offsets: Sequence[float] = OFFSETS) -> list[Finding]:
    """Every statistic and relation at bounds around its true value on ``world`` (module docstring): NAP's best above,
    max's best below, NON's best above and below where its seeds split, BERT's share of cells at 90% or more, NON's
    mean and seed spread, NON ahead of NAP, NON level with NAP and not ahead of it. An offset > 0 puts the truth on
    the bound's true side, < 0 on its false side, 0 on the bound itself (a hair inside: the bounds are inclusive, the
    truth's float sums are not exact)."""
    truth = world.truth()

    def of(arch: str, expr: pl.Expr) -> float:
        return float(truth.filter(pl.col("architecture") == arch).select(expr).item())

    best = {a: of(a, pl.col("g").max()) for a in ("NAP", "max", "NON")}
    mixed = float(truth.filter(pl.col("architecture") == "NON", pl.col("learning_rate") >= 0.09 * (1 - 1e-6))
                  .get_column("g").max())
    cells = truth.filter(pl.col("architecture") == "BERT").height
    share = of("BERT", (pl.col("g") >= 0.9).mean())
    spread = of("NON", pl.col("gmd").filter(pl.col("g") >= 0.5).mean())
    lead = best["NON"] - best["NAP"]
    found = []
    for o in offsets:
        inside = o + 1e-9  # on the bound: a hair inside
        tag = f" (truth {'+' if o >= 0 else '-'}{abs(100 * o):g} pp inside)"
        found += [
            Finding(description=f"NAP's best{tag}", above={"NAP": best["NAP"] - inside}),
            Finding(description=f"max's best{tag}", below={"max": best["max"] + inside}),
            Finding(description=f"NON's best where seeds split{tag}", where=MIXED, above={"NON": mixed - inside}),
            Finding(description=f"NON's best where seeds split, at most{tag}", where=MIXED,
                    below={"NON": mixed + inside}),
            Finding(description=f"BERT's share{tag}", statistic="share", level=0.9,
                    above={"BERT": share - round(100 * o) / cells - 1e-9}),
            Finding(description=f"NON's mean{tag}", statistic="mean",
                    above={"NON": of("NON", pl.col("g").mean()) - inside}),
            Finding(description=f"NON's spread{tag}", statistic="spread", level=0.5, above={"NON": spread - inside}),
            Finding(description=f"NON ahead of NAP{tag}", ahead={"NON": ("NAP",)}, margin=lead - inside),
            Finding(description=f"NON level with NAP{tag}", level_with={"NON": ("NAP",)},
                    equivalence_margin=max(abs(lead) + inside, 0.0)),
            Finding(description=f"NON not ahead of NAP{tag}", not_ahead={"NON": ("NAP",)},
                    equivalence_margin=max(lead + inside, 0.0)),
        ]
    return found


@dataclass
class Tally:
    """Per finding over the replays: decided verdicts, the wrong ones; the models the budget gave."""

    findings: list[str]
    truths: list[str]
    decided: np.ndarray
    wrong: np.ndarray
    replays: int = 0
    models: float = 0.0  # mean share of all models
    per_replay: list[int] = field(default_factory=list)  # wrong decided verdicts of each replay
    facts: np.ndarray | None = None  # per finding: decided verdicts that state a fact of the seeds run (``simulate``)

    def rates(self) -> pl.DataFrame:
        """Per finding: its true verdict, the share of replays it was decided and decided wrong (and, where counted,
        decided on a fact of the seeds run: never wrong)."""
        rates = pl.DataFrame({"finding": self.findings, "truth": self.truths, "decided": self.decided / self.replays,
                              "wrong": self.wrong / self.replays})
        return rates if self.facts is None else rates.with_columns(fact=pl.Series(self.facts / self.replays))


def simulate(meta: StudyRecord, world: World, replays: int, seed: int = 0, sd_scale: float = 1.0,
             noise: Callable[[pl.DataFrame], NoiseModel] | None = None,
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
            return _data(meta, world.rows(values, given), seeds, sd_scale, noise)

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
                         noise: Callable[[pl.DataFrame], NoiseModel] | None = None) -> list[Verdict]:
    """The verdicts of ``meta`` (one look) on the first ``seeds`` of every cell's drawn ``values``."""
    given = np.full(world.cells.height, seeds)
    return evaluate_findings(meta, _data(meta, world.rows(values, given), len(meta.seeds), sd_scale, noise))


def _data(meta: StudyRecord, rows: pl.LazyFrame, seeds: int, sd_scale: float,
          noise: Callable[[pl.DataFrame], NoiseModel] | None) -> FindingData:
    """What the findings see of the rows (the project's statistics), the seed noise scaled by ``sd_scale`` (on a
    learning curve: each evaluation's seeds drawn towards their mean)."""
    stats = training_stats(rows, meta)
    cells, evaluations = stats.finding_cells(), stats.evaluations
    if sd_scale != 1.0:
        cells = {m: c.with_columns(pl.col("sd") * sd_scale, pl.col("gmd_var") * sd_scale**2) for m, c in cells.items()}
        if evaluations is not None:
            mean = pl.col(METRIC).mean().over(*KEYS, "step")
            evaluations = evaluations.with_columns(mean + sd_scale * (pl.col(METRIC) - mean))
    return FindingData(cells=cells, panel="architecture", select_metric=METRIC, max_seeds=seeds, noise=noise,
                       evaluations=evaluations)


@dataclass(frozen=True)
class LevelBinnedNoise(NoiseModel):
    """The seed-noise model of this project before issue 48, kept as the calibration's negative control: a limma-trend
    prior grouped by each cell's *observed* G (bins of at least 40 cells; each bin's variance the mean of its cells' log
    variances, corrected for their degrees of freedom; one prior df from their interquartile range). A cell whose
    first seeds happened to learn borrows the small noise of the cells near 100%."""

    bins: tuple[tuple[float, ...], tuple[float, ...], float] = ((), (), 0.0)

    @classmethod
    def fit(cls, table: pl.DataFrame) -> LevelBinnedNoise:
        run = table.filter(pl.col("n") >= 2)
        g, sd, n = (run.get_column(c).cast(pl.Float64).fill_null(0.0).to_numpy() for c in ("g", "sd", "n"))
        positive = sd[sd > 0]
        keys = tuple(c for c in table.columns if c not in VALUES)
        if positive.size == 0:
            return cls(keys)
        d, sd = n - 1.0, np.maximum(sd, positive.min() / 2)
        edges, order = [], np.sort(g)
        for cut in range(40, len(order) - 39, 40):
            edges.append(float((order[cut - 1] + order[cut]) / 2))
        index = np.searchsorted(edges, g, side="right")
        e = np.log(sd**2) - special.digamma(d / 2) + np.log(d / 2)
        levels = np.array([e[index == b].mean() if (index == b).any() else e.mean() for b in range(len(edges) + 1)])
        spread = np.subtract(*np.quantile(e - levels[index], [0.75, 0.25]))
        typical = float(np.median(d))
        ratio = spread / math.log(stats.chi2.ppf(0.75, typical) / stats.chi2.ppf(0.25, typical))
        excess = float(special.polygamma(1, typical / 2)) * (ratio**2 - 1.0)
        df = 1000.0 if excess <= 0 else min(2.0 / excess + 0.5, 1000.0)  # trigamma^-1 to first order
        return cls(keys, None, float(np.median(positive) ** 2),
                   bins=(tuple(edges), tuple(float(np.exp(x)) for x in levels), df))

    @property
    def measured(self) -> bool:
        return bool(self.bins[1])

    def standard_errors(self, cells: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        n = cells.get_column("n").to_numpy().astype(float)
        sd = cells.get_column("sd").cast(pl.Float64).fill_null(0.0).to_numpy()
        d = np.maximum(n - 1.0, 0.0)
        if not self.measured:
            return np.where(n >= 2, sd / np.sqrt(np.maximum(n, 1.0)), np.inf), np.maximum(d, 1.0)
        edges, variances, df = self.bins
        g = np.nan_to_num(cells.get_column("g").cast(pl.Float64).to_numpy(), nan=-np.inf)
        prior = np.asarray(variances)[np.searchsorted(edges, g, side="right")]
        var = np.maximum((df * prior + d * sd**2) / (df + d), sd**2)
        return np.where(n >= 2, np.sqrt(var / np.maximum(n, 1.0)), np.inf), df + d
