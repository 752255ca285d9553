"""``worst_beats_best``: the NAP paper's own criterion of a significant difference - A's worst seed beats B's best
seed, each at its panel value's best cell - read as a statistical claim."""

from __future__ import annotations

import itertools
import math
import zlib
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from analysis.stats.kinds.base import KINDS, Check, Kind, Reading, Relation, State, check_state
from analysis.stats.kinds.comparison import lead_text, sides
from analysis.stats.kinds.text import percent_text, point_text, unit
from analysis.stats.metric import lower_is_better
from analysis.stats.table import CellTable, Column, Floats
from search_spaces.finding import Finding

#: Random relabelings of the seeds behind a separation's chance (:func:`separation_chance`): its smallest value is
#: 1 / (PERMUTATIONS + 1) = 0.0002, below the error any bound of the project's findings is read at.
PERMUTATIONS = 4999
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Pooled:
    """Two panel values' cells for a permutation: per cell (a row) the seeds' values of both sides pooled, A's first
    (``values``, NaN-padded; a loss negated, so that higher is better), and how many of them are A's and B's. Cells
    of the same configuration (every key but the panel column) are one row; a cell only one side has is a row of its
    own whose seeds stay on that side."""

    values: Floats
    n_a: Ints
    n_b: Ints

    @property
    def mine(self) -> npt.NDArray[np.bool_]:
        """Per cell and slot of :attr:`values`: whether the slot is one of A's seeds (its first ``n_a``)."""
        return np.arange(self.values.shape[-1])[None, :] < self.n_a[:, None]

    @property
    def theirs(self) -> npt.NDArray[np.bool_]:
        """Per cell and slot of :attr:`values`: whether the slot is one of B's seeds (the ``n_b`` after A's)."""
        slot = np.arange(self.values.shape[-1])[None, :]
        return (slot >= self.n_a[:, None]) & (slot < (self.n_a + self.n_b)[:, None])

    def means(self, values: Floats) -> tuple[Floats, Floats]:
        """Per leading index of ``values`` (..., cells, seeds: a relabeling of :attr:`values`) and cell: the mean of
        A's seeds and of B's (-inf where a side has none)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return (np.where(self.n_a > 0, _sums(np.where(self.mine, values, 0.0)) / self.n_a, -np.inf),
                    np.where(self.n_b > 0, _sums(np.where(self.theirs, values, 0.0)) / self.n_b, -np.inf))

    def separation(self, values: Floats) -> Floats:
        """Per leading index of ``values`` (..., cells, seeds: a relabeling of :attr:`values`): A's worst seed minus
        B's best seed, each at the side's cell of the best mean of its seeds (-inf where a side has no cell)."""
        mean_a, mean_b = self.means(values)
        separation: Floats = _at_best(values, self.mine, mean_a, True) - _at_best(values, self.theirs, mean_b, False)
        return separation


def _sums(values: Floats) -> Floats:
    """Per leading index of ``values`` the sum along its last axis. Numpy's sum adds fewer than eight terms one after
    the other, so adding the seed slots in turn gives the same sums, bit for bit, at a fraction of the cost of its
    reduction over thousands of short rows; longer rows it sums pairwise, so they are left to it."""
    if values.shape[-1] >= 8:
        return np.asarray(values.sum(-1))
    total = values[..., 0].copy()
    for slot in range(1, values.shape[-1]):
        total += values[..., slot]
    return total


def _extreme(values: Floats, side: npt.NDArray[np.bool_], worst: bool) -> Floats:
    """Per leading index of ``values`` (..., seeds): the worst (else the best) of ``side``'s seeds."""
    return np.asarray(np.where(side, values, np.inf).min(-1) if worst else np.where(side, values, -np.inf).max(-1))


def _at_best(values: Floats, side: npt.NDArray[np.bool_], means: Floats, worst: bool) -> Floats:
    """Per leading index of ``values`` (..., cells, seeds): the worst (else the best) of ``side``'s seeds at the cell
    of the best mean. Only that cell's seeds are read: a min over every cell's seeds cost a replay more than the rest
    of the relabelings."""
    cell = means.argmax(-1)
    return _extreme(np.take_along_axis(values, cell[..., None, None], -2)[..., 0, :], side[cell], worst)


