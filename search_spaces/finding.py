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

from search_spaces.schema import SCALES, Schema, fail

#: What a finding computes over the cells of its region, per panel value (docs/cli.md, Findings).
STATISTICS = ("best", "worst", "mean", "share", "spread")

_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CALL = re.compile(r"^(min|max)\((.+)\)$")


def metric_columns(metric: str) -> tuple[str, ...]:
    """The results columns a finding's metric reads: ``min(a, b)`` -> ``(a, b)``, ``a - b`` -> ``(a, b)``."""
    compact = metric.replace(" ", "")
    call = _CALL.match(compact)
    if call:
        return tuple(call.group(2).split(","))
    if "-" in compact:
        return tuple(compact.split("-", 1))
    return (compact,)


def direction(metric: str) -> str:
    """``min`` when lower is better, else ``max``: declared here once for every study's mode, finding, sampler and
    report. A loss (a single column named ``*loss*``) is minimised; every other metric (accuracies, output scales,
    combinations of accuracies) is maximised."""
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
    still calls none. Semantics and verdicts: docs/cli.md, Findings.
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
    not_ahead: dict[str, tuple[str, ...]] = {}
    #: level_with / not_ahead: the largest difference that still counts as none (required with them, refused without)
    equivalence_margin: float | None = None
    versus_where: dict[str, Any] | None = None

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

    @field_validator("ahead", "level_with", "not_ahead", mode="before")
    @classmethod
    def _ahead(cls, raw: Any, info: Any) -> Any:
        if not isinstance(raw, Mapping) or not all(isinstance(v, Sequence) and not isinstance(v, str) and v
                                                   for v in raw.values()):
            raise fail(info.field_name, raw, "a mapping panel value -> a non-empty tuple of panel values")
        return {str(a): tuple(str(b) for b in bs) for a, bs in raw.items()}

    @field_validator("below", "above", mode="before")
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
        if self.statistic == "spread" and len(columns) > 1:
            raise fail(f"metric of {named}", self.metric, "one results column with statistic spread")
        for name in ("level", "margin"):
            if not _is_number(getattr(self, name)):
                raise fail(f"{name} of {named}", getattr(self, name), "a finite number")
        equivalence = bool(self.level_with or self.not_ahead)
        margin = self.equivalence_margin
        if equivalence and (margin is None or not _is_number(margin) or margin < 0):
            raise fail(f"equivalence_margin of {named}", margin, "a number >= 0 with level_with or not_ahead: the "
                                                                  "largest difference that still counts as none")
        if margin is not None and not equivalence:
            raise fail(f"equivalence_margin of {named}", margin, "None without level_with or not_ahead")
        if not (self.below or self.above or self.ahead or self.level_with or self.not_ahead):
            raise fail(f"bounds of {named}", {}, "at least one of below, above, ahead, level_with, not_ahead")
        return self

    def checked_at(self, scale: str) -> bool:
        """Whether this finding is checked for a study run at ``scale``."""
        return scale in self.scales

    def metric_of(self, study_metric: str) -> str:
        """The metric the finding reads in a study whose own metric is ``study_metric``."""
        return self.metric or study_metric

    def panel_values(self) -> tuple[str, ...]:
        """Every panel value the finding names (its bounds' keys, and the values ``ahead`` compares with)."""
        pairs = [*self.ahead.items(), *self.level_with.items(), *self.not_ahead.items()]
        named = [*self.below, *self.above, *(v for a, bs in pairs for v in (a, *bs))]
        return tuple(dict.fromkeys(named))

    def region_columns(self) -> tuple[str, ...]:
        """The columns its regions (``where``, ``versus_where``) bound."""
        return tuple(dict.fromkeys([*self.where, *(self.versus_where or {})]))
