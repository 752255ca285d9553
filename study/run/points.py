"""A grid study's points by trial key, all of them or the subset `study run --where AXIS=VALUE[,VALUE...]`
selects: the points whose axes take the named values.

A subset is a part of the study, not a study of its own: its trials have the study's trial keys and land in
the study's directory, so a later run without `--where` runs only what is still missing, and a report of a
partly run grid says UNDECIDED where the subset left cells empty. Several values of one axis select any of
them; several axes select the points that match all of them. A number matches the axis value within 0.5%
(what `study show` prints, 3 significant digits, names the value); with learning rates packed into one trial
(`learning_rates_per_trial`), a trial runs when any of its rates is selected.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from search_spaces import Study, StudyError
from search_spaces.axes import show_value
from study.trial.identity import trial_key

#: How close a number typed in `--where` must be to an axis value to name it: 3 significant digits (0.000219 names
#: 0.3^7, which `study show` prints as 0.0002187). A matter of reading text; which values are one cell is
#: search_spaces.cells.same_value's.
TEXT_REL_TOLERANCE = 5e-3


def point_text(point: Mapping[str, Any]) -> str:
    """A point as one line names it (a refusal, a warning, `study verify`'s line): ``{architecture='NAP',
    learning_rate=0.027}``; a float as `study show` prints it (search_spaces.axes.show_value), anything else as
    Python writes it (a label quoted, packed learning rates as a list)."""
    return "{" + ", ".join(f"{k}={show_value(v) if isinstance(v, float) else repr(v)}" for k, v in point.items()) + "}"


def _matches(text: str, value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return text == str(value)
    try:
        number = float(text)
    except ValueError:
        return False
    if isinstance(value, int):
        return number == value
    return math.isclose(number, value, rel_tol=TEXT_REL_TOLERANCE, abs_tol=0.0)


def parse_where(study: Study, texts: tuple[str, ...]) -> dict[str, tuple[Any, ...]]:
    """Axis -> the selected values, from `--where` texts; every bad text is an error naming it and what is
    allowed (grid studies only: a sampler draws its own points)."""
    if not texts:
        return {}
    if study.sampler != "grid":
        raise StudyError(f"invalid --where {texts[0]!r}: study {study.name} samples with {study.sampler}; "
                         "allowed: --where on grid studies only")
    axes = study.axes
    where: dict[str, tuple[Any, ...]] = {}
    for text in texts:
        name, sep, values = text.partition("=")
        name = name.strip()
        if not sep or not name or not values.strip():
            raise StudyError(f"invalid --where {text!r}; allowed: AXIS=VALUE[,VALUE...]")
        if name not in axes:
            raise StudyError(f"invalid --where {text!r}: {name} is not an axis of study {study.name}; "
                             f"allowed: {', '.join(axes)}")
        axis = axes[name]
        options = axis.grid_values()
        chosen = list(where.get(name, ()))
        for part in (p.strip() for p in values.split(",")):
            found = [o for o in options if _matches(part, o)]
            if len(found) != 1:
                why = "matches none" if not found else f"matches {len(found)} values"
                raise StudyError(f"invalid --where {text!r}: {part!r} {why} of axis {name}; allowed: "
                                 f"{', '.join(map(show_value, options))}")
            if found[0] not in chosen:
                chosen.append(found[0])
        where[name] = tuple(chosen)
    return where


def selects(where: Mapping[str, tuple[Any, ...]], point: Mapping[str, Any]) -> bool:
    """Whether a grid point (axis -> value; a packed learning_rate is a list) is in the subset."""
    for name, values in where.items():
        value = point[name]
        taken = value if isinstance(value, list) else [value]
        if not any(v in values for v in taken):
            return False
    return True


def describe(where: Mapping[str, tuple[Any, ...]]) -> str:
    """The subset as `--where` texts, values as `study show` prints them."""
    return " ".join(f"{name}={','.join(map(show_value, values))}" for name, values in where.items())


def trial_points(study: Study, where: Mapping[str, tuple[Any, ...]] | None = None) -> dict[str, dict[str, Any]]:
    """Every grid point (axis -> value) by trial key; only those `where` selects when given."""
    names = list(study.axes)
    points = {}
    for config in study.grid():
        point = {n: config[n] for n in names}
        if not where or selects(where, point):
            points[trial_key(study.name, config, study.seeds, study.plugins)] = point
    return points
