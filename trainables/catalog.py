"""Task name -> model family: the registry of every family, filled by plugins (:mod:`trainables.plugins`).

A family registers itself when its module is imported (``FAMILY = register_family(Family(...))``). This project's
own families are plugins like any other: entry points of the group ``attention_studies.plugins`` in its
pyproject.toml, loaded on first use; a family of your own registers the same way from your package's entry point,
a study's ``plugins`` or a study file (docs/extending.md).
"""

from __future__ import annotations

from core.registry import Registry
from trainables.families import Family
from trainables.plugins import load_installed

FAMILIES: Registry[Family] = Registry("model family")


def register_family(family: Family, *, module: str | None = None) -> Family:
    """Register ``family`` under its name (a duplicate name is a ValueError naming both); returns it. ``module``:
    the module to credit it to in the plugin record (default: the module whose global holds it, as
    ``FAMILY = register_family(Family(...))`` does: trainables.plugins)."""
    clash = [t for name in FAMILIES for t in FAMILIES.get(name).tasks if t in family.tasks]
    if clash:
        raise ValueError(f"invalid tasks of model family {family.name!r}: {', '.join(map(repr, clash))} already "
                         "belong to another family; allowed: task names of its own")
    FAMILIES.add(family.name, family, module=module)
    return family


def families() -> Registry[Family]:
    """Every registered family by name (the installed plugins imported on first use: each brings torch)."""
    load_installed()
    if not len(FAMILIES):
        raise ValueError("no model family is registered: attention-studies is not installed (its families register "
                         "through the entry-point group attention_studies.plugins); allowed: pip install -e . first")
    return FAMILIES


def _by_name() -> list[Family]:
    """Every registered family, sorted by name: registration order depends on what was imported first."""
    registry = families()
    return [registry.get(name) for name in sorted(registry)]


def family_for_task(task: str) -> Family:
    """The family that trains ``task``; ValueError listing every known task otherwise."""
    for family in _by_name():
        if task in family.tasks:
            return family
    raise ValueError(f"invalid task={task!r}; allowed: {', '.join(all_tasks())}")


def all_tasks() -> list[str]:
    """Every task name of every family, families by name, a family's tasks in its own order, read now: a plugin may
    add some."""
    return [task for family in _by_name() for task in family.tasks]
