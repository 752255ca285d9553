"""The `Study`: a declarative search space over architectures, tasks, hyperparameters and seeds.

Vocabulary follows the tuning playbook: *scientific* hyperparameters are what a study measures the
effect of (architecture, model size), *nuisance* hyperparameters must be tuned for a fair comparison
(learning rate), *fixed* ones are held constant. A study is a frozen, keyword-only value; importing a
module that defines studies has no side effects.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

SAMPLERS = ("grid", "random", "qmc", "tpe")
SCALES = ("paper", "cpu", "smoke")
MODES = ("max", "min")


class StudyError(ValueError):
    """An invalid study definition or request; the message names the field, the value, what is allowed."""


def _fail(field_name: str, value: Any, allowed: str) -> StudyError:
    return StudyError(f"invalid {field_name} {value!r}; allowed: {allowed}")


@dataclass(frozen=True, kw_only=True)
class LogUniform:
    """A continuous axis sampled log-uniformly in [low, high] (random / qmc / tpe samplers only)."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if not 0 < self.low < self.high:
            raise _fail("LogUniform bounds", (self.low, self.high), "0 < low < high")


@dataclass(frozen=True, kw_only=True)
class Uniform:
    """A continuous axis sampled uniformly in [low, high] (random / qmc / tpe samplers only)."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise _fail("Uniform bounds", (self.low, self.high), "low < high")


@dataclass(frozen=True, kw_only=True)
class IntRange:
    """An integer axis in [low, high], optionally log-spaced (random / qmc / tpe samplers only)."""

    low: int
    high: int
    log: bool = False

    def __post_init__(self) -> None:
        if not self.low < self.high or (self.log and self.low < 1):
            raise _fail("IntRange bounds", (self.low, self.high), "low < high (and low >= 1 when log)")


@dataclass(frozen=True, kw_only=True)
class Linked:
    """A categorical axis whose every value sets several hyperparameters together.

    Example: Fig. 13 keeps examples seen constant, so ``batch_size`` 4 comes with ``n_steps`` 25600.
    The axis name becomes a column of its own (the label) next to the hyperparameters it sets.
    """

    options: Mapping[Any, Mapping[str, Any]]

    def __post_init__(self) -> None:
        if not self.options:
            raise _fail("Linked options", dict(self.options), "at least one option")


Distribution = LogUniform | Uniform | IntRange
Axis = tuple[Any, ...] | Linked | Distribution


@dataclass(frozen=True, kw_only=True)
class Plot:
    """How the report lays out the RGB grids: one panel per `panel` value, `x` across, `y` down."""

    panel: str = "architecture"
    x: str = "d_model"
    y: str = "learning_rate"


@dataclass(frozen=True, kw_only=True)
class Finding:
    """A qualitative claim the report checks: a statistic of `metric`'s G per panel value against a bound.

    By default the statistic is the best G over the whole grid; `where` restricts it to a region (e.g. a band
    of learning rates: ``{"learning_rate": {"min": 0.027}}``, or x values: ``{"seq_len": (256,)}``), and
    `statistic` is ``best``, ``worst``, ``mean``, ``share`` (of the region's cells with G >= `level`) or ``spread``
    (the mean over the region's cells of B - R: how far the best and worst seed lie apart).
    `metric` is a results column, or per cell ``min(a, b, ...)`` / ``max(a, b, ...)`` / ``a - b`` of columns'
    G (e.g. all three case accuracies learned: ``min(val_argmin_accuracy, val_first_accuracy,
    val_argmax_accuracy)``). `below` / `above` bound the value per panel value; `ahead` compares panel
    values: ``{"NAP": ("BERT",)}`` means NAP's value >= BERT's + `margin` (BERT's over `versus_where` when
    given, e.g. the same architecture at other x values). Semantics and verdicts: docs/cli.md, Findings.
    """

    description: str
    metric: str = "val_accuracy"
    below: Mapping[str, float] = field(default_factory=dict)
    above: Mapping[str, float] = field(default_factory=dict)
    #: Scales at which the claim can show; elsewhere the report says "not checked at this scale".
    scales: tuple[str, ...] = ("paper", "cpu")
    #: The paper's words and where it says them (section, figure, observation).
    quote: str = ""
    where: Mapping[str, Any] = field(default_factory=dict)
    statistic: str = "best"
    level: float = 0.5
    ahead: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    margin: float = 0.0
    versus_where: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class Study:
    """One paper figure or table (or a question of our own) as a search space.

    Attributes:
        name: stable dotted name, e.g. ``richter2020.fig7``; also the results directory.
        goal: one sentence: what the study answers.
        tasks: the task(s) the study trains (``cases``, ``mode``, ``ctl``, ``nt``, ``pooling_scale`` ...: names of
            ``trainables.catalog``, checked by ``study.run.preflight``); each selects the model family that trains (or,
            for Fig. 1, measures) its configurations. One task: every trial trains it. Several: the search space
            sweeps them as a ``task`` axis, whose values must be these; left empty, they are that axis's values.
        scientific: axes whose effect is measured (e.g. architecture, d_model).
        nuisance: axes tuned away for a fair comparison (e.g. learning_rate).
        fixed: hyperparameters held constant (e.g. n_steps, seq_len).
        seeds: every trial trains each configuration once per seed.
        sampler: ``grid`` (every point exactly once), ``random``, ``qmc`` or ``tpe`` (Optuna).
        metric: the column the sampler optimises and the report ranks by.
        mode: ``max`` or ``min`` for `metric`.
        n_trials: trial budget for the non-grid samplers (grid: the whole grid).
        plot: axes of the report's grids.
        reference: published results to draw beside the reproduction (``richter2020/<file>``).
        deviations: where this study departs from the paper, stated in its report.
        findings: qualitative claims the report checks with numbers.
        aliases: other figure/table names these same trials reproduce.
        learning_rates_per_trial: grid only: this many neighbouring values of the ``learning_rate`` axis
            train together in one trial (one packed model with all their seeds); 1 = one rate per trial.
        sections: extra report sections by name (``analysis.report.sections``), after the built-in ones the
            rows call for (the grids of trained models, Fig. 1's pooling scale).
        labels: names in the configuration that are columns of the study's own, not hyperparameters of the
            model (a ``Linked`` axis's name is one without being listed). Any other name that is not a field of
            the task's model family is refused before anything runs: a typo never trains at a default.
        scale: ``paper``, ``cpu`` or ``smoke``; set by `at_scale`.
        scales: per-scale overrides of the fields above (mappings are merged key by key).
        table_by: columns the paper's table is per, beside the panel (e.g. ``("vocab_size",)`` for Table 5).
        plugins: modules to import before anything runs, in the driver and on every Ray worker (your mixers,
            tasks or model families: ``("my_pkg.mixers",)``; :mod:`trainables.plugins`); their names are part of
            every trial key, their versions and hashes are recorded in study.json and the rows.
    """

    name: str
    goal: str
    tasks: tuple[str, ...] = ()
    scientific: Mapping[str, Axis]
    nuisance: Mapping[str, Axis] = field(default_factory=dict)
    fixed: Mapping[str, Any] = field(default_factory=dict)
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    sampler: str = "grid"
    metric: str = "val_accuracy"
    mode: str = "max"
    n_trials: int | None = None
    plot: Plot = field(default_factory=Plot)
    reference: str | None = None
    deviations: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    aliases: tuple[str, ...] = ()
    learning_rates_per_trial: int = 1
    sections: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    scale: str = "paper"
    scales: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    table_by: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for field_name, value, allowed in (("sampler", self.sampler, SAMPLERS), ("mode", self.mode, MODES),
                                           ("scale", self.scale, SCALES)):
            if value not in allowed:
                raise _fail(f"{field_name} of study {self.name}", value, ", ".join(allowed))
        for scale in self.scales:
            if scale not in SCALES[1:]:
                raise _fail(f"scales key of study {self.name}", scale, ", ".join(SCALES[1:]))
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise _fail(f"seeds of study {self.name}", self.seeds, "a non-empty tuple of distinct ints")
        overlap = (set(self.scientific) & set(self.nuisance)) | (set(self.axes) & set(self.fixed))
        if overlap:
            raise _fail(f"hyperparameters of study {self.name}", sorted(overlap),
                        "each name in exactly one of scientific / nuisance / fixed")
        self._check_sampler()
        for key, axis in self.axes.items():
            if isinstance(axis, tuple) and not axis:
                raise _fail(f"axis {key} of study {self.name}", axis, "at least one value")
        self._check_tasks()

    def _check_tasks(self) -> None:
        """``tasks`` names what the trials train: one task, or exactly the values of the ``task`` axis."""
        axis = self.axes.get("task")
        if "task" in self.fixed:
            raise _fail(f"fixed of study {self.name}", {"task": self.fixed["task"]}, "no task: declare it in tasks")
        if isinstance(axis, Distribution):
            raise _fail(f"task axis of study {self.name}", axis, "a tuple of task names or a Linked axis")
        swept = None if axis is None else tuple(dict.fromkeys(axis_values(axis)))
        if not self.tasks and swept is not None:  # derived from the search space
            object.__setattr__(self, "tasks", swept)
        tasks = self.tasks
        if (not isinstance(tasks, tuple) or not tasks or not all(isinstance(t, str) and t for t in tasks)
                or len(set(tasks)) != len(tasks)):
            raise _fail(f"tasks of study {self.name}", tasks, "a non-empty tuple of distinct task names, e.g. "
                        "('mode',) (trainables.catalog)")
        if axis is None and len(tasks) > 1:
            raise _fail(f"tasks of study {self.name}", tasks, "one task, or a task axis that sweeps these tasks")
        if swept is not None and set(swept) != set(tasks):
            raise _fail(f"tasks of study {self.name}", tasks, f"the values of its task axis: {swept}")

    def _check_sampler(self) -> None:
        """The sampler fits the axes: grids need categorical axes, the others a budget; packed rates a grid."""
        continuous = [k for k, a in self.axes.items() if isinstance(a, Distribution)]
        if self.sampler == "grid" and continuous:
            raise _fail(f"sampler of study {self.name}", "grid",
                        f"random, qmc or tpe when axes are continuous ({', '.join(continuous)})")
        if self.sampler != "grid" and (self.n_trials is None or self.n_trials < 1):
            raise _fail(f"n_trials of study {self.name}", self.n_trials,
                        f"a positive int for sampler {self.sampler}")
        if self.learning_rates_per_trial != 1:
            rates = self.axes.get("learning_rate")
            if self.sampler != "grid" or not isinstance(rates, tuple) or self.learning_rates_per_trial < 1:
                raise _fail(f"learning_rates_per_trial of study {self.name}", self.learning_rates_per_trial,
                            "1, or more with the grid sampler and a learning_rate axis of values")

    @property
    def axes(self) -> dict[str, Axis]:
        """Scientific then nuisance axes, in declaration order."""
        return {**self.scientific, **self.nuisance}

    @property
    def label_names(self) -> tuple[str, ...]:
        """The declared label columns: ``labels`` and the names of the ``Linked`` axes."""
        linked = tuple(k for k, a in self.axes.items() if isinstance(a, Linked) and k not in self.labels)
        return self.labels + linked

    @property
    def directory(self) -> str:
        """The results directory name: the study name, plus the scale unless it is ``paper``."""
        return self.name if self.scale == "paper" else f"{self.name}.{self.scale}"

    def at_scale(self, scale: str) -> Study:
        """This study at ``paper``, ``cpu`` or ``smoke`` scale (overrides merged over the paper scale)."""
        if scale not in SCALES:
            raise _fail("scale", scale, ", ".join(SCALES))
        if scale == self.scale:
            return self
        if self.scale != "paper":
            raise StudyError(f"study {self.name} is already at scale {self.scale}; rescale the paper scale")
        changes: dict[str, Any] = {"scale": scale}
        for key, value in self.scales.get(scale, {}).items():
            if key not in {f.name for f in dataclasses.fields(self)}:
                raise _fail(f"override in scale {scale} of study {self.name}", key, "a Study field")
            current = getattr(self, key)
            changes[key] = {**current, **value} if isinstance(current, Mapping) else value
        # A budget shared by all studies (e.g. smoke's seq_len) yields to a study's own axis.
        axes = {**changes.get("scientific", self.scientific), **changes.get("nuisance", self.nuisance)}
        fixed = changes.get("fixed", self.fixed)
        changes["fixed"] = {k: v for k, v in fixed.items() if k not in axes}
        if "task" in axes and "tasks" not in changes:  # the scale's task axis says what trains there
            changes["tasks"] = ()
        return dataclasses.replace(self, **changes)

    def grid_size(self) -> int:
        """Number of grid points (configurations); only meaningful for categorical axes."""
        return math.prod(len(axis_values(a)) for a in self.axes.values())

    def trial_count(self) -> int:
        """Trials this study runs: the grid (learning rates packed as asked), or the sampler's budget."""
        if self.sampler != "grid":
            return int(self.n_trials or 0)
        if self.learning_rates_per_trial == 1:
            return self.grid_size()
        rates = len(self.axes["learning_rate"])
        return self.grid_size() // rates * math.ceil(rates / self.learning_rates_per_trial)

    def grid(self) -> Iterator[dict[str, Any]]:
        """Every trial's flat configuration (axes expanded, fixed values and task included).

        With ``learning_rates_per_trial > 1`` a trial's ``learning_rate`` is a list of neighbouring rates.
        """
        axes = {n: axis_values(a) for n, a in self.axes.items()}
        if self.learning_rates_per_trial > 1:
            rates = list(axes["learning_rate"])
            k = self.learning_rates_per_trial
            axes["learning_rate"] = tuple(rates[i:i + k] for i in range(0, len(rates), k))
        names = list(axes)
        for values in itertools.product(*(axes[n] for n in names)):
            yield self.configuration(dict(zip(names, values, strict=True)))

    def configuration(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """The flat trial configuration for one point of the search space."""
        # One task and no task axis: every trial trains it; otherwise the axis sets it (as before `tasks` existed,
        # so the trial keys of studies on disk do not change).
        config: dict[str, Any] = {"task": self.tasks[0], **self.fixed} if "task" not in self.axes else {**self.fixed}
        for name, value in point.items():
            axis = self.axes.get(name)
            if isinstance(axis, Linked):
                if value not in axis.options:
                    raise _fail(f"value of axis {name}", value, ", ".join(map(str, axis.options)))
                config.update(axis.options[value])
            config[name] = value
        return config

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready description (the ``study.json`` contract in docs/results.md)."""
        return {
            "name": self.name,
            "directory": self.directory,
            "scale": self.scale,
            "goal": self.goal,
            "tasks": list(self.tasks),
            "scientific": {k: _axis_json(a) for k, a in self.scientific.items()},
            "nuisance": {k: _axis_json(a) for k, a in self.nuisance.items()},
            "fixed": dict(self.fixed),
            "seeds": list(self.seeds),
            "sampler": self.sampler,
            "n_trials": self.trial_count(),
            "metric": self.metric,
            "mode": self.mode,
            "plot": dataclasses.asdict(self.plot),
            "reference": self.reference,
            "deviations": list(self.deviations),
            "findings": [dataclasses.asdict(f) for f in self.findings],
            "aliases": list(self.aliases),
            "learning_rates_per_trial": self.learning_rates_per_trial,
            "sections": list(self.sections),
            "labels": list(self.label_names),
            "table_by": list(self.table_by),
            "plugins": list(self.plugins),
        }


def axis_values(axis: Axis) -> tuple[Any, ...]:
    """A grid axis's values in order (a Linked axis's labels); a continuous axis is an error."""
    if isinstance(axis, Linked):
        return tuple(axis.options)
    if isinstance(axis, tuple):
        return axis
    raise StudyError(f"axis {axis!r} is continuous and has no grid; allowed: a tuple or Linked")


def _axis_json(axis: Axis) -> Any:
    if isinstance(axis, tuple):
        return list(axis)
    if isinstance(axis, Linked):
        return {str(k): dict(v) for k, v in axis.options.items()}
    return {"distribution": type(axis).__name__, **dataclasses.asdict(axis)}