#: Cells of at most this many seeds (both sides) are relabeled through a table of every order of their seeds
#: (:class:`Orders`: 6! = 720 orders a cell); wider ones are sorted
TABLED = 6


@dataclass(frozen=True)
class Orders:
    """Per cell and order of its seeds (a stable sort of random keys can give any), the sides' means and A's worst
    and B's best seed (flat: a row per cell, a column per order), so that a relabeling is read, not computed: its
    order of each cell's seeds is found by comparing its keys (the order's Lehmer code) instead of sorting thousands
    of short rows. The same numbers bit for bit: each is read from the same values in the same order."""

    mean_a: Floats
    worst_a: Floats
    mean_b: Floats
    best_b: Floats
    width: int

    @classmethod
    def of(cls, pool: Pooled) -> Orders:
        cells, width = pool.values.shape
        ranks = np.array(list(itertools.permutations(range(width))))  # each slot's rank, in Lehmer code order
        seeds = pool.values[np.arange(cells)[None, :, None], np.argsort(ranks, axis=-1)[:, None, :]]  # (orders, cells)
        mean_a, mean_b = pool.means(seeds)
        worst_a, best_b = _extreme(seeds, pool.mine, True), _extreme(seeds, pool.theirs, False)

        def flat(table: Floats) -> Floats:
            return np.ascontiguousarray(table.T).reshape(-1)

        return cls(flat(mean_a), flat(worst_a), flat(mean_b), flat(best_b), width)

    def separation(self, keys: Floats) -> Floats:
        """:meth:`Pooled.separation` of the relabelings whose random ``keys`` (..., cells, seeds) order each cell's
        seeds (a stable sort: a seed's rank counts the keys below it and the equal ones in slots before it)."""
        code = np.zeros(keys.shape[:-1], dtype=np.int16)  # at most 6! - 1
        for i in range(self.width - 1):  # a slot's Lehmer digit: the later slots whose keys are below its key
            weight = np.int16(math.factorial(self.width - 1 - i))
            for j in range(i + 1, self.width):
                code += (keys[..., j] < keys[..., i]) * weight
        at = code + np.arange(0, self.mean_a.size, math.factorial(self.width))  # each cell's row of the table

        def at_best(means: Floats, seeds: Floats) -> Floats:
            return np.take_along_axis(seeds[at], means[at].argmax(-1)[..., None], -1)[..., 0]

        separation: Floats = at_best(self.mean_a, self.worst_a) - at_best(self.mean_b, self.best_b)
        return separation


def pooled(a: CellTable, b: CellTable, panel: str, lower: bool) -> Pooled | None:
    """The seeds of ``a``'s and ``b``'s run cells as :class:`Pooled` (None: a cell has no per-seed values)."""
    keys = [k for k in a.keys if k != panel]
    sides = []
    for table in (a, b):
        run = table.run()
        per_cell = run.seed_values()
        if not per_cell or any(v is None for v in per_cell):
            return None
        sides.append({row: -v if lower else v
                      for row, v in zip(run.frame.select(keys).rows(), per_cell, strict=True) if v is not None})
    mine, theirs = sides
    rows = list(mine) + [row for row in theirs if row not in mine]
    empty = np.empty(0)
    pairs = [(mine.get(row, empty), theirs.get(row, empty)) for row in rows]
    n_a = np.array([len(x) for x, _ in pairs], dtype=np.int64)
    n_b = np.array([len(y) for _, y in pairs], dtype=np.int64)
    values = np.full((len(rows), int((n_a + n_b).max())), np.nan)
    for i, (x, y) in enumerate(pairs):
        values[i, :len(x) + len(y)] = np.concatenate([x, y])
    return Pooled(values, n_a, n_b)


