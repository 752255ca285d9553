"""``learned_in_order``: within one architecture, one metric is mostly learned before another ("cases are mostly
learned in the order of their occurrences": the argmin case before the first case).

A finding states it under ``kinds={"learned_in_order": {"values": (...), "then": METRIC, "more_than": q}}``: for each
panel value of ``values`` (one bound each), its **runs** - every seed of every cell of the finding's ``where`` - are
read on their own recorded curves along the finding's ``time``. A run's time for a metric is the first evaluation at
which its value reaches the finding's ``level`` (a loss: falls to it; never: it does not by the run's last evaluation).
Per run, the finding's ``metric`` is learned:

* **in order** when it reaches the level strictly earlier than ``then`` (``then`` never reaching it included);
* **tied** when both first reach it at the same evaluation (the order falls between two evaluations, unseen);
* **out of order** when ``then`` reaches it strictly earlier (the finding's metric never reaching it included);
* a run where neither reaches the level has no order and is left out (said in the words).

The bound says that, of the runs that learn at least one of the two, more than a share ``q`` learn the finding's
metric first. It is one test over the runs, each run a draw of its own (different seeds and configurations; their
chances of being in order may differ). **Holds** when the runs in order (ties counted against the order) are so many
that a binomial count at the share q would reach them with a chance at most the bound's error; **fails** when the
runs in order or tied (ties counted for it) are so few that such a count would fall to them with a chance at most the
error; else undecided. Why a binomial count is the right yardstick for runs whose chances differ: a sum of
independent indicators whose mean chance is p is at least as concentrated around n p as a binomial count of n at p
(Hoeffding 1956, Theorem 4: beyond one of its mean, the binomial's tail is the larger), so a mean chance of at most q
(the claim false) is shown more than q no more often than the error, and a mean chance above q is shown at most q no
more often either. Counting ties against a PASS and for a FAIL keeps both errors whatever the order within a tie was.
Left out runs condition the claim on learning something, which keeps the runs independent.

Its number is the share in order (ties against it) with an exact (Clopper-Pearson) interval: the lower end at the
error of a wrong PASS from the runs in order, the upper end at the error of a wrong FAIL from those in order or tied;
the bound holds exactly where the lower end clears q and fails where the upper end stays below it. An adaptive budget
reads it as a mean over many cells (its look's share of the error), and asks no seeds for it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import polars as pl
from scipy import stats

from analysis.stats.intervals.estimate import Estimate
from analysis.stats.kinds.base import KINDS, Check, Kind, Reading, Relation, State, check_state
from analysis.stats.kinds.per_seed import first_at_or_past
from analysis.stats.kinds.text import percent_text
from analysis.stats.kinds.time_axis import rows_of
from analysis.stats.metric import lower_is_better, per_row
from analysis.stats.table import Floats
from search_spaces.finding import Finding, metric_columns
from search_spaces.schema import fail

_FIELDS = ("values", "then", "more_than")


@dataclass(frozen=True)
class Order:
    """The argument of ``learned_in_order``: which panel values, the metric learned after the finding's, the share."""

    values: tuple[str, ...]
    then: str
    more_than: float

    @classmethod
    def of(cls, finding: Finding) -> Order | None:
        """The finding's argument, checked (ValueError: one line naming the field, the value and what is allowed);
        None where it states none."""
        raw = finding.kinds.get(LearnedInOrder.name)
        if raw is None:
            return None
        named = f"learned_in_order of finding {finding.description!r}"
        if not isinstance(raw, Mapping):
            raise fail(named, raw, f"a mapping with the keys {', '.join(_FIELDS)}")
        for key in raw:
            if key not in _FIELDS:
                raise fail(f"{named}: {key}", raw[key], f"the keys {', '.join(_FIELDS)}")
        values, then, share = raw.get("values"), raw.get("then"), raw.get("more_than")
        if not isinstance(values, Sequence) or isinstance(values, str) or not values or not all(
                isinstance(v, str) and v for v in values):
            raise fail(f"{named}: values", values, "a non-empty tuple of panel values")
        if not isinstance(then, str) or len(metric_columns(then)) != 1 or then == finding.metric:
            raise fail(f"{named}: then", then, "one metric column other than the finding's metric (the one learned "
                                               "after it)")
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share < 1:
            raise fail(f"{named}: more_than", share, "a share of the runs, 0 <= share < 1")
        return cls(tuple(values), then, float(share))


@dataclass(frozen=True)
class RunOrder:
    """How a panel value's runs order the two metrics: in order, tied, out of order, and those learning neither."""

    in_order: int
    tied: int
    out_of_order: int
    neither: int

    @property
    def ordered(self) -> int:
        """The runs that learn at least one of the two (the count's n)."""
        return self.in_order + self.tied + self.out_of_order

    def chances(self, share: float) -> tuple[float, float]:
        """The chance of as many runs in order (ties against) and of as few in order or tied (ties for), were each
        run's chance ``share``: the two tests' p-values (module docstring)."""
        n = self.ordered
        if n == 0:
            return 1.0, 1.0
        return (float(stats.binom.sf(self.in_order - 1, n, share)),
                float(stats.binom.cdf(self.in_order + self.tied, n, share)))

    def state(self, share: float, errors: tuple[float, float]) -> State:
        """Holds, fails or undecided at (the error of a wrong PASS, of a wrong FAIL)."""
        up, down = self.chances(share)
        n = self.ordered
        return check_state(n > 0 and self.in_order > share * n and up <= errors[0],
                           n > 0 and self.in_order + self.tied < share * n and down <= errors[1])

    def interval(self, errors: tuple[float, float]) -> tuple[float, float]:
        """The exact interval of the share in order: the lower end from the runs in order at the first error, the
        upper from those in order or tied at the second (no run: 0 to 1)."""
        n, k, loose = self.ordered, self.in_order, self.in_order + self.tied
        if n == 0:
            return 0.0, 1.0
        low = float(stats.beta.ppf(errors[0], k, n - k + 1)) if k > 0 else 0.0
        high = float(stats.beta.ppf(1 - errors[1], loose + 1, n - loose)) if loose < n else 1.0
        return low, high


