"""``faster_than`` read per seed (a finding's ``per_seed``): A's seeds typically reach ``level`` more than
``time_margin`` earlier than B's seeds.

"DPA needs substantially longer to converge than EA" is a sentence about how long a model typically takes, a
property of its seeds' convergence times: the seed mean's curve can contradict it, one slow seed holding the mean
below the level long after every other seed reached it. Read per seed, each seed has one number, the first evaluation
at which its own curve reaches ``level`` (a loss: falls to it; ``never``: it does not by its last evaluation), and the
bound compares the two sides' seeds with an exact two-sample rank test (Wilcoxon-Mann-Whitney, by permutation):

* **the shift**: A's times plus the margin ``d`` against B's times. "No difference beyond the margin" is A's times
  plus ``d`` distributed as B's; then the pooled shifted times are exchangeable, and the sum of A's ranks among them
  has the distribution of the sum of a random draw of n_A of the pooled ranks, counted exactly
  (:func:`rank_sum_chances`: every subset, by a subset-sum count; no Monte Carlo). Ties, common on a grid of
  evaluations, take their mid-rank and are counted as they fall (the test is conditional on the pooled values).
* **censoring** (a seed that never reaches the level): every time is censored at the last evaluation every seed has
  (``last``): a time after it, shifted A times included, is ``never``, and every ``never`` ties with every other. A
  and B are censored at the same point, so under the null the censored times are still exchangeable and the test
  stays exact (an A seed that reaches the level only in the last ``d`` evaluations counts as ``never`` once shifted:
  it cannot be shown more than ``d`` earlier than a seed that never reaches it).
* **holds** when the chance of A's ranks this low (A's seeds this early by the margin) under "no difference beyond
  the margin" is at most the error the bound has for it, **fails** when the chance of A's ranks this high under
  "A earlier by exactly the margin" is at most the same error (A not earlier by more than the margin, shown as
  strongly), else undecided. Both tests are valid for the composite hypotheses too (the rank sum is monotone in a
  shift of either side).
* **shown**: each side's median first time, and the shift - how much earlier A's seeds are - as the Hodges-Lehmann
  estimate (the median of the pairwise differences of B's and A's censored times, pairs of two ``never`` left out)
  with its interval by inverting the two tests over every shift (:func:`shift_interval`; each end at the bound's
  error): the bound holds exactly where the interval's lower end lies beyond the margin.

The cells: each side's best cell in its region, picked as the mean-curve ``faster_than`` picks it - every cell that may
have the truly best G (:func:`analysis.stats.intervals.statistics.plausible_best`). A side of several cells pays for
the picking: each is found at an eighth of each end's error, leaving the truly best out at most a quarter of the error
of the bound, and the test gets what is left (a side of one cell pays nothing, so one cell a side tests at the whole
error); the bound holds when it holds on every pair of picked cells and fails when it fails on every pair. An adaptive
budget's share for the pair's fewer seeds scales the error as for ``worst_beats_best``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from analysis.stats.intervals.estimate import Estimate
from analysis.stats.intervals.statistics import plausible_best
from analysis.stats.kinds.base import Check, Kind, Reading, State, check_state
from analysis.stats.kinds.per_seed import first_at_or_past, seed_curves
from analysis.stats.kinds.time_axis import cell_words, reaching, when
from analysis.stats.metric import lower_is_better
from analysis.stats.table import CellTable, Column, Floats

#: The share of each end's error a side of several cells spends on finding its cells that may be the best
#: (plausible_best at this factor leaves the truly best out at most twice it: a quarter of the bound's error).
PICKING = 0.125


def censored(times: Floats, shift: float, last: float) -> Floats:
    """``times`` plus ``shift``, every one after ``last`` (and every ``never``) as ``never`` (inf)."""
    moved = np.asarray(times, dtype=np.float64) + shift
    out: Floats = np.where(moved > last, np.inf, moved)
    return out


def rank_sum_chances(a: Floats, b: Floats) -> tuple[float, float]:
    """The exact permutation chances that the sum of ``a``'s mid-ranks among the pooled values is at most and at least
    what it is, were the pooled values exchangeable (any ``a`` of them as likely as any other): counted over every
    subset of ``len(a)`` of the pooled ranks (mid-ranks doubled to whole numbers; a subset-sum count)."""
    n = len(a)
    if n == 0 or len(b) == 0:
        return 1.0, 1.0
    pooled = np.concatenate([a, b])
    scores = np.rint(2 * stats.rankdata(pooled)).astype(np.int64)  # inf ties with inf: one mid-rank
    observed = int(scores[:n].sum())
    top = int(np.sort(scores)[-n:].sum())
    counts = np.zeros((n + 1, top + 1))
    counts[0, 0] = 1.0
    for s in scores:  # counts[k, t]: subsets of k of the scores so far summing to t
        counts[1:, s:] = counts[1:, s:] + counts[:-1, :top + 1 - s]
    ways = counts[n]
    total = ways.sum()
    return float(ways[:observed + 1].sum() / total), float(ways[observed:].sum() / total)


def chances(a: Floats, b: Floats, margin: float, last: float) -> tuple[float, float]:
    """(the chance of ``a``'s seeds this far ahead of ``b``'s if A were earlier by exactly ``margin``: small when A is
    earlier by more; the chance of them this far behind: small when A is not): :func:`rank_sum_chances` of A's times
    plus ``margin`` against B's, both censored at ``last``."""
    return rank_sum_chances(censored(a, margin, last), censored(b, 0.0, last))


