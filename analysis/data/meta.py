"""A study's definition (``study.json``, see ``docs/results.md``) parsed once into typed values.

This is the only reader of ``study.json`` (the driver writes it, ``study/run/runner.py``): everything the report,
the CLI (``status``, ``compare``, ``importance``, ``findings``, ``verify``) and the notebooks need from it is a
field of :class:`StudyMeta`; nothing indexes the raw dict. Unknown keys are errors naming the file, the
key and the allowed keys (a typo such as ``"findngs"`` would otherwise silently drop every check).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from analysis.data.location import Location

MODES = ("max", "min")


class MetaError(ValueError):
    """An invalid study definition; the message names the file, the field, the value and what is allowed."""


def _fail(source: str, what: str, value: object, allowed: str) -> MetaError:
    return MetaError(f"{source}: invalid {what} {value!r}; allowed: {allowed}")


def _check_keys(source: str, where: str, data: Mapping[str, Any], allowed: Sequence[str]) -> None:
    unknown = [k for k in data if k not in allowed]
    if unknown:
        raise MetaError(f"{source}: unknown key {unknown[0]!r} in {where}; allowed: {', '.join(allowed)}")


@dataclass(frozen=True)
class PlotSpec:
    """How the grids are laid out: one panel per ``panel`` value, ``x`` across, ``y`` up (None: choose)."""

    panel: str | None = None
    x: str | None = None
    y: str | None = None


#: What a finding computes over the cells of its region, per panel value (docs/cli.md, Findings).
STATISTICS = ("best", "worst", "mean", "share", "spread")


@dataclass(frozen=True)
class FindingSpec:
    """A qualitative claim checked with numbers: a statistic of ``metric``'s G per panel value vs a bound.

    ``below``: the value must be at most the threshold; ``above``: at least. ``ahead``: panel value A ->
    the panel values B it must reach: A's value >= B's value + ``margin`` (B's over ``versus_where`` when
    given). The value is ``statistic`` (best / worst / mean G, the ``share`` of cells with G >= ``level``, or the
    ``spread``: the mean over cells of B - R, the best seed's accuracy minus the worst's)
    over the cells in ``where`` (column -> list of values, or ``{"min": a, "max": b}``; empty: the whole
    grid). ``scales``: the scales at which the claim can show (None: every scale); elsewhere it is "not
    checked at this scale". ``quote``: the paper's words and where it says them. Files written before the
    region fields existed lack them: the defaults are the old meaning (best G over the whole grid).
    """

    description: str
    metric: str | None = None
    below: Mapping[str, float] = field(default_factory=dict)
    above: Mapping[str, float] = field(default_factory=dict)
    scales: tuple[str, ...] | None = None
    quote: str = ""
    where: Mapping[str, Any] = field(default_factory=dict)
    statistic: str = "best"
    level: float = 0.5
    ahead: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    margin: float = 0.0
    versus_where: Mapping[str, Any] | None = None

    def checked_at(self, scale: str) -> bool:
        """Whether this finding is checked for a study run at ``scale``."""
        return self.scales is None or scale in self.scales


_FINDING_KEYS = ("description", "metric", "below", "above", "scales", "quote", "where", "statistic", "level",
                 "ahead", "margin", "versus_where")


def _number(source: str, what: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(source, what, value, "a number")
    return float(value)


def _region(source: str, what: str, raw: Any) -> dict[str, Any]:
    """A region of the grid: column -> list of values, or {"min": a, "max": b} (either may be left out)."""
    if not isinstance(raw, Mapping):
        raise _fail(source, what, raw, "a mapping column -> list of values or {min, max}")
    region: dict[str, Any] = {}
    for column, spec in raw.items():
        if isinstance(spec, Mapping):
            _check_keys(source, f"{what}.{column}", spec, ("min", "max"))
            if not spec:
                raise _fail(source, f"{what}.{column}", dict(spec), "min and/or max")
            region[str(column)] = {k: _number(source, f"{what}.{column}.{k}", v) for k, v in spec.items()}
        elif isinstance(spec, Sequence) and not isinstance(spec, str) and spec:
            region[str(column)] = list(spec)
        else:
            raise _fail(source, f"{what}.{column}", spec, "a non-empty list of values or {min, max}")
    return region


def _ahead(source: str, what: str, raw: Any) -> dict[str, tuple[str, ...]]:
    if not isinstance(raw, Mapping) or not all(isinstance(v, Sequence) and not isinstance(v, str)
                                               for v in raw.values()):
        raise _fail(source, what, raw, "a mapping panel value -> list of panel values")
    return {str(a): tuple(str(b) for b in bs) for a, bs in raw.items()}


def _finding(source: str, i: int, data: Mapping[str, Any]) -> FindingSpec:
    where = f"findings[{i}]"
    _check_keys(source, where, data, _FINDING_KEYS)
    bounds = {}
    for relation in ("below", "above"):
        raw = data.get(relation) or {}
        if not isinstance(raw, Mapping) or not all(isinstance(v, int | float) for v in raw.values()):
            raise _fail(source, f"{where}.{relation}", raw, "a mapping panel value -> number")
        bounds[relation] = {str(k): float(v) for k, v in raw.items()}
    statistic = data.get("statistic") or "best"
    if statistic not in STATISTICS:
        raise _fail(source, f"{where}.statistic", statistic, ", ".join(STATISTICS))
    scales, versus = data.get("scales"), data.get("versus_where")
    return FindingSpec(
        description=str(data.get("description") or f"finding {i}"),
        metric=data.get("metric"),
        scales=None if scales is None else tuple(str(s) for s in scales),
        quote=str(data.get("quote") or ""),
        where=_region(source, f"{where}.where", data.get("where") or {}),
        statistic=statistic,
        level=_number(source, f"{where}.level", data.get("level", 0.5)),
        ahead=_ahead(source, f"{where}.ahead", data.get("ahead") or {}),
        margin=_number(source, f"{where}.margin", data.get("margin", 0.0)),
        versus_where=None if versus is None else _region(source, f"{where}.versus_where", versus),
        **bounds,
    )


@dataclass(frozen=True)
class StudyMeta:
    """The fields of ``study.json`` (docs/results.md). Defaults stand for keys an older file lacks."""

    name: str = ""
    directory: str = ""
    scale: str = ""
    goal: str = ""
    tasks: tuple[str, ...] = ()
    scientific: Mapping[str, Any] = field(default_factory=dict)
    nuisance: Mapping[str, Any] = field(default_factory=dict)
    fixed: Mapping[str, Any] = field(default_factory=dict)
    seeds: tuple[int, ...] = ()
    sampler: str = "grid"
    n_trials: int | None = None
    metric: str = "val_accuracy"
    mode: str = "max"
    plot: PlotSpec = field(default_factory=PlotSpec)
    reference: str | None = None
    deviations: tuple[str, ...] = ()
    findings: tuple[FindingSpec, ...] = ()
    aliases: tuple[str, ...] = ()
    learning_rates_per_trial: int = 1
    sections: tuple[str, ...] = ()
    #: Columns the paper's table is per (beside the panel), e.g. ``("vocab_size",)`` for Table 5.
    table_by: tuple[str, ...] = ()
    #: Label columns a study declares (kept as written; the report does not interpret them).
    labels: Any = None
    #: Modules the study names as plugins (its mixers, tasks or families of your own); every plugin the latest run
    #: loaded, with its version and hash, is in ``run["plugins"]``.
    plugins: tuple[str, ...] = ()
    versions: Mapping[str, Any] = field(default_factory=dict)
    #: The latest run: the driver's machine and the settings that decide the numbers (threads per trial,
    #: precision, GPUs per trial, packing); every row also records the machine that trained it.
    run: Mapping[str, Any] = field(default_factory=dict)
    #: Where this definition came from (named in error messages); not a study.json key.
    source: str = "study.json"

    @property
    def axes(self) -> dict[str, Any]:
        """Scientific then nuisance axes as written in study.json."""
        return {**self.scientific, **self.nuisance}

    def axis_values(self, name: str) -> list[Any] | None:
        """The grid values of axis ``name`` (a Linked axis: its labels); None for continuous or absent axes."""
        axis = self.axes.get(name)
        if isinstance(axis, list):
            return axis
        if isinstance(axis, Mapping) and "distribution" not in axis:
            return list(axis)
        return None


#: Keys older files carry that no longer mean anything: accepted, ignored (``kind``: a task's family now says
#: how its trials run, and the report draws what the rows hold), or read into their successor (``task``: one
#: task, or a word such as "every task" / "cases+mode" beside a task axis; now ``tasks``, see _tasks).
RETIRED_KEYS = ("kind", "task")
_KEYS = (*(f.name for f in fields(StudyMeta) if f.name != "source"), *RETIRED_KEYS)


def _tasks(data: Mapping[str, Any]) -> tuple[str, ...]:
    """``tasks``; in a file written before it, the values of the task axis, else the one ``task``."""
    if "tasks" in data:
        return tuple(str(t) for t in data["tasks"] or ())
    axes = {**(data.get("scientific") or {}), **(data.get("nuisance") or {})}
    axis = axes.get("task")
    if isinstance(axis, list | Mapping):
        return tuple(str(t) for t in axis)
    return (str(data["task"]),) if data.get("task") else ()


def parse_meta(data: Mapping[str, Any] | StudyMeta, source: str = "study.json") -> StudyMeta:
    """A :class:`StudyMeta` from a study.json mapping (a StudyMeta is returned unchanged).

    Raises:
        MetaError: naming ``source``, the key and what is allowed, for an unknown key or a bad value.
    """
    if isinstance(data, StudyMeta):
        return data
    _check_keys(source, "study.json", data, _KEYS)
    plot = data.get("plot") or {}
    _check_keys(source, "plot", plot, ("panel", "x", "y"))
    mode = data.get("mode", "max")
    if mode not in MODES:
        raise _fail(source, "mode", mode, ", ".join(MODES))
    n_trials = data.get("n_trials")
    if n_trials is not None and (not isinstance(n_trials, int) or n_trials < 0):
        raise _fail(source, "n_trials", n_trials, "an integer >= 0 or null")
    return StudyMeta(
        name=str(data.get("name") or ""),
        directory=str(data.get("directory") or ""),
        scale=str(data.get("scale") or ""),
        goal=str(data.get("goal") or ""),
        tasks=_tasks(data),
        scientific=dict(data.get("scientific") or {}),
        nuisance=dict(data.get("nuisance") or {}),
        fixed=dict(data.get("fixed") or {}),
        seeds=tuple(int(s) for s in data.get("seeds") or ()),
        sampler=str(data.get("sampler") or "grid"),
        n_trials=n_trials,
        metric=str(data.get("metric") or "val_accuracy"),
        mode=mode,
        plot=PlotSpec(panel=plot.get("panel"), x=plot.get("x"), y=plot.get("y")),
        reference=data.get("reference") or None,
        deviations=tuple(str(d) for d in data.get("deviations") or ()),
        findings=tuple(_finding(source, i, f) for i, f in enumerate(data.get("findings") or ())),
        aliases=tuple(str(a) for a in data.get("aliases") or ()),
        learning_rates_per_trial=int(data.get("learning_rates_per_trial") or 1),
        sections=tuple(str(s) for s in data.get("sections") or ()),
        table_by=tuple(str(c) for c in data.get("table_by") or ()),
        labels=data.get("labels"),
        plugins=tuple(str(m) for m in data.get("plugins") or ()),
        versions=dict(data.get("versions") or {}),
        run=dict(data.get("run") or {}),
        source=source,
    )


def read_study_meta(study_dir: str | Path | Location) -> StudyMeta:
    """The parsed ``<study_dir>/study.json`` (a local directory or a URI, read in place).

    Raises:
        FileNotFoundError: when the study has no ``study.json``.
        MetaError: when it is not valid JSON or has an unknown key or a bad value (naming the file).
    """
    location = Location.of(study_dir)
    path = location.join("study.json")
    text = location.read_bytes("study.json")
    if text is None:
        raise FileNotFoundError(f"no study definition {path}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise MetaError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(data, Mapping):
        raise MetaError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return parse_meta(data, str(path))


def recorded_run(study_dir: str | Path | Location) -> Mapping[str, Any]:
    """study.json's ``run`` (the latest run's driver and settings); empty when the study has no study.json yet.

    Raises:
        MetaError: when study.json exists but is not a valid study definition.
    """
    try:
        return read_study_meta(study_dir).run
    except FileNotFoundError:
        return {}
