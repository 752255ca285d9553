"""Task name -> model family: the one place that knows every family of the project.

A new family is a new package under ``trainables/`` whose ``family.py`` defines ``FAMILY``, plus one entry
in :data:`_FAMILY_MODULES`.
"""

from __future__ import annotations

import functools
import importlib

from trainables.families import Family
from trainables.registry import Registry

_FAMILY_MODULES = ("trainables.richter2020.family", "trainables.csordas2021.family", "trainables.gros2024.family",
                  "trainables.pooling_scale.family")


@functools.cache
def families() -> Registry[Family]:
    """Every family by name (imported on first use: each brings torch and its own modules)."""
    registry: Registry[Family] = Registry("model family")
    for module in _FAMILY_MODULES:
        family = importlib.import_module(module).FAMILY
        registry.add(family.name, family)
    return registry


def family_for_task(task: str) -> Family:
    """The family that trains ``task``; ValueError listing every known task otherwise."""
    for name in families():
        family = families().get(name)
        if task in family.tasks:
            return family
    raise ValueError(f"invalid task={task!r}; allowed: {', '.join(all_tasks())}")


def all_tasks() -> list[str]:
    """Every task name of every family, in registration order."""
    return [t for name in families() for t in families().get(name).tasks]
