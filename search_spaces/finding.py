"""A finding: a claim of a paper a study checks with numbers, checked itself when it is written.

A finding computes one number per panel value - a ``statistic`` of ``metric``'s G over a region of the grid - and
bounds it. Everything a finding names is checked when it is built (the statistic, the bounds, the metric's
syntax, the regions' shape) and, by the study that holds it, against that study (``where`` columns, panel values:
:meth:`search_spaces.study.Study`); its metric's columns are checked in preflight against the rows the task's
model family really writes (:mod:`study.run.preflight`). A typo is an error before anything trains.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import field_validator, model_validator

from core.probe_names import ATTENTION_PROBES, GATE_PROBES, PARAMETER_PROBES
from core.probe_names import PREFIX as PROBE_PREFIX
from search_spaces.schema import SCALES, Schema, fail, json_form

#: The columns of the rows a time-axis bound reads time along (docs/results.md).
TIME_AXES = ("epoch", "step")
#: What a finding computes over the cells of its region, per panel value (docs/cli.md, Findings).
STATISTICS = ("best", "worst", "mean", "share", "spread")
#: Which cell of ``where`` a time-axis bound reads per panel value (docs/cli.md, The time axis).
CELLS = ("best", "any")

_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CALL = re.compile(r"^(min|max)\((.+)\)$")
PROBE_STATISTICS = (*ATTENTION_PROBES, *GATE_PROBES, *PARAMETER_PROBES)
#: A probe column's name (core.probe_names.column): a statistic at a layer or step, an attention one per head.
PROBE_COLUMN = re.compile(rf"^{PROBE_PREFIX}(({'|'.join((*ATTENTION_PROBES, *PARAMETER_PROBES))})_[ls][1-9][0-9]*"
                          rf"_h[1-9][0-9]*"
                          rf"|({'|'.join(GATE_PROBES)})_s[1-9][0-9]*)$")


def metric_columns(metric: str) -> tuple[str, ...]:
    """The results columns a finding's metric reads: ``min(a, b)`` -> ``(a, b)``, ``a - b`` -> ``(a, b)``."""
    compact = metric.replace(" ", "")
    call = _CALL.match(compact)
    if call:
        return tuple(call.group(2).split(","))
    if "-" in compact:
        return tuple(compact.split("-", 1))
    return (compact,)


def is_probe(metric: str) -> bool:
    """Whether ``metric`` reads probe columns (``probe_*``: what a model does inside, docs/results.md, "Probe columns").
    A probe has no better or worse: per cell it is read at the checkpoint the study's own metric picks (the evaluation
    where that metric's seed mean is best), never maximised over training (:mod:`analysis.stats.training_stats`)."""
    return all(c.startswith(PROBE_PREFIX) for c in metric_columns(metric))


def stopping_columns(findings: Sequence[Finding], study_metric: str) -> tuple[str, ...]:
    """The columns a study's findings read of a model that the early stop at the ceiling must watch (each finding's
    metric, the study's where it names none); a probe is read at the checkpoint, which a model stopped at the ceiling
    no longer moves: none of its columns."""
    metrics = (f.metric_of(study_metric) for f in findings)
    return tuple(dict.fromkeys(c for m in metrics if not is_probe(m) for c in metric_columns(m)))


def direction(metric: str) -> str:
    """``min`` when lower is better, else ``max``: declared here once for every study's mode, finding, sampler and
    report. A loss (a single column named ``*loss*``) is minimised; every other metric (accuracies, output scales,
    combinations of accuracies) is maximised. A probe (:func:`is_probe`) is not optimised over training; between cells
    its ``best`` is its largest value."""
    columns = metric_columns(metric)
    return "min" if len(columns) == 1 and "loss" in columns[0] else "max"


