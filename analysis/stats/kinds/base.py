"""What every finding kind is: one bound of a finding (:class:`Kind`), judged on a study's cells (:class:`Reading`)
into a :class:`Check` - its number with its interval, its :class:`State` and its words.

A kind is one class in one file of this package, registered by its name in :data:`KINDS`
(:mod:`analysis.stats.kinds` fills it with the project's own; a kind of yours registers itself the same way from your
own module: docs/extending.md). A kind says which bounds of its kind a finding states (:meth:`Kind.of`), how many
interval ends can fail it (:meth:`Kind.ends`: each gets ``alpha / ends`` of the finding's error), how its number and
interval are read and its state decided (:meth:`Kind.judge`), which cells more seeds could move
(:meth:`Kind.contention`), which side of its bound its number points to (:meth:`Kind.points_to_failing`) and how it
is written (:meth:`Kind.text`). Nothing outside a kind's file switches on its name.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Literal

import polars as pl

from analysis.stats.intervals.errors import Errors
from analysis.stats.intervals.estimate import Estimate
from analysis.stats.intervals.statistics import estimate
from analysis.stats.metric import is_accuracy
from analysis.stats.noise import NoiseModel
from analysis.stats.region import region_text
from analysis.stats.table import CellTable
from core.registry import Registry
from search_spaces.finding import Finding


class State(StrEnum):
    """A bound's state on the data: its whole interval satisfies it, violates it, or neither."""

    HOLDS = "holds"
    FAILS = "fails"
    UNDECIDED = "undecided"


def check_state(holds: bool, fails: bool) -> State:
    """A bound's state from its two decisions."""
    return State.HOLDS if holds else State.FAILS if fails else State.UNDECIDED


#: What a check's number is: the words tests and the report use for each kind's bound.
Relation = Literal["below", "above", "ahead", "level", "not_ahead", "worst_beats_best", "reached_by",
                   "still_holds", "learned_then_unlearned", "faster_than", "level_along", "gain", "lead_grows",
                   "falls_short", "counted", "learned_in_order"]

#: How far the interval every seed would give (:attr:`Estimate.projected`) is shrunk towards the number before a
#: bound inside it counts as out of reach (:meth:`Kind.hopeless`), per kind of statistic. A best or worst of many
#: cells reads high (low) at few seeds - it is the extreme of noisy numbers - and moves as seeds come in, and so does a
#: difference of two of them (Table 4's replay: max's lead of +9.4 pp at two seeds a cell, +10.1 [+4.3, +14.2] at
#: five), so only the projection's inner quarter counts; a share, a mean and a spread move little, and a bound
#: anywhere inside their projection is out of reach. Chosen on the release replays (the fewest models that keep every
#: verdict the completed budget decides) and measured out of sample, each file held out once: bench/adaptive.py,
#: bench/README.md section 8.
FUTILITY_SHARE = {"order": 0.25, "other": 1.0}


@dataclass
class Reading:
    """What a finding's bounds are judged on: its metric's cells (annotated with the seed-noise prior), the noise
    model, each interval end's error, the study's seeds, and the per-evaluation rows of the time axis. The cells of a
    panel value in a region and their statistic are read once and shared (``memo``: by every finding of the metric
    that reads the same ones)."""

    finding: Finding
    metric: str
    table: CellTable
    noise: NoiseModel
    errors: Errors
    max_seeds: int
    panel: str
    evaluations: pl.DataFrame | None = None
    memo: dict[tuple[Any, ...], Any] = field(default_factory=dict, repr=False)
    #: another metric's cells and noise model, for a kind that reads more than the finding's metric (None: the data
    #: has no cell of it); None: only the finding's own metric can be read
    other: Callable[[str], tuple[CellTable, NoiseModel] | None] | None = field(default=None, repr=False)

    @property
    def percent(self) -> bool:
        """Whether the metric reads accuracies (shown in percent)."""
        return is_accuracy(self.metric)

    def metric_table(self, metric: str) -> tuple[CellTable, NoiseModel]:
        """``metric``'s cells (annotated with their seed-noise prior) and its noise model (ValueError: the data has
        no cell of it, a line naming the metric)."""
        if metric == self.metric:
            return self.table, self.noise
        found = self.other(metric) if self.other is not None else None
        if found is None:
            raise ValueError(f"invalid metric {metric!r} of finding {self.finding.description!r}: the data has no "
                             f"cell of it; allowed: a metric column with a G in these results")
        return found

    @property
    def versus_region(self) -> Mapping[str, Any]:
        """The region the other side of a comparison is read in (``versus_where``, else ``where``)."""
        return self.finding.where if self.finding.versus_where is None else self.finding.versus_where

    def cells(self, value: str, region: Mapping[str, Any]) -> CellTable:
        """The cells of panel value ``value`` in ``region`` (ValueError: the region names a column the grid lacks)."""
        key = ("cells", value, repr(sorted(region.items())))
        if key not in self.memo:
            self.memo[key] = self.table.where(region).of_panel(self.panel, value)
        cells: CellTable = self.memo[key]
        return cells

    def number(self, value: str, region: Mapping[str, Any], halved: bool = False) -> Estimate:
        """The finding's statistic of ``value``'s cells in ``region`` with its interval (``halved``: each end at half
        the error, one side of a difference)."""
        f = self.finding
        errors = self.errors.halved() if halved else self.errors
        key = ("number", value, repr(sorted(region.items())), f.statistic, f.level, errors)
        if key not in self.memo:
            self.memo[key] = estimate(self.cells(value, region), f.statistic, f.level, self.metric, self.noise, errors,
                                      self.max_seeds)
        number: Estimate = self.memo[key]
        return number

    def subject(self, value: str, region: Mapping[str, Any]) -> str:
        """What a bound is about, in words (:func:`subject_text`)."""
        return subject_text(self.finding, value, region)