def separation_chance(pool: Pooled, rng: np.random.Generator, permutations: int = PERMUTATIONS) -> float:
    """The chance that A's worst seed beats B's best seed, each at its best cell, by at least as much as it does, if
    the two panel values did not differ - A and B's seeds exchangeable within each configuration: the Monte Carlo
    permutation p-value ``(1 + k) / (1 + permutations)`` (``k`` of the relabelings separate as far; exact for any
    number of relabelings, Phipson & Smyth 2010). Each relabeling shuffles every configuration's pooled seeds between
    the two sides and picks each side's best cell again, so the chance counts what picking the best of many cells
    does to it: on the release's Fig. 16 cells (10 configurations, five seeds a side) relabeled seeds separate at
    their best cells at all 0.4-1.7% of the time, not the 1/252 of two fixed cells; in a world of pure seed noise
    less often than at one fixed cell (each side's pick favours its high seeds, B's best seed too)."""
    observed = float(pool.separation(pool.values)[()])
    valid = ~np.isnan(pool.values)
    every = bool(valid.all())  # no padding: the random keys order the seeds as they are
    orders = Orders.of(pool) if pool.values.shape[-1] <= TABLED else None
    beyond = 0
    for start in range(0, permutations, 1000):  # chunks: at most 1,000 relabelings in memory at once
        count = min(1000, permutations - start)
        keys = rng.random((count, *pool.values.shape))
        keys = keys if every else np.where(valid, keys, np.inf)  # padding last
        if orders is not None:
            separation = orders.separation(keys)
        else:  # stable: ties (padding's inf keys) keep their slots' order; quicker than the default on short rows
            order = np.argsort(keys, axis=-1, kind="stable")
            separation = pool.separation(np.take_along_axis(np.broadcast_to(pool.values, order.shape), order, -1))
        beyond += int(np.count_nonzero(separation >= observed - 1e-12))
    return (1 + beyond) / (1 + permutations)


def fixed_cells_chance(n_a: int, n_b: int) -> float:
    """The chance that every one of ``n_a`` seeds lands above every one of ``n_b`` seeds of one fixed cell a side when
    the two do not differ (the seeds exchangeable): ``1 / C(n_a + n_b, n_a)`` - 1/6 at two seeds a side, 1/20 at
    three, 1/252 at five; the exact one-sided p-value of a Mann-Whitney test with no overlap."""
    return 1.0 / math.comb(n_a + n_b, n_a) if n_a >= 1 and n_b >= 1 else 1.0


def extreme_seeds(cells: CellTable, metric: str) -> tuple[float | None, float | None, int]:
    """The worst and the best seed (each seed's best over training) of the cell with the best G of ``cells``, and its
    seeds (None where the data has no per-seed values: a combination of columns, published means)."""
    run = cells.run()
    if run.is_empty():
        return None, None, 0
    lower = lower_is_better(metric)
    g = run.values(Column.G)
    values = run.seed_values()[int(np.argmin(g) if lower else np.argmax(g))]
    if values is None or not len(values):
        return None, None, 0
    worst, best = (values.max(), values.min()) if lower else (values.min(), values.max())
    finite = [None if not math.isfinite(v) else float(v) for v in (worst, best)]
    return finite[0], finite[1], len(values)


def _chance_text(chance: float) -> str:
    """``0.02%``: a chance in percent, at its precision."""
    return f"{100 * chance:.2g}%"


def _stream(*parts: object) -> np.random.Generator:
    """A random stream of its own per bound and data: the same verdict on the same data, every time."""
    return np.random.default_rng(zlib.crc32(repr(parts).encode()))


