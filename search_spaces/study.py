"""The `Study`: a declarative search space over architectures, tasks, hyperparameters and seeds.

Vocabulary follows the tuning playbook: *scientific* hyperparameters are what a study measures the
effect of (architecture, model size), *nuisance* hyperparameters must be tuned for a fair comparison
(learning rate), *fixed* ones are held constant. A study is a frozen, keyword-only value checked when it is
built (:mod:`search_spaces.schema`): every field, every scale's overrides and every finding against the study's
columns and panel values. ``study.json`` is the same type written out (:mod:`search_spaces.record`). Importing a
module that defines studies has no side effects.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from pydantic import model_validator

from search_spaces.axes import Axis, AxisField, as_axis
from search_spaces.finding import Finding, direction, is_probe
from search_spaces.schema import SCALES, Schema, StudyError, fail

SAMPLERS = ("grid", "random", "qmc", "tpe")
MODES = ("max", "min")
#: How a study spends its seeds: every seed on every cell, or seeds only where a finding is undecided.
BUDGETS = ("fixed", "adaptive")


class Plot(Schema):
    """How the report lays out the RGB grids: one panel per `panel` value, `x` across, `y` down (None: the
    report chooses; a record written without a layout)."""

    label: ClassVar[str] = "plot"

    panel: str | None = "architecture"
    x: str | None = "d_model"
    y: str | None = "learning_rate"


class Study(Schema):
    """One paper figure or table (or a question of our own) as a search space.

    Attributes:
        name: stable dotted name, e.g. ``richter2020.fig7``; also the results directory.
        goal: one sentence: what the study answers.
        tasks: the task(s) the study trains (``cases``, ``mode``, ``ctl``, ``nt``, ``pooling_scale`` ...: names of
            ``trainables.catalog``, checked by ``study.run.preflight``); each selects the model family that trains (or,
            for Fig. 1, measures) its configurations. One task: every trial trains it. Several: the search space
            sweeps them as a ``task`` axis, whose values must be these; left empty, they are that axis's values.
        scientific: axes whose effect is measured (e.g. architecture, d_model): tuples of values, ``Linked`` axes or
            distributions (:mod:`search_spaces.axes`).
        nuisance: axes tuned away for a fair comparison (e.g. learning_rate).
        fixed: hyperparameters held constant (e.g. n_steps, seq_len).
        seeds: every configuration trains once per seed.
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
        confidence: the confidence of every finding's verdict (its intervals from seed variation; docs/cli.md).
        budget: ``fixed`` (every cell trains every seed) or ``adaptive`` (every cell starts with `initial_seeds`;
            further seeds go only where a finding is still undecided: docs/budget.md). Grid studies with findings.
        initial_seeds: adaptive budget: how many seeds every cell starts with (the first of `seeds`; None: 2, or
            every seed of a study with fewer).
    """

    label: ClassVar[str] = "study"

    name: str
    goal: str
    tasks: tuple[str, ...] = ()
    scientific: dict[str, AxisField]
    nuisance: dict[str, AxisField] = {}
    fixed: dict[str, Any] = {}
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    sampler: str = "grid"
    metric: str = "val_accuracy"
    mode: str = "max"
    n_trials: int | None = None
    plot: Plot = Plot()
    reference: str | None = None
    deviations: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    aliases: tuple[str, ...] = ()
    learning_rates_per_trial: int = 1
    sections: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    scale: str = "paper"
    scales: dict[str, dict[str, Any]] = {}
    table_by: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    confidence: float = 0.95
    budget: str = "fixed"
    initial_seeds: int | None = None

    @model_validator(mode="before")
    @classmethod
    def _derive_tasks(cls, data: Any) -> Any:
        """``tasks`` left empty beside a ``task`` axis are that axis's values."""
        if isinstance(data, Mapping) and not data.get("tasks"):
            axes = {**(data.get("scientific") or {}), **(data.get("nuisance") or {})}
            if "task" in axes:
                axis = as_axis(axes["task"])
                if not axis.on_grid:
                    raise fail(f"task axis of study {data.get('name')}", axis, "a tuple of task names or a Linked axis")
                data = {**data, "tasks": tuple(dict.fromkeys(axis.grid_values()))}
        return data

    @model_validator(mode="before")
    @classmethod
    def _derive_mode(cls, data: Any) -> Any:
        """``mode`` left out is its metric's direction (search_spaces.finding.direction)."""
        if isinstance(data, Mapping) and data.get("mode") is None:
            data = {**data, "mode": direction(str(data.get("metric") or "val_accuracy"))}
        return data

    @model_validator(mode="after")
    def _check(self) -> Study:
        for field_name, value, allowed in (("sampler", self.sampler, SAMPLERS), ("mode", self.mode, MODES),
                                           ("scale", self.scale, SCALES), ("budget", self.budget, BUDGETS)):
            if value not in allowed:
                raise fail(f"{field_name} of study {self.name}", value, ", ".join(allowed))
        if is_probe(self.metric):
            raise fail(f"metric of study {self.name}", self.metric, "a results column that is not a probe (a probe "
                       "has no better or worse to optimise; a finding reads it at the checkpoint the metric picks)")
        if self.mode != direction(self.metric):
            raise fail(f"mode of study {self.name}", self.mode, f"{direction(self.metric)!r}, the direction of its "
                       f"metric {self.metric!r} (a loss is minimised, everything else maximised: "
                       "search_spaces.finding.direction)")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise fail(f"seeds of study {self.name}", self.seeds, "a non-empty tuple of distinct ints")
        overlap = (set(self.scientific) & set(self.nuisance)) | (set(self.axes) & set(self.fixed))
        if overlap:
            raise fail(f"hyperparameters of study {self.name}", sorted(overlap),
                       "each name in exactly one of scientific / nuisance / fixed")
        if not 0.5 <= self.confidence < 1:
            raise fail(f"confidence of study {self.name}", self.confidence, "a number in [0.5, 1), e.g. 0.95")
        self._check_sampler()
        self._check_budget()
        self._check_tasks()
        self._check_findings()
        self._check_scales()
        return self

    def _check_tasks(self) -> None:
        """``tasks`` names what the trials train: one task, or exactly the values of the ``task`` axis."""
        if "task" in self.fixed:
            raise fail(f"fixed of study {self.name}", {"task": self.fixed["task"]}, "no task: declare it in tasks")
        tasks, axis = self.tasks, self.axes.get("task")
        if not tasks or not all(isinstance(t, str) and t for t in tasks) or len(set(tasks)) != len(tasks):
            raise fail(f"tasks of study {self.name}", tasks, "a non-empty tuple of distinct task names, e.g. "
                       "('mode',) (trainables.catalog)")
        if axis is None and len(tasks) > 1:
            raise fail(f"tasks of study {self.name}", tasks, "one task, or a task axis that sweeps these tasks")
        swept = None if axis is None else tuple(dict.fromkeys(axis.grid_values()))
        if swept is not None and set(swept) != set(tasks):
            raise fail(f"tasks of study {self.name}", tasks, f"the values of its task axis: {swept}")

    def _check_sampler(self) -> None:
        """The sampler fits the axes: grids need categorical axes, the others a budget; packed rates a grid."""
        continuous = [k for k, a in self.axes.items() if not a.on_grid]
        if self.sampler == "grid" and continuous:
            raise fail(f"sampler of study {self.name}", "grid",
                       f"random, qmc or tpe when axes are continuous ({', '.join(continuous)})")
        if self.sampler != "grid" and (self.n_trials is None or self.n_trials < 1):
            raise fail(f"n_trials of study {self.name}", self.n_trials, f"a positive int for sampler {self.sampler}")
        if self.learning_rates_per_trial != 1:
            rates = self.axes.get("learning_rate")
            if self.sampler != "grid" or rates is None or not rates.on_grid or self.learning_rates_per_trial < 1:
                raise fail(f"learning_rates_per_trial of study {self.name}", self.learning_rates_per_trial,
                           "1, or more with the grid sampler and a learning_rate axis of values")

    def _check_budget(self) -> None:
        """An adaptive budget needs a grid and findings to decide; it starts every cell with some of the seeds."""
        if self.initial_seeds is not None and not 1 <= self.initial_seeds <= len(self.seeds):
            raise fail(f"initial_seeds of study {self.name}", self.initial_seeds,
                       f"1 .. {len(self.seeds)} (the number of its seeds)")
        if self.budget == "adaptive" and (self.sampler != "grid" or not self.findings):
            why = f"it samples with {self.sampler}" if self.sampler != "grid" else "it states no findings"
            raise fail(f"budget of study {self.name}", self.budget,
                       f"fixed ({why}; an adaptive budget spends seeds where a grid's findings are undecided)")

    def _check_findings(self) -> None:
        """Every finding's regions name columns of the study, and its panel values are values of the panel axis."""
        columns = self.columns()
        panel_values = self._panel_values()
        for finding in self.findings:
            named = f"finding {finding.description!r} of study {self.name}"
            for column in finding.region_columns():
                if column not in columns:
                    raise fail(f"where column of {named}", column, ", ".join(columns))
            for value in finding.panel_values():
                if panel_values is not None and value not in panel_values:
                    raise fail(f"{self.plot.panel} value of {named}", value, ", ".join(panel_values))
            least = finding.seeds_show
            if least is not None and finding.checked_at(self.scale) and least > len(self.seeds):
                raise fail(f"seeds_show of {named}", finding.seeds_show,
                           f"1 .. {len(self.seeds)} (the study's seeds at scale {self.scale})")

    def _panel_values(self) -> tuple[str, ...] | None:
        """The panel axis's values at every scale (as strings); None when there is nothing to check against (the
        panel is no grid axis, or this is a study derived for one scale: the written study checked its own)."""
        if self.scale != "paper" or self.plot.panel is None:
            return None
        found: list[Any] = []
        groups = [o.get(group) or {} for o in self.scales.values() for group in ("scientific", "nuisance")]
        raws = [self.axes.get(self.plot.panel)] + [g.get(self.plot.panel) for g in groups]
        for axis in (as_axis(raw) for raw in raws if raw is not None):
            if not axis.on_grid:
                return None
            found += axis.grid_values()
        if self.plot.panel == "task":
            found += self.tasks
        return tuple(dict.fromkeys(map(str, found))) if found else None

    def _check_scales(self) -> None:
        """Every scale's overrides name Study fields and give a valid study (checked now, not when it runs)."""
        fields = set(type(self).model_fields)
        for scale, overrides in self.scales.items():
            if scale not in SCALES[1:]:
                raise fail(f"scales key of study {self.name}", scale, ", ".join(SCALES[1:]))
            for key in overrides:
                if key not in fields:
                    raise fail(f"override in scale {scale} of study {self.name}", key, "a Study field")
        if self.scale == "paper":
            for scale in self.scales:
                self.at_scale(scale)

    @property
    def axes(self) -> dict[str, Axis]:
        """Scientific then nuisance axes, in declaration order."""
        return {**self.scientific, **self.nuisance}

    @property
    def label_names(self) -> tuple[str, ...]:
        """The declared label columns: ``labels`` and the names of the ``Linked`` axes."""
        return self.labels + tuple(k for k, a in self.axes.items() if a.is_label and k not in self.labels)

    def columns(self) -> tuple[str, ...]:
        """Every configuration column of the study's rows it declares: the task, the axes, what Linked axes set,
        the fixed hyperparameters and the labels."""
        linked = [n for a in self.axes.values() for n in a.set_names()]
        return tuple(dict.fromkeys(["task", *self.axes, *linked, *self.fixed, *self.label_names]))

    def axis_values(self, name: str) -> list[Any] | None:
        """The grid values of axis ``name`` (a Linked axis: its labels); None for a continuous or absent axis."""
        axis = self.axes.get(name)
        return list(axis.grid_values()) if axis is not None and axis.on_grid else None

    @property
    def starting_seeds(self) -> tuple[int, ...]:
        """The seeds every cell trains first under an adaptive budget (the first `initial_seeds` of `seeds`)."""
        return self.seeds[:self.initial_seeds or min(2, len(self.seeds))]

    @property
    def looks(self) -> int:
        """How many times the study decides on its findings: once (a fixed budget, on its final numbers), or once per
        round of an adaptive budget (a round adds one seed to the cells still deciding something). Each verdict's
        error budget is split over these looks (analysis.stats.intervals.errors)."""
        return 1 if self.budget == "fixed" else len(self.seeds) - len(self.starting_seeds) + 1

    @property
    def directory(self) -> str:
        """The results directory name: the study name, plus the scale unless it is ``paper``."""
        return self.name if self.scale == "paper" else f"{self.name}.{self.scale}"

    def at_scale(self, scale: str) -> Study:
        """This study at ``paper``, ``cpu`` or ``smoke`` scale (overrides merged over the paper scale)."""
        if scale not in SCALES:
            raise fail("scale", scale, ", ".join(SCALES))
        if scale == self.scale:
            return self
        if self.scale != "paper":
            raise StudyError(f"study {self.name} is already at scale {self.scale}; rescale the paper scale")
        changes: dict[str, Any] = {"scale": scale}
        for key, value in self.scales.get(scale, {}).items():
            current = getattr(self, key)
            changes[key] = {**current, **value} if isinstance(current, Mapping) else value
        # A budget shared by all studies (e.g. smoke's seq_len) yields to a study's own axis.
        axes = {**changes.get("scientific", self.scientific), **changes.get("nuisance", self.nuisance)}
        changes["fixed"] = {k: v for k, v in changes.get("fixed", self.fixed).items() if k not in axes}
        if "task" in axes and "tasks" not in changes:  # the scale's task axis says what trains there
            changes["tasks"] = ()
        return self.replace(**changes)

    def grid_size(self) -> int:
        """Number of grid points (configurations); only meaningful for categorical axes."""
        return math.prod(len(a.grid_values()) for a in self.axes.values())

    def trial_count(self) -> int:
        """Trials this study runs with every seed: the grid (learning rates packed as asked), or the sampler's
        budget."""
        if self.sampler != "grid":
            return int(self.n_trials or 0)
        if self.learning_rates_per_trial == 1:
            return self.grid_size()
        rates = len(self.axes["learning_rate"].grid_values())
        return self.grid_size() // rates * math.ceil(rates / self.learning_rates_per_trial)

    def points(self) -> Iterator[dict[str, Any]]:
        """Every trial's point: axis -> value, in grid order. With ``learning_rates_per_trial > 1`` a point's
        ``learning_rate`` is a list of neighbouring rates."""
        axes = {n: a.grid_values() for n, a in self.axes.items()}
        if self.learning_rates_per_trial > 1:
            rates = list(axes["learning_rate"])
            k = self.learning_rates_per_trial
            axes["learning_rate"] = tuple(rates[i:i + k] for i in range(0, len(rates), k))
        names = list(axes)
        for values in itertools.product(*(axes[n] for n in names)):
            yield dict(zip(names, values, strict=True))

    def grid(self) -> Iterator[dict[str, Any]]:
        """Every trial's flat configuration (axes expanded, fixed values and task included)."""
        for point in self.points():
            yield self.configuration(point)

    def configuration(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """The flat trial configuration for one point of the search space."""
        # One task and no task axis: every trial trains it; otherwise the axis sets it (as before `tasks` existed,
        # so the trial keys of studies on disk do not change).
        config: dict[str, Any] = {"task": self.tasks[0], **self.fixed} if "task" not in self.axes else {**self.fixed}
        for name, value in point.items():
            axis = self.axes.get(name)
            config.update(axis.sets(name, value) if axis is not None else {name: value})
        return config

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready description (the ``study.json`` contract in docs/results.md; read back by
        :class:`search_spaces.record.StudyRecord`)."""
        data = self.model_dump(mode="json", exclude={"scales"})
        return {"name": data.pop("name"), "directory": self.directory, **data}
