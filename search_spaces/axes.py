"""The axes of a search space: each kind knows its own values, how a sampler draws it, and how it is shown.

In a study file an axis is written as a tuple of values (``(16, 32, 64)``: :class:`Values`), a :class:`Linked`
axis (each value sets several hyperparameters together) or a continuous distribution (:class:`LogUniform`,
:class:`Uniform`, :class:`IntRange`). :func:`as_axis` turns every form, and each one's ``study.json`` form, into
an axis object; nothing else in the project asks which kind an axis is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, InstanceOf, PlainSerializer, field_validator, model_validator

from search_spaces.schema import Schema, StudyError, fail


def show_value(value: Any) -> str:
    """An axis value as a person writes it, wherever one is printed (`study show`, the report's tables, tick labels
    and captions): a float to 4 significant digits, trailing zeros dropped, which removes binary noise
    (0.3**3 = 0.026999999999999996 as 0.027, 0.3**7 as 0.0002187); a non-integer keeps every digit before its point
    (1234.5, not 1234); a whole float as an integer (1024.0 as 1024); below 1e-4 or from 1e6 on, as Python writes
    exponents (6.561e-05, 1e+06); anything else (ints, labels, nan) as ``str`` does."""
    if not isinstance(value, float) or not math.isfinite(value):
        return str(value)
    if abs(value) >= 1e6:
        return f"{value:.4g}"
    if value.is_integer():
        return str(int(value))
    return f"{value:.{max(4, len(str(int(abs(value)))) + 1)}g}"


class Axis(Schema):
    """One axis of a search space (abstract)."""

    label: ClassVar[str] = "axis"

    #: Whether the axis has a finite list of values (a grid can enumerate it).
    on_grid: ClassVar[bool] = True

    def grid_values(self) -> tuple[Any, ...]:
        """The values in order (a Linked axis: its labels); a continuous axis has none (StudyError)."""
        raise StudyError(f"axis {self!r} is continuous and has no grid; allowed: a tuple of values or Linked")

    def sets(self, name: str, value: Any) -> dict[str, Any]:
        """The configuration entries that the axis ``name`` at ``value`` sets."""
        return {name: value}

    def set_names(self) -> tuple[str, ...]:
        """The hyperparameters the axis sets besides its own name (a Linked axis's options)."""
        return ()

    @property
    def is_label(self) -> bool:
        """Whether the axis's name is a column of the study's own rather than a model hyperparameter."""
        return False

    def checked_values(self) -> tuple[Any, ...]:
        """The values preflight checks: every grid value; a continuous axis's low end."""
        return self.grid_values()

    def optuna(self) -> Any:
        """The axis as an Optuna distribution."""
        import optuna

        return optuna.distributions.CategoricalDistribution(self.grid_values())

    def describe(self) -> str:
        """The axis as `study show` prints it."""
        return ", ".join(map(show_value, self.grid_values()))

    def to_json(self) -> Any:
        """The ``study.json`` form of the axis (:func:`as_axis` reads it back)."""
        raise NotImplementedError


class Values(Axis):
    """A categorical axis: its values in order (written as a plain tuple in a study file)."""

    values: tuple[Any, ...]

    @field_validator("values")
    @classmethod
    def _some(cls, values: tuple[Any, ...]) -> tuple[Any, ...]:
        if not values:
            raise fail("axis values", values, "at least one value")
        return values

    def grid_values(self) -> tuple[Any, ...]:
        return self.values

    def to_json(self) -> Any:
        return list(self.values)


class Linked(Axis):
    """A categorical axis whose every value sets several hyperparameters together.

    Example: Fig. 13 keeps examples seen constant, so ``batch_size`` 4 comes with ``n_steps`` 25600.
    The axis name becomes a column of its own (the label) next to the hyperparameters it sets.
    """

    options: dict[Any, dict[str, Any]]

    @field_validator("options")
    @classmethod
    def _some(cls, options: dict[Any, dict[str, Any]]) -> dict[Any, dict[str, Any]]:
        if not options:
            raise fail("Linked options", options, "at least one option")
        return options

    def grid_values(self) -> tuple[Any, ...]:
        return tuple(self.options)

    def sets(self, name: str, value: Any) -> dict[str, Any]:
        if value not in self.options:
            raise fail(f"value of axis {name}", value, ", ".join(map(str, self.options)))
        return {**self.options[value], name: value}

    def set_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(k for option in self.options.values() for k in option))

    @property
    def is_label(self) -> bool:
        return True

    def describe(self) -> str:
        return "linked: " + "; ".join(f"{k} -> {dict(v)}" for k, v in self.options.items())

    def to_json(self) -> Any:
        # Pairs, not an object: a label keeps its type (Fig. 16's vocabulary sizes are ints; JSON keys are strings).
        return {"linked": [[label, dict(option)] for label, option in self.options.items()]}


