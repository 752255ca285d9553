"""A sentence about the seeds, read per seed (the finding's ``seeds_show``: m).

"Note that all 5 random seeds follow this pattern" says something of every seed's own curve, which the seed mean's
curve can contradict: a seed that never learns pulls the mean's first crossing late although every other seed
crossed early, and seeds that unlearn at different times leave a mean that never looks learned. With ``seeds_show``
the time-axis bounds (``reached_by``, ``still_holds``, ``learned_then_unlearned``) are read on each seed's own
recorded curve: the seed shows the bound's pattern or not (:meth:`analysis.stats.kinds.time_kind.TimeKind.shown_by`,
a fact of that seed's evaluations), and the bound is a claim about the cell's seeds:

* it **holds** when at least m of the cell's n seeds show it and the exact binomial chance that as many would if a
  seed showed it no more often than not (:data:`TYPICAL`, the project's choice) is at most the bound's error (one
  test: the error of all its ends, e.g. two of ``learned_then_unlearned``): the pattern is typical of the cell's
  seeds, not an accident of a few (five of five: 1/32, 3.1%; four of five: 6/32);
* it **fails** when more seeds do not show it than the study's seeds leave room for (fewer than m could, whatever
  the seeds not run yet do): a fact of the seeds run, as worst_beats_best's overlap at every seed;
* else it is undecided.

The cell it is read on: with ``cell="best"`` every cell that may be the best (as the mean curve's bounds,
:func:`analysis.stats.kinds.time_axis.best_curves`: found at a quarter of each end's error, each read at half of it;
it holds if it holds on all of them, fails if it fails on all; a region of one cell: that cell, at the whole error);
with ``cell="any"`` each cell of the region at the
end's error / C (as :mod:`analysis.stats.kinds.any_cell`: holds where one cell holds, fails where every cell fails).
A cell not run yet leaves the bound open.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl
from scipy import stats

from analysis.stats.intervals.estimate import Estimate
from analysis.stats.intervals.statistics import plausible_best
from analysis.stats.kinds.base import Check, Kind, Reading, State, check_state
from analysis.stats.kinds.time_axis import cell_words, rows_of
from analysis.stats.metric import per_row
from analysis.stats.table import CellTable, Floats

#: The rate a seed is held to: a sentence about every seed says its pattern is typical, more likely than not.
TYPICAL = 0.5
#: Whether one seed's curve (its evaluations' times and values, in time order) shows a bound's pattern.
ShownBy = Callable[[Floats, Floats], bool]


@dataclass(frozen=True)
class SeedCount:
    """One cell's seeds against a pattern: how many show it of how many run, and the chance of as many by chance."""

    showing: int
    run: int
    where: str  # the cell's axis values, in words

    @property
    def chance(self) -> float:
        """The chance that ``showing`` or more of ``run`` seeds show it if each did with :data:`TYPICAL`."""
        return float(stats.binom.sf(self.showing - 1, self.run, TYPICAL)) if self.run else 1.0

    def state(self, least: int, most: int, error: float) -> State:
        """Holds: at least ``least`` show it, by less chance than ``error``; fails: of ``most`` seeds fewer than
        ``least`` could."""
        return check_state(self.showing >= least and self.chance <= error,
                           most - (self.run - self.showing) < least)

    def text(self) -> str:
        return f"{self.showing} of {self.run} seeds show it (chance {100 * self.chance:.3g}% if a seed did no more " \
               f"often than not)"


def seeds_showing(kind: Kind, shown_by: ShownBy, reading: Reading) -> Check:
    """``kind``'s bound read per seed on its panel value's cells (module docstring): ``shown_by`` says whether one
    seed's curve shows its pattern."""
    f, value = reading.finding, kind.panel_value
    least = f.seeds_show
    assert least is not None
    cells = reading.cells(value, f.where)
    if cells.is_empty():
        return _check(kind, reading, State.FAILS, f"no cell of {value}")
    if cells.run().height < cells.height and f.cell == "best":
        return _check(kind, reading, State.UNDECIDED, f"{cells.height - cells.run().height} cells not run yet")
    errors = reading.errors.scaled(kind.ends())  # one test per cell: the bound's every end's share of the error
    if f.cell == "any":
        picked, error = cells, errors.low / cells.height
        counts = [_count(picked.cell(i), shown_by, reading) for i in range(picked.height)]
        states = [c.state(least, reading.max_seeds, error) if c.run else State.UNDECIDED for c in counts]
        state = State.HOLDS if State.HOLDS in states else State.FAILS if set(states) == {State.FAILS} \
            else State.UNDECIDED
        shown = counts[states.index(State.HOLDS)] if State.HOLDS in states else max(counts, key=lambda c: c.showing)
        scope = f"some cell of {picked.height}, each at 1/{picked.height} of the error"
    else:
        picked = plausible_best(cells.run(), reading.metric, reading.noise, errors.scaled(0.25))
        error = errors.halved().low if cells.height > 1 else errors.low  # one cell: no picking to pay for
        counts = [_count(picked.cell(i), shown_by, reading) for i in range(picked.height)]
        states = [c.state(least, reading.max_seeds, error) for c in counts]
        state = states[0] if len(set(states)) == 1 else State.UNDECIDED
        shown = min(counts, key=lambda c: (c.showing, -c.run))
        scope = f"every cell of {picked.height} that may be the best" if picked.height > 1 else "the best cell"
    detail = (f"per seed, at least {least} of {reading.max_seeds} seeds, {scope}: at {shown.where}, {shown.text()}, "
              f"allowed {100 * error:.2g}%")
    return _check(kind, reading, state, detail, shown)


def _count(cell: CellTable, shown_by: ShownBy, reading: Reading) -> SeedCount:
    """How many of ``cell``'s seeds show the pattern (each on its own recorded curve)."""
    curves = seed_curves(cell, reading)
    showing = sum(shown_by(times, values) for times, values in curves)
    return SeedCount(int(showing), len(curves), cell_words(cell, reading.panel))


def seed_curves(cell: CellTable, reading: Reading) -> list[tuple[Floats, Floats]]:
    """Per seed of ``cell`` (in seed order) its own recorded curve of the finding's metric: (times, values)."""
    f = reading.finding
    rows = rows_of(cell, reading).select("seed", f.time, per_row(reading.metric).alias("_v")).sort("seed", f.time)
    return [(part.get_column(f.time).cast(pl.Float64).to_numpy(), part.get_column("_v").cast(pl.Float64).to_numpy())
            for part in rows.partition_by("seed", maintain_order=True)]


def _check(kind: Kind, reading: Reading, state: State, detail: str, count: SeedCount | None = None) -> Check:
    """The check: its number the share of the cell's seeds that show the pattern (None: no cell read); its words
    say how many of how many, and the chance."""
    share, seeds = (count.showing / count.run, (count.run, count.run)) if count and count.run else (None, (0, 0))
    return Check(kind, Estimate(value=share, low=0.0, high=1.0, seeds=seeds, cells=1 if count else 0), state,
                 percent=reading.percent, detail=detail,
                 open_because="too few seeds show the pattern to tell it from chance (or cells not run yet)")


def first_at_or_past(times: Floats, values: Floats, level: float, loss: bool) -> float:
    """The first time a seed's curve reaches ``level`` (a loss: falls to it); inf: never."""
    reached = values <= level if loss else values >= level
    return float(times[reached.argmax()]) if reached.any() else float("inf")