def hodges_lehmann(a: Floats, b: Floats, last: float) -> float | None:
    """How much earlier A's seeds reach the level than B's: the median of B's time minus A's over every pair, both
    censored at ``last`` (never minus a time: +inf; a time minus never: -inf; two nevers left out). None: no pair."""
    x, y = censored(a, 0.0, last), censored(b, 0.0, last)
    pairs = [(yj, xi) for xi in x for yj in y if math.isfinite(xi) or math.isfinite(yj)]
    if not pairs:
        return None
    differences = np.array([yj - xi for yj, xi in pairs])
    differences.sort()
    k = len(differences)
    middle = differences[(k - 1) // 2], differences[k // 2]
    if not all(math.isfinite(m) for m in middle):
        return float(middle[0]) if middle[0] == middle[1] else (math.inf if middle[1] == math.inf and
                                                                  middle[0] > -math.inf else None)
    return float((middle[0] + middle[1]) / 2)


def shift_interval(a: Floats, b: Floats, last: float, error: float) -> tuple[float, float]:
    """The shifts d by which A's seeds may be earlier than B's: from the largest d at which "earlier by more than d"
    still holds at ``error`` (-inf: at none) to the smallest at which it fails (+inf: at none). The chances change
    only where a shifted A time meets a B time or the censoring point, so each test is read at those shifts and
    between them."""
    x, y = censored(a, 0.0, last), censored(b, 0.0, last)
    fx, fy = x[np.isfinite(x)], y[np.isfinite(y)]
    breaks = [float(d) for d in np.unique(np.concatenate([(fy[None, :] - fx[:, None]).ravel(), last - fx]))]
    if not breaks:
        return -math.inf, math.inf
    # (the shift read, the stretch of shifts it stands for): before the first break, each break, between two breaks
    edges = [-math.inf, *breaks, math.inf]
    stretches = [(breaks[0] - 1.0, -math.inf, breaks[0])]
    for i, d in enumerate(breaks):
        after = edges[i + 2]
        stretches += [(d, d, d), ((d + after) / 2 if math.isfinite(after) else d + 1.0, d, after)]
    read = [(chances(a, b, d, last), left, right) for d, left, right in stretches]
    held = [right for (ahead, _), _, right in read if ahead <= error]
    failed = [left for (_, behind), left, _ in read if behind <= error]
    return (max(held) if held else -math.inf), (min(failed) if failed else math.inf)


@dataclass(frozen=True)
class SeedTimes:
    """One cell's seeds' first times at the level (inf: never), each seed's last evaluation, and the cell in words."""

    times: Floats
    lasts: Floats
    where: str

    @property
    def median(self) -> float:
        return float(np.median(self.times)) if self.times.size else math.inf


def seed_times(cell: CellTable, reading: Reading) -> SeedTimes:
    """Per seed of ``cell`` (in seed order) the first evaluation its own curve reaches the finding's level."""
    level, loss = reading.finding.level, lower_is_better(reading.metric)
    curves = seed_curves(cell, reading)
    return SeedTimes(np.array([first_at_or_past(t, v, level, loss) for t, v in curves]),
                     np.array([float(t.max()) for t, _ in curves]), cell_words(cell, reading.panel))


def _picked(cells: CellTable, reading: Reading) -> tuple[list[CellTable], float]:
    """The cells of one side that may be the best (the observed best first) and the share of the error spent on
    finding them (none for one cell)."""
    run = cells.run()
    if run.height <= 1:
        return [run.cell(i) for i in range(run.height)], 0.0
    picked = plausible_best(run, reading.metric, reading.noise, reading.errors.scaled(PICKING))
    picked = picked.replace(picked.frame.sort(Column.G, descending=not lower_is_better(reading.metric)))
    return [picked.cell(i) for i in range(picked.height)], 2 * PICKING


@dataclass(frozen=True)
class PairReading:
    """The test on one pair of cells: the chances, the error allowed, the state."""

    mine: SeedTimes
    theirs: SeedTimes
    last: float
    ahead: float
    behind: float
    allowed: float

    @property
    def state(self) -> State:
        return check_state(self.ahead <= self.allowed, self.behind <= self.allowed)


def faster_per_seed(kind: Kind, versus: str, margin: float, reading: Reading) -> Check:
    """``kind`` (faster_than: ``kind.panel_value`` more than ``margin`` earlier than ``versus``) read per seed (module
    docstring)."""
    f = reading.finding
    sides = (reading.cells(kind.panel_value, f.where), reading.cells(versus, reading.versus_region))
    for value, cells in zip((kind.panel_value, versus), sides, strict=True):
        if cells.is_empty():
            return _check(kind, reading, State.FAILS, f"per seed: no cell of {value}")
    if any(cells.run().height < cells.height for cells in sides):
        return _check(kind, reading, State.UNDECIDED, "per seed: a cell not run yet (it may be the best)")
    (mine, spent_a), (theirs, spent_b) = (_picked(cells, reading) for cells in sides)
    share = 1.0 - spent_a - spent_b
    pairs = []
    for a in mine:
        times_a = seed_times(a, reading)
        for b in theirs:
            times_b = seed_times(b, reading)
            if not times_a.times.size or not times_b.times.size:
                return _check(kind, reading, State.UNDECIDED, "per seed: a cell without evaluations")
            last = float(min(times_a.lasts.min(), times_b.lasts.min()))
            fewer = min(times_a.times.size, times_b.times.size)
            allowed = reading.errors.low * share * float(reading.errors.share(np.array([fewer], dtype=float))[0])
            ahead, behind = chances(times_a.times, times_b.times, margin, last)
            pairs.append(PairReading(times_a, times_b, last, ahead, behind, allowed))
    states = {p.state for p in pairs}
    state = states.pop() if len(states) == 1 else State.UNDECIDED
    p = pairs[0]  # the observed best cells' pair is shown
    shift = hodges_lehmann(p.mine.times, p.theirs.times, p.last)
    low, high = shift_interval(p.mine.times, p.theirs.times, p.last, p.allowed)
    estimate = Estimate(None if shift is None or math.isinf(shift) else -shift, -high, -low,
                        seeds=(min(p.mine.times.size, p.theirs.times.size),
                               max(p.mine.times.size, p.theirs.times.size)), cells=2 * len(pairs))
    detail = _detail(kind, versus, margin, reading, pairs, shift, (low, high))
    return _check(kind, reading, state, detail, estimate)


def _detail(kind: Kind, versus: str, margin: float, reading: Reading, pairs: list[PairReading], shift: float | None,
            interval: tuple[float, float]) -> str:
    """The words: per side the seeds' median first time, the shift with its interval, the chances and the error."""
    f, p = reading.finding, pairs[0]
    low, high = interval

    def amount(d: float | None) -> str:
        return "?" if d is None else f"{d:+g}"

    def side(name: str, times: SeedTimes) -> str:
        never = int(np.isinf(censored(times.times, 0.0, p.last)).sum())
        return f"{name}'s median {when(times.median, f.time)} ({times.times.size} seeds" + \
            (f", {never} never" if never else "") + (f"; at {times.where}" if times.where else "") + ")"

    required = f"more than {margin:g} {f.time}s earlier" if margin else "earlier"
    cells = f"; {len(pairs)} pairs of cells that may be the best, each must agree" if len(pairs) > 1 else ""
    return (f"per seed, {reaching(reading)}: {side(kind.panel_value, p.mine)} against "
            f"{side(versus, p.theirs)}; {kind.panel_value} earlier by {amount(shift)} {f.time}s "
            f"[{amount(low)}, {amount(high)}] "
            f"(Hodges-Lehmann, seeds' times censored at {when(p.last, f.time)}), required {required}: chance "
            f"{_percent(p.ahead)} of seeds this far ahead without a difference beyond the margin, "
            f"{_percent(p.behind)} this far behind with one (exact rank-sum test), allowed {_percent(p.allowed)}"
            f"{cells}")


def _percent(chance: float) -> str:
    """``0.4%``, ``100%``: a chance in percent, at its precision."""
    return "100%" if chance >= 0.9995 else f"{100 * chance:.2g}%"


def _check(kind: Kind, reading: Reading, state: State, detail: str, estimate: Estimate | None = None) -> Check:
    """The check: its number A's first time minus B's in the time unit (the negated shift: negative when A's seeds
    are earlier, as the mean-curve reading's), with the negated shift interval (None: no pair read)."""
    return Check(kind, estimate or Estimate(None, -math.inf, math.inf), state, bound=0.0, percent=reading.percent,
                 detail=detail, open_because="the seeds' first times do not tell a shift beyond the margin from none "
                                             "at the bound's error (or a cell not run yet)")