def _region(raw: Any, what: str) -> dict[str, Any]:
    """A region of the grid: column -> values (a tuple), or ``{"min": a, "max": b}`` (either may be left out)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise fail(what, raw, "a mapping column -> tuple of values or {'min': a, 'max': b}")
    region: dict[str, Any] = {}
    for column, spec in raw.items():
        if isinstance(spec, Mapping):
            numbers = {k: v for k, v in spec.items() if k in ("min", "max") and _is_number(v)}
            if not spec or len(numbers) != len(spec):
                raise fail(f"{what}.{column}", dict(spec), "{'min': number} and/or {'max': number}")
            region[str(column)] = {k: float(v) for k, v in numbers.items()}
        elif isinstance(spec, Sequence) and not isinstance(spec, str) and spec:
            region[str(column)] = tuple(spec)
        else:
            raise fail(f"{what}.{column}", spec, "a non-empty tuple of values or {'min': a, 'max': b}")
    return region


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class Finding(Schema):
    """A qualitative claim the report checks: a statistic of ``metric``'s G per panel value against a bound.

    By default the statistic is the best G over the whole grid; ``where`` restricts it to a region (e.g. a band
    of learning rates: ``{"learning_rate": {"min": 0.027}}``, or x values: ``{"seq_len": (256,)}``), and
    ``statistic`` is ``best``, ``worst``, ``mean``, ``share`` (of the region's cells with G >= ``level``) or ``spread``
    (over the region's cells whose G reaches ``level``, the mean absolute difference between two seeds' bests: how
    far apart seeds land).
    ``metric`` is a results column, or per cell ``min(a, b, ...)`` / ``max(a, b, ...)`` / ``a - b`` of columns'
    G (e.g. all three case accuracies learned: ``min(val_argmin_accuracy, val_first_accuracy,
    val_argmax_accuracy)``). ``below`` / ``above`` bound the value per panel value; ``ahead`` compares panel
    values: ``{"NAP": ("BERT",)}`` means NAP's value >= BERT's + ``margin`` (BERT's over ``versus_where`` when
    given, e.g. the same architecture at other x values); ``level_with`` says two values differ by at most
    ``equivalence_margin`` either way ("nearly identical", "none of these differences is significant") and
    ``not_ahead`` that A leads B by at most ``equivalence_margin`` ("none of these improvements is significant"): both
    are tested as equivalence (two one-sided tests), so the margin must be stated - how large a difference the sentence
    still calls none. ``below`` and ``above`` on one panel value state a two-sided level ("trapped at about 55%":
    ``above`` 0.45, ``below`` 0.65; the lower bound must be the smaller). ``worst_beats_best`` is the NAP paper's
    significance criterion (A's worst seed beats B's best, each at its best cell). ``reached_by``, ``still_holds``,
    ``learned_then_unlearned`` and ``faster_than`` bound when a panel value's learning curve reaches ``level`` along
    ``time`` (epoch or step); ``level_along`` holds two panel values' curves within ``equivalence_margin`` of each
    other at every evaluation, ``gain`` bounds a curve's gain from ``gain_since`` to its end, and ``lead_grows`` says
    that A's lead over B in ``where`` exceeds its lead in ``versus_where``. Semantics and verdicts: docs/cli.md,
    Findings.
    """

    label: ClassVar[str] = "finding"

    description: str
    #: None: the study's metric.
    metric: str | None = None
    below: dict[str, float] = {}
    above: dict[str, float] = {}
    #: Scales at which the claim can show; elsewhere the report says "not checked at this scale".
    scales: tuple[str, ...] = ("paper", "cpu")
    #: The paper's words and where it says them (section, figure, observation).
    quote: str = ""
    where: dict[str, Any] = {}
    statistic: str = "best"
    level: float = 0.5
    ahead: dict[str, tuple[str, ...]] = {}
    margin: float = 0.0
    level_with: dict[str, tuple[str, ...]] = {}
    #: panel value A -> [B, ...]: A's lead over B in ``where`` exceeds its lead over B in ``versus_where`` by more than
    #: ``margin`` ("outperforms with increasing margins" on a harder rung; :mod:`analysis.stats.kinds.lead_grows`)
    lead_grows: dict[str, tuple[str, ...]] = {}
    not_ahead: dict[str, tuple[str, ...]] = {}
    #: level_with / not_ahead / level_along: the largest difference that still counts as none (required with them,
    #: refused without)
    equivalence_margin: float | None = None
    versus_where: dict[str, Any] | None = None
    #: panel value A -> [B, ...]: A's worst seed beats B's best seed, each at its best cell (the NAP paper's
    #: significance criterion; statistic ``best`` only): docs/cli.md, What a finding can say
    worst_beats_best: dict[str, tuple[str, ...]] = {}
    #: The time axis (docs/cli.md, What a finding can say): each reads the learning curve (the seeds' mean per
    #: evaluation) of its panel value's best cell in ``where`` (or some cell: ``cell``), against ``level``, along
    #: ``time``.
    #: panel value -> E: the curve reaches ``level`` at or before ``time`` E ("100% within 100 epochs")
    reached_by: dict[str, float] = {}
    #: panel values whose curve is at ``level`` or past it at their last evaluation ("and stays there")
    still_holds: tuple[str, ...] = ()
    #: panel value -> drop: the curve reaches ``level``, and at its last evaluation lies ``drop`` short of it or more
    #: ("learns the first case, then unlearns it")
    learned_then_unlearned: dict[str, float] = {}
    #: panel value A -> [B, ...]: A's curve reaches ``level`` at an earlier evaluation than B's ("converges faster")
    faster_than: dict[str, tuple[str, ...]] = {}
    #: panel value A -> [B, ...]: A's curve lies within ``equivalence_margin`` of B's at every evaluation they share
    #: ("nearly identical training behavior": the curves, not only their ends; :mod:`analysis.stats.kinds.level_along`)
    level_along: dict[str, tuple[str, ...]] = {}
    #: panel value -> (least, most): the curve gains more than ``least`` and at most ``most`` from its evaluation at
    #: ``gain_since`` to its last ("after the drop at epoch 2500 it increases by about 0.5%";
    #: :mod:`analysis.stats.kinds.gain`)
    gain: dict[str, tuple[float, float]] = {}
    #: ``gain``: the time the gain is counted from (the last evaluation at or before it); required with it
    gain_since: float | None = None
    #: the time axis of the six above: ``epoch`` or ``step`` (rows' columns, docs/results.md)
    time: str = "epoch"
    #: faster_than: by how much earlier, in ``time`` units ("substantially faster"; 0: strictly earlier)
    time_margin: float = 0.0
    #: the cell of ``where`` the time-axis bounds read: ``best`` (the cell with the best G) or ``any`` (some cell:
    #: holds when one cell holds it, fails when every cell fails it; :mod:`analysis.stats.kinds.any_cell`)
    cell: str = "best"
    #: None: the time-axis bounds read the seed mean's curve. m: a sentence about the seeds ("all 5 random seeds follow
    #: this pattern": 5) - ``reached_by``, ``still_holds``, ``learned_then_unlearned`` and ``gain`` are read on each
    #: seed's own curve, and hold when at least m seeds show them, beyond what seeds that show it no more often than
    #: not would (:mod:`analysis.stats.kinds.per_seed`)
    seeds_show: int | None = None
    #: False: ``faster_than`` compares the seed means' curves. True: a sentence about how long seeds typically take
    #: ("needs substantially longer to converge") - A's seeds reach ``level`` more than ``time_margin`` earlier than
    #: B's, an exact two-sample rank test of each seed's own first time (:mod:`analysis.stats.kinds.seed_times`)
    per_seed: bool = False
    #: Bounds of kinds beyond the fields above - a kind of yours, registered from your own module (docs/extending.md):
    #: the kind's registered name -> its argument, in the shape that kind reads; an unknown name is refused before
    #: anything trains.
    kinds: dict[str, Any] = {}
    #: The numbers of this finding that are the project's choice, not the paper's, each with why (the level read into
    #: "learns well", a margin, the band of rates a sentence is taken to mean): printed under the verdict and in the
    #: report, so that a reader can tell the paper's claim from the project's reading of it. Every finding the project
    #: ships names them (tests/test_observation_ledgers.py); a finding of yours may leave it empty.
    chosen: tuple[str, ...] = ()

    @field_validator("chosen", mode="before")
    @classmethod
    def _chosen(cls, raw: Any) -> Any:
        if isinstance(raw, str) or not isinstance(raw, Sequence) or not all(
                isinstance(text, str) and text.strip() for text in raw):
            raise fail("chosen", raw, "a tuple of non-empty sentences, one per number of the project's choosing")
        return tuple(raw)

    @field_validator("description")
    @classmethod
    def _described(cls, text: str) -> str:
        if not text.strip():
            raise fail("finding description", text, "a sentence saying what is claimed")
        return text

    @field_validator("where", "versus_where", mode="before")
    @classmethod
    def _regions(cls, raw: Any, info: Any) -> Any:
        return None if raw is None and info.field_name == "versus_where" else _region(raw, info.field_name)

    @field_validator("ahead", "level_with", "not_ahead", "worst_beats_best", "faster_than", "level_along",
                     "lead_grows", mode="before")
    @classmethod
    def _ahead(cls, raw: Any, info: Any) -> Any:
        if not isinstance(raw, Mapping) or not all(isinstance(v, Sequence) and not isinstance(v, str) and v
                                                   for v in raw.values()):
            raise fail(info.field_name, raw, "a mapping panel value -> a non-empty tuple of panel values")
        return {str(a): tuple(str(b) for b in bs) for a, bs in raw.items()}

    @field_validator("still_holds", mode="before")
    @classmethod
    def _values(cls, raw: Any) -> Any:
        if not isinstance(raw, Sequence) or isinstance(raw, str):
            raise fail("still_holds", raw, "a tuple of panel values")
        return tuple(str(v) for v in raw)

    @field_validator("gain", mode="before")
    @classmethod
    def _bands(cls, raw: Any) -> Any:
        if not isinstance(raw, Mapping) or not all(
                isinstance(v, Sequence) and not isinstance(v, str) and len(v) == 2 and all(map(_is_number, v))
                and v[0] < v[1] for v in raw.values()):
            raise fail("gain", raw, "a mapping panel value -> (least, most), two finite numbers, least < most")
        return {str(k): (float(v[0]), float(v[1])) for k, v in raw.items()}

    @field_validator("kinds", mode="before")
    @classmethod
    def _kinds(cls, raw: Any) -> Any:
        """In the form study.json gives back (tuples as lists), so a study and its record compare equal."""
        if not isinstance(raw, Mapping):
            raise fail("kinds", raw, "a mapping kind name -> its argument")
        return {str(name): json_form(argument) for name, argument in raw.items()}

    @field_validator("below", "above", "reached_by", "learned_then_unlearned", mode="before")
    @classmethod
    def _bounds(cls, raw: Any, info: Any) -> Any:
        if not isinstance(raw, Mapping) or not all(_is_number(v) for v in raw.values()):
            raise fail(info.field_name, raw, "a mapping panel value -> a finite number")
        return {str(k): float(v) for k, v in raw.items()}

    @model_validator(mode="after")
    def _consistent(self) -> Finding:
        named = f"finding {self.description!r}"
        if self.statistic not in STATISTICS:
            raise fail(f"statistic of {named}", self.statistic, ", ".join(STATISTICS))
        bad_scales = [s for s in self.scales if s not in SCALES]
        if bad_scales or not self.scales:
            raise fail(f"scales of {named}", self.scales, f"a non-empty tuple of {', '.join(SCALES)}")
        columns = metric_columns(self.metric or "g")
        if not all(_COLUMN.match(c) for c in columns) or (len(columns) > 2 and not _CALL.match(
                str(self.metric).replace(" ", ""))):
            raise fail(f"metric of {named}", self.metric, "a results column, min(a, b, ...), max(a, b, ...) or a - b")
        self._probes_consistent(named, columns)
        if self.statistic == "spread" and len(columns) > 1:
            raise fail(f"metric of {named}", self.metric, "one results column with statistic spread")
        for name in ("level", "margin"):
            if not _is_number(getattr(self, name)):
                raise fail(f"{name} of {named}", getattr(self, name), "a finite number")
        equivalence = bool(self.level_with or self.not_ahead or self.level_along)
        margin = self.equivalence_margin
        if equivalence and (margin is None or not _is_number(margin) or margin < 0):
            raise fail(f"equivalence_margin of {named}", margin, "a number >= 0 with level_with, not_ahead or "
                                                                  "level_along: the largest difference that still "
                                                                  "counts as none")
        if margin is not None and not equivalence:
            raise fail(f"equivalence_margin of {named}", margin, "None without level_with, not_ahead or level_along")
        self._kinds_consistent(named)
        if not (self.below or self.above or self.ahead or self.level_with or self.not_ahead or self.worst_beats_best
                or self.lead_grows or self.timed() or self.kinds):
            raise fail(f"bounds of {named}", {}, "at least one of below, above, ahead, level_with, not_ahead, "
                                                 "worst_beats_best, reached_by, still_holds, learned_then_unlearned, "
                                                 "faster_than, level_along, gain, lead_grows, kinds")
        return self

    def _probes_consistent(self, named: str, columns: tuple[str, ...]) -> None:
        """A metric of probes reads probes only, at one checkpoint (:func:`is_probe`)."""
        probes = [c.startswith(PROBE_PREFIX) for c in columns]
        if any(probes) and not all(probes):
            raise fail(f"metric of {named}", self.metric, "probe columns only or none: a probe is read at the "
                                                          "checkpoint its study's metric picks, other columns at "
                                                          "their own best")
        bad = [c for c in columns if c.startswith(PROBE_PREFIX) and not PROBE_COLUMN.match(c)]
        if bad:
            raise fail(f"metric of {named}", bad[0], "a probe column probe_<statistic>_l<layer>_h<head>, "
                                                     "probe_<statistic>_s<step>_h<head> or probe_<statistic>_s<step> "
                                                     f"(statistics: {', '.join(PROBE_STATISTICS)}; docs/results.md)")
        if all(probes) and self.timed():
            raise fail(f"metric of {named}", self.metric, "a column that is not a probe with a time-axis bound (a "
                                                          "probe is read at one checkpoint, not along its curve)")

    def _kinds_consistent(self, named: str) -> None:
        """The checks of the kinds issue 50 added: two-sided levels, worst seed against best seed, the time axis."""
        for key in set(self.above) & set(self.below):  # two-sided: "at about 55%" is above 0.45 and below 0.65
            if self.above[key] >= self.below[key]:
                raise fail(f"above / below of {named} for {key}", (self.above[key], self.below[key]),
                           "a lower bound (above) smaller than the upper bound (below)")
        if self.worst_beats_best and self.statistic != "best":
            raise fail(f"statistic of {named}", self.statistic, "best with worst_beats_best (each side's best cell)")
        for name in ("worst_beats_best", "faster_than", "level_along"):
            selves = [a for a, bs in getattr(self, name).items() if a in bs]
            if selves and self.versus_where is None:
                raise fail(f"{name} of {named}", getattr(self, name),
                           f"no panel value against itself ({selves[0]}) unless versus_where names another region")
        if self.lead_grows and (self.versus_where is None or any(a in bs for a, bs in self.lead_grows.items())):
            raise fail(f"lead_grows of {named}", self.lead_grows, "a mapping A -> [B, ...] of other panel values, "
                                                                  "with versus_where (the region its lead is compared "
                                                                  "with)")
        self._time_consistent(named)

    def _time_consistent(self, named: str) -> None:
        """The checks of the time-axis bounds."""
        if self.cell not in CELLS:
            raise fail(f"cell of {named}", self.cell, ", ".join(CELLS))
        if self.cell != "best" and (not self.timed() or self.faster_than or self.level_along):
            raise fail(f"cell of {named}", self.cell, "best without reached_by, still_holds or learned_then_unlearned "
                                                      "(the cell those read), and with faster_than (two best cells) "
                                                      "or level_along")
        self._per_seed_consistent(named)
        since = self.gain_since
        if bool(self.gain) != (since is not None) or (since is not None and (not _is_number(since) or since < 0)):
            raise fail(f"gain_since of {named}", since, f"a {self.time} >= 0 with gain (the time its gain is counted "
                                                        f"from), None without it")
        if not self.timed():
            return
        if self.statistic != "best":
            raise fail(f"statistic of {named}", self.statistic, "best with a time-axis bound (each panel value's "
                                                                "best cell's curve)")
        if self.time not in TIME_AXES:
            raise fail(f"time of {named}", self.time, ", ".join(TIME_AXES))
        if not _is_number(self.time_margin) or self.time_margin < 0 or (self.time_margin and not self.faster_than):
            raise fail(f"time_margin of {named}", self.time_margin, f"a number >= 0 of {self.time}s, with faster_than")
        for name in ("reached_by", "learned_then_unlearned"):
            bad = {k: v for k, v in getattr(self, name).items() if v <= 0}
            if bad:
                raise fail(f"{name} of {named}", bad, f"a mapping panel value -> a number > 0 (a {self.time} for "
                                                      f"reached_by, a drop in the metric for learned_then_unlearned)")

    def _per_seed_consistent(self, named: str) -> None:
        """The checks of the per-seed readings: ``seeds_show`` (one-sample kinds), ``per_seed`` (faster_than)."""
        if self.seeds_show is not None and (isinstance(self.seeds_show, bool) or not isinstance(self.seeds_show, int)
                                            or self.seeds_show < 1 or not self.timed() or self.faster_than
                                            or self.level_along):
            raise fail(f"seeds_show of {named}", self.seeds_show,
                       "None, or a whole number of seeds >= 1 with reached_by, still_holds, learned_then_unlearned or "
                       "gain (faster_than per seed: per_seed)")
        if self.per_seed is not False and (self.per_seed is not True or not self.faster_than or self.reached_by
                                           or self.still_holds or self.learned_then_unlearned or self.level_along
                                           or self.gain):
            raise fail(f"per_seed of {named}", self.per_seed,
                       "False, or True with faster_than and no other time-axis bound (faster_than read on each "
                       "seed's first time; the others are read per seed with seeds_show)")

    def timed(self) -> bool:
        """Whether the finding has a bound on the time axis (it reads per-evaluation rows)."""
        return bool(self.reached_by or self.still_holds or self.learned_then_unlearned or self.faster_than
                    or self.level_along or self.gain)

    def checked_at(self, scale: str) -> bool:
        """Whether this finding is checked for a study run at ``scale``."""
        return scale in self.scales

    def metric_of(self, study_metric: str) -> str:
        """The metric the finding reads in a study whose own metric is ``study_metric``."""
        return self.metric or study_metric

    def panel_values(self) -> tuple[str, ...]:
        """Every panel value the finding names (its bounds' keys, and the values ``ahead`` compares with)."""
        pairs = [*self.ahead.items(), *self.level_with.items(), *self.not_ahead.items(),
                 *self.worst_beats_best.items(), *self.faster_than.items(), *self.level_along.items(),
                 *self.lead_grows.items()]
        named = [*self.below, *self.above, *self.reached_by, *self.still_holds, *self.learned_then_unlearned,
                 *self.gain, *(v for a, bs in pairs for v in (a, *bs))]
        return tuple(dict.fromkeys(named))

    def region_columns(self) -> tuple[str, ...]:
        """The columns its regions (``where``, ``versus_where``) bound."""
        return tuple(dict.fromkeys([*self.where, *(self.versus_where or {})]))