def subject_text(finding: Finding, panel_value: str, region: Mapping[str, Any]) -> str:
    """The panel value, with its statistic and region unless the best over the grid."""
    if finding.statistic == "best" and not region:
        return panel_value
    stat = {"share": f"share of cells with G >= {100 * finding.level:.0f}%",
            "spread": f"mean difference of two seeds where G reaches {100 * finding.level:.0f}%"
            }.get(finding.statistic, finding.statistic)
    where = region_text(region)
    return f"{panel_value} ({stat}{' at ' + where if where else ''})"


@dataclass(frozen=True)
class Check:
    """One bound of a finding judged on data: ``kind``'s number (``estimate``; a comparison's: the difference, its
    own side in ``mine``) with its interval, its state and the words that say it."""

    kind: Kind
    estimate: Estimate
    state: State
    #: what ``estimate`` is held against: a threshold, a lead's margin, an equivalence margin, a time (None: nothing)
    bound: float | None = None
    mine: Estimate | None = field(default=None, compare=False)  # a comparison: the panel value's own number
    subject: str = ""  # the panel value with the statistic and region, when not the best over the whole grid
    against: str = ""  # a comparison: ``BERT 72.1% (5 seeds) + 5.0 pp``
    percent: bool = True  # an accuracy, shown in percent (a loss or an output scale: in its own unit)
    #: the number and what it is held against, in words, where the kind writes them itself
    detail: str = ""
    #: what leaves the bound open when it is undecided, in words (a verdict's reason names it)
    open_because: str = "an interval holds the bound"

    @property
    def relation(self) -> str:
        """What the bound says (:attr:`Kind.relation`)."""
        return self.kind.relation

    @property
    def panel_value(self) -> str:
        """The panel value the bound is on."""
        return self.kind.panel_value

    @property
    def versus(self) -> str:
        """A comparison: the panel value compared with (else empty)."""
        return self.kind.compared_with

    @property
    def threshold(self) -> float | None:
        """The number the panel value's own is held against, where there is one (a comparison: the other side's plus
        the margin)."""
        return self.kind.threshold(self)

    @property
    def value(self) -> float | None:
        """The panel value's number on the data."""
        return (self.mine or self.estimate).value

    def text(self) -> str:
        """``max: 16.1% [14.0, 18.2] (3 seeds), required <= 15.0%: fails``: the number, its interval and seeds,
        and exactly the bound tested."""
        if self.detail:
            return f"{self.subject or self.panel_value}: {self.detail}: {self.state}"
        return self.kind.text(self)

    def contention(self) -> pl.DataFrame | None:
        """The cells whose further seeds could decide this bound (None: none)."""
        return self.kind.contention(self)

    def hopeless(self) -> bool:
        """Whether even every seed would most likely leave this bound undecided (:meth:`Kind.hopeless`)."""
        return self.kind.hopeless(self)

    def points_to_failing(self) -> bool:
        """Whether the number, as it stands, lies on the failing side of its bound."""
        return self.kind.points_to_failing(self)