def order_of(a_times: Floats, b_times: Floats) -> RunOrder:
    """The runs' order from each run's first time for the finding's metric (``a_times``) and ``then`` (inf: never)."""
    a, b = np.asarray(a_times, dtype=np.float64), np.asarray(b_times, dtype=np.float64)
    neither = ~np.isfinite(a) & ~np.isfinite(b)
    tied = (a == b) & ~neither
    return RunOrder(int((a < b).sum()), int(tied.sum()), int((a > b).sum()), int(neither.sum()))


@KINDS.register("learned_in_order")
@dataclass(frozen=True)
class LearnedInOrder(Kind):
    """More than a share of ``panel_value``'s runs learn the finding's metric before ``then`` (module docstring)."""

    name: ClassVar[str] = "learned_in_order"
    reads_time: ClassVar[bool] = True
    panel_value: str
    order: Order

    @classmethod
    def of(cls, finding: Finding) -> list[Kind]:
        order = Order.of(finding)
        return [] if order is None else [cls(value, order) for value in order.values]

    @property
    def relation(self) -> Relation:
        return "learned_in_order"

    def ends(self) -> int:
        return 1  # one test each way: a wrong PASS at the end's error, a wrong FAIL at the same

    def runs(self, reading: Reading) -> tuple[RunOrder, int]:
        """The panel value's runs in its region ordered, and how many cells they come from."""
        f, then = reading.finding, self.order.then
        cells = reading.cells(self.panel_value, f.where)
        loss = (lower_is_better(reading.metric), lower_is_better(then))
        a_times, b_times = [], []
        for i in range(cells.height):
            rows = rows_of(cells.cell(i), reading)
            if rows.is_empty():
                continue
            missing = [c for c in metric_columns(then) if c not in rows.columns]
            if missing:
                raise ValueError(f"invalid then {then!r} of finding {f.description!r}: the evaluations have no "
                                 f"column {missing[0]}; allowed: a metric the rows of each evaluation hold")
            frame = rows.select("seed", f.time, per_row(reading.metric).alias("_a"), per_row(then).alias("_b"))
            for part in frame.sort("seed", f.time).partition_by("seed", maintain_order=True):
                times = part.get_column(f.time).cast(pl.Float64).to_numpy()
                a_times.append(first_at_or_past(times, part.get_column("_a").to_numpy(), f.level, loss[0]))
                b_times.append(first_at_or_past(times, part.get_column("_b").to_numpy(), f.level, loss[1]))
        return order_of(np.asarray(a_times), np.asarray(b_times)), cells.height

    def judge(self, reading: Reading) -> Check:
        f, q = reading.finding, self.order.more_than
        if reading.evaluations is None:
            raise ValueError(f"invalid finding {f.description!r}: learned_in_order reads the rows of each evaluation, "
                             f"which this data does not have")
        cells = reading.cells(self.panel_value, f.where)
        errors = (reading.errors.low * reading.errors.look, reading.errors.high * reading.errors.look)
        found, height = self.runs(reading)
        not_run = cells.height - cells.run().height
        # no cell at all fails (as every kind's); cells not run yet could move the count
        state = State.FAILS if cells.is_empty() else State.UNDECIDED if not_run else found.state(q, errors)
        n = found.ordered
        low, high = found.interval(errors)
        value = found.in_order / n if n else None
        up, down = found.chances(q)
        words = (f"{reading.metric} first reaches {percent_text(f.level, reading.percent)} before {self.order.then} "
                 f"in {found.in_order} of the {n} runs that reach it in either ({height} cells, every seed), "
                 f"{found.tied} at the same {f.time}, {found.out_of_order} after it, {found.neither} reaching it in "
                 f"neither (left out): {percent_text(value)} [{100 * low:.1f}, {100 * high:.1f}] in order (ties "
                 f"against it; for it at the upper end), required more than {100 * q:.4g}% of the runs (a count this "
                 f"high at {100 * q:.4g}%: {_chance(up)}, this low: {_chance(down)}; each allowed "
                 f"{_chance(errors[0])})")
        if not_run:
            words += f"; {not_run} cells not run yet"
        estimate = Estimate(value, low, high, (n, n), height, not_run)
        return Check(self, estimate, state, bound=q, percent=False, detail=words,
                     open_because="too few runs learn the two in a clear order to tell the share from the bound")

    def contention(self, check: Check) -> pl.DataFrame | None:
        return None  # a count over every run of a region: no cell's seeds are singled out

    def points_to_failing(self, check: Check) -> bool:
        value = check.estimate.value
        return True if value is None else value <= self.order.more_than

    def hopeless_bounds(self, check: Check) -> tuple[float, ...]:
        return ()

    def text(self, check: Check) -> str:
        return f"{self.panel_value}: {check.detail}: {check.state}"


def _chance(p: float) -> str:
    return f"{100 * p:.3g}%" if math.isfinite(p) else "-"

