"""The ground floor of the study schema: its error, and a validated model that fails in one line.

Every type of the schema (the axes, a Finding, the Study, the study record) is a frozen pydantic model: fields are
checked when a value is built, in a user's study file as in ``study.json``. Pydantic's own error is several
lines of text; :class:`Schema` turns it into one :class:`StudyError` line that names the field, the value and
what is allowed, which is what a study file that fails to import shows (``study run my.py:S`` -> exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from core.errors import OneLineError

#: The scales a study runs at: the paper's own, a fraction for a laptop, seconds for the tests.
SCALES = ("paper", "cpu", "smoke")


class StudyError(OneLineError, ValueError):
    """An invalid study definition or request; the message names the field, the value, what is allowed."""


def fail(field_name: str, value: Any, allowed: str) -> StudyError:
    """``invalid <field> <value>; allowed: <what>``: the one shape of every schema error."""
    return StudyError(f"invalid {field_name} {value!r}; allowed: {allowed}")


def validation_line(error: ValidationError, what: str, model: type[BaseModel] | None = None) -> str:
    """The first problem of a pydantic error in the words of :func:`fail`, naming the field, the value and what is
    allowed: ``invalid tasks of study t 'mode'; allowed: a valid tuple``, ``unknown key 'belw' in findings[0];
    allowed: ...`` (``model``: the type validated, whose fields an unknown key is told apart from). Pydantic's side
    of the one-line rule; an exception of any other kind is :func:`core.errors.one_line`'s."""
    first = error.errors(include_url=False)[0]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, StudyError):  # our own check, already one line that says everything
        return str(cause)
    loc = first["loc"]
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".") or "value"
    if first["type"] == "extra_forbidden" and model is not None:
        inside = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[:-1]).lstrip(".") or what
        return f"unknown key {loc[-1]!r} in {inside}; allowed: {', '.join(_fields_at(model, loc[:-1]))}"
    allowed = first["msg"].removeprefix("Input should be ").removeprefix("Value error, ")
    return str(fail(f"{where} of {what}", first.get("input"), allowed))


def _fields_at(model: type[BaseModel], path: tuple[Any, ...]) -> list[str]:
    """The field names of the model found at ``path`` inside ``model`` (through tuples, lists and optionals)."""
    for part in path:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        found = _model_in(field.annotation) if field is not None else None
        if found is None:
            return []
        model = found
    return list(model.model_fields)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in getattr(annotation, "__args__", ()):
        found = _model_in(argument)
        if found is not None:
            return found
    return None


class Schema(BaseModel):
    """A frozen, validated value: unknown fields are refused, errors are one :class:`StudyError` line."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)
    #: What the value is called in an error message (``invalid seeds of study t ()``).
    label: ClassVar[str] = "value"

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as error:
            named = data.get("name") or data.get("description")
            what = self.label + (f" {named}" if isinstance(named, str) else "")
            raise StudyError(validation_line(error, what, type(self))) from None

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes``, validated like a new value (``dataclasses.replace`` for the schema's types)."""
        return type(self)(**{**{name: getattr(self, name) for name in type(self).model_fields}, **changes})


def json_form(value: Any) -> Any:
    """``value`` as JSON reads it back: tuples and lists as lists, mappings as dicts (keys as given)."""
    if isinstance(value, Mapping):
        return {k: json_form(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_form(v) for v in value]
    return value