@KINDS.register("worst_beats_best")
@dataclass(frozen=True)
class WorstBeatsBest(Kind):
    """A's worst seed beats B's best seed (each at its panel value's best cell; a loss: A's highest below B's lowest).

    The paper's own criterion of a significant difference, and it decides alone: it **holds** when A's worst seed
    beats B's best seed at the cells of the best G (the sentence, on the runs) and the chance that seeds of no real
    difference separate as far is at most the end's error (:attr:`Reading.errors`' share for the cell's seeds): the
    larger of a permutation test that repeats the picking of each side's best cell (:func:`separation_chance`) and
    the chance at one fixed cell a side (:func:`fixed_cells_chance`). The permutation's null - A's and B's seeds
    exchangeable at every configuration - is stronger than "A's best is no better than B's": two grids that differ
    elsewhere but tie at their best relabel into mixtures that separate less often than the two best cells do, so on
    two seeds a side it alone was wrong 5-10% on an exact tie (bench/calibration_time.py); the fixed cells' chance
    (1/6 there) keeps two seeds from deciding.
    The lead of A's G over B's is shown beside it (as ``ahead``'s, each side at half the error), not required. It
    **fails** when that lead's upper end is at most zero (A not better, at the finding's confidence), or when both
    cells have every seed the study runs and they overlap (the criterion read on all the runs: a fact of those seeds,
    no inference, so it carries no error bound of its own). Else undecided, and so while a cell of either side has not
    run (it may be that side's best)."""

    name: ClassVar[str] = "worst_beats_best"
    panel_value: str
    versus: str

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        return [cls(a, b) for a, bs in finding.worst_beats_best.items() for b in bs]

    @property
    def compared_with(self) -> str:
        return self.versus

    @property
    def relation(self) -> Relation:
        return "worst_beats_best"

    def ends(self) -> int:
        return 1

    def judge(self, reading: Reading) -> Check:
        a, b, percent, metric = self.panel_value, self.versus, reading.percent, reading.metric
        two = sides(reading, a, b)
        lead = two.lead

        def made(state: State, detail: str,
                 because: str = "the seeds do not separate at every seed the study runs yet") -> Check:
            return Check(self, lead, state, bound=0.0, mine=two.mine, subject=two.subject,
                         against=two.versus_subject, percent=percent, detail=detail, open_because=because)

        if two.empty:
            return made(State.FAILS, f"no cell to compare with {b}")
        cells_a, cells_b = reading.cells(a, reading.finding.where), reading.cells(b, reading.versus_region)
        worst, _, n_a = extreme_seeds(cells_a, metric)
        _, best, n_b = extreme_seeds(cells_b, metric)
        shown = lead_text(lead, percent)
        shown = f"; lead of G {shown}" if shown else ""
        lead_high = -lead.low if lower_is_better(metric) else lead.high
        if worst is None or best is None or cells_a.run().height < cells_a.height or \
                cells_b.run().height < cells_b.height:
            state = State.FAILS if lead.value is not None and lead_high <= 0 else State.UNDECIDED
            detail = (f"worst seed against the best seed of {two.versus_subject}: a cell not run yet (it may be the "
                      f"best), or the data has no per-seed values for this metric{shown}")
            return made(state, detail, "no per-seed values, or a cell not run yet")
        lower = lower_is_better(metric)
        separation = (-1.0 if lower else 1.0) * (worst - best)
        overlap_at_all_seeds = n_a >= reading.max_seeds and n_b >= reading.max_seeds and separation <= 0
        errors = reading.errors
        allowed = errors.low * float(errors.share(np.array([min(n_a, n_b)], dtype=float))[0])  # adaptive share
        pool = pooled(cells_a, cells_b, reading.panel, lower) if separation > 0 else None
        chance = max(separation_chance(pool, _stream(a, b, metric, sorted(reading.finding.where.items()))),
                     fixed_cells_chance(n_a, n_b)) if pool is not None else 1.0
        holds = separation > 0 and chance <= allowed
        fails = lead_high <= 0 or overlap_at_all_seeds
        chance_text = (f"chance of a separation as far at each side's best cell without a difference "
                       f"{_chance_text(chance)} ({PERMUTATIONS:,} relabelings of the seeds of {len(pool.n_a)} "
                       f"configurations, at least 1/{math.comb(n_a + n_b, n_a)} of one cell a side; allowed "
                       f"{100 * allowed:.2g}%)") if pool is not None else "the seeds overlap"
        detail = (f"worst seed {percent_text(worst, percent)} ({n_a} seeds) against the best seed of "
                  f"{two.versus_subject} {percent_text(best, percent)} ({n_b} seeds): separation "
                  f"{point_text(separation, percent)}{unit(percent)}, {chance_text}{shown}")
        because = "the seeds separate, but not beyond the chance of seeds of no difference" if separation > 0 else \
            "the seeds overlap, and the study's further seeds may separate them"
        return made(check_state(holds, fails), detail, because)

    def text(self, check: Check) -> str:
        return f"{check.subject or self.panel_value}: {check.detail}: {check.state}"