class Kind(ABC):
    """One kind of bound a finding states (module docstring). An instance is one bound: a panel value's number
    against what the finding holds it to."""

    #: the kind's name: the :class:`search_spaces.finding.Finding` field it is written with, or its key in the
    #: finding's ``kinds`` mapping (a kind of yours)
    name: ClassVar[str]
    #: whether the bound reads the rows of each evaluation (the time axis) beyond the finding's own time-axis fields:
    #: the study then keeps them (:mod:`analysis.stats.training_stats`), and data without them leaves it NOT CHECKED
    reads_time: ClassVar[bool] = False
    panel_value: str

    @property
    @abstractmethod
    def relation(self) -> str:
        """What the bound says: one of :data:`Relation` for the project's own kinds, a kind of yours its name."""

    @classmethod
    @abstractmethod
    def of(cls, finding: Finding) -> list[Kind]:
        """The bounds of this kind ``finding`` states, in its order."""

    @abstractmethod
    def ends(self) -> int:
        """How many interval ends can fail this bound (each gets an equal share of the finding's error)."""

    @abstractmethod
    def judge(self, reading: Reading) -> Check:
        """This bound on ``reading``: its number, interval, state and words."""

    @abstractmethod
    def text(self, check: Check) -> str:
        """The check in words: the number, its interval and seeds, and exactly the bound tested."""

    @property
    def compared_with(self) -> str:
        """A comparison: the other panel value (else empty)."""
        return ""

    def named(self) -> tuple[str, ...]:
        """The panel values this bound reads (a comparison: both)."""
        return (self.panel_value, self.compared_with) if self.compared_with else (self.panel_value,)

    def empty_sides(self, check: Check) -> list[str]:
        """The panel values of ``check`` without any cell in their region (published data lacking them there): the
        verdict leaves those bounds out rather than failing them. A comparison's sides are its difference's parts."""
        own = check.mine or check.estimate
        sides = [(self.panel_value, own)] + ([(self.compared_with, check.estimate.parts[1])]
                                              if self.compared_with and check.estimate.parts else [])
        return [value for value, e in sides if e.cells == 0]

    def threshold(self, check: Check) -> float | None:
        """What the panel value's own number is held against (None: nothing fixed)."""
        return check.bound

    def contention(self, check: Check) -> pl.DataFrame | None:
        """The cells short of seeds whose further seeds could decide this bound: by default those that could move
        its number's interval (:meth:`Estimate.contention`: a difference, both sides' leaders and close rivals)."""
        return check.estimate.contention()

    def points_to_failing(self, check: Check) -> bool:
        """Whether the number lies on the failing side of its bound (by default: short of it)."""
        value, bound = check.estimate.value, check.bound
        return True if value is None or bound is None else value < bound

    def hopeless_bounds(self, check: Check) -> tuple[float, ...]:
        """The values of the bound a projected interval must not hold (by default the bound itself)."""
        return () if check.bound is None else (check.bound,)

    def hopeless(self, check: Check) -> bool:
        """Whether even every seed would most likely leave this bound undecided: the bound lies inside the interval the
        statistic would have were every cell at every seed with the spread it has now (:attr:`Estimate.projected`),
        shrunk towards the number to :data:`FUTILITY_SHARE` of its extent on each side. A matter of efficiency only:
        a hopeless bound asks for no seeds, it decides nothing."""
        e = check.estimate
        if e.value is None or e.projected is None or not all(math.isfinite(x) for x in e.projected):
            return False
        share = FUTILITY_SHARE["order" if e.reads == "order" else "other"]
        low = e.value - share * max(e.value - e.projected[0], 0.0)  # the projection, shrunk to the number
        high = e.value + share * max(e.projected[1] - e.value, 0.0)
        return any(low < b < high for b in self.hopeless_bounds(check))


#: Every finding kind by name, in the order a verdict lists their checks (the project's own are registered when this
#: package is imported: :mod:`analysis.stats.kinds`).
KINDS: Registry[type[Kind]] = Registry("finding kind")


def bounds_of(finding: Finding) -> list[Kind]:
    """Every bound ``finding`` states, kind by kind in :data:`KINDS`' order.

    Raises:
        core.registry.RegistryError: the finding's ``kinds`` names a kind no module registered (the valid names).
    """
    for name in finding.kinds:
        KINDS.get(name)
    return [bound for name in KINDS.names() for bound in KINDS.get(name).of(finding)]


def reads_time_axis(finding: Finding, bounds: Sequence[Kind] | None = None) -> bool:
    """Whether ``finding`` reads the rows of each evaluation: a time-axis field, or a bound that
    :attr:`Kind.reads_time` (``bounds``: its :func:`bounds_of`, where the caller has them already)."""
    return finding.timed() or any(b.reads_time for b in (bounds_of(finding) if bounds is None else bounds))