class _Continuous(Axis):
    on_grid: ClassVar[bool] = False
    low: float
    high: float

    @model_validator(mode="after")
    def _ordered(self) -> _Continuous:
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise fail(f"{type(self).__name__} bounds", (self.low, self.high), "finite low < high")
        return self

    def grid_values(self) -> tuple[Any, ...]:
        return super().grid_values()  # none: a sampler draws it

    def checked_values(self) -> tuple[Any, ...]:
        return (self.low,)

    def describe(self) -> str:
        return repr(self)

    def to_json(self) -> Any:
        return {"distribution": type(self).__name__, **self.model_dump()}


class LogUniform(_Continuous):
    """A continuous axis sampled log-uniformly in [low, high] (random / qmc / tpe samplers only)."""

    @model_validator(mode="after")
    def _positive(self) -> LogUniform:
        if self.low <= 0:
            raise fail("LogUniform bounds", (self.low, self.high), "0 < low < high")
        return self

    def optuna(self) -> Any:
        import optuna

        return optuna.distributions.FloatDistribution(self.low, self.high, log=True)


class Uniform(_Continuous):
    """A continuous axis sampled uniformly in [low, high] (random / qmc / tpe samplers only)."""

    def optuna(self) -> Any:
        import optuna

        return optuna.distributions.FloatDistribution(self.low, self.high)


class IntRange(_Continuous):
    """An integer axis in [low, high], optionally log-spaced (random / qmc / tpe samplers only)."""

    low: int
    high: int
    log: bool = False

    @model_validator(mode="after")
    def _log_positive(self) -> IntRange:
        if self.log and self.low < 1:
            raise fail("IntRange bounds", (self.low, self.high), "low < high (and low >= 1 when log)")
        return self

    def optuna(self) -> Any:
        import optuna

        return optuna.distributions.IntDistribution(self.low, self.high, log=self.log)


_DISTRIBUTIONS: dict[str, type[_Continuous]] = {c.__name__: c for c in (LogUniform, Uniform, IntRange)}


def as_axis(raw: Any) -> Axis:
    """An axis from any of its forms: an axis object, a tuple or list of values, or its ``study.json`` form
    (``[values]``, ``{"linked": [[label, {...}], ...]}``, ``{"distribution": "LogUniform", ...}``, or the
    ``{label: {...}}`` object that records before labels kept their type wrote for a Linked axis)."""
    if isinstance(raw, Axis):
        return raw
    if isinstance(raw, tuple | list):
        return Values(values=tuple(raw))
    if isinstance(raw, Mapping) and "distribution" in raw:
        kind = raw["distribution"]
        if kind not in _DISTRIBUTIONS:
            raise fail("axis distribution", kind, ", ".join(_DISTRIBUTIONS))
        return _DISTRIBUTIONS[kind](**{k: v for k, v in raw.items() if k != "distribution"})
    if isinstance(raw, Mapping) and set(raw) == {"linked"} and isinstance(raw["linked"], list):
        return Linked(options={label: option for label, option in raw["linked"]})
    if isinstance(raw, Mapping):
        return Linked(options=dict(raw))
    raise fail("axis", raw, "a tuple of values, Linked(options=...), LogUniform, Uniform or IntRange")


#: A field holding an axis: any form :func:`as_axis` reads; written to JSON in the axis's own form.
AxisField = Annotated[InstanceOf[Axis], BeforeValidator(as_axis), PlainSerializer(lambda axis: axis.to_json())]
