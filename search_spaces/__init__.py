"""Declarative studies: one module per paper, plus the README's demo. `get_study` resolves names.

The schema (:mod:`search_spaces.study`, :mod:`search_spaces.axes`, :mod:`search_spaces.finding`,
:mod:`search_spaces.record`) imports nothing of the project; the studies themselves are imported on first use, so
reading a ``study.json`` (analysis/) costs no study module.
"""

import importlib
import importlib.util
from pathlib import Path

from core.registry import Registry, RegistryError
from search_spaces.axes import IntRange, Linked, LogUniform, Uniform
from search_spaces.finding import Finding
from search_spaces.schema import SCALES, StudyError
from search_spaces.study import Plot, Study

__all__ = ["SCALES", "Finding", "IntRange", "Linked", "LogUniform", "Plot", "Study", "StudyError",
           "Uniform", "all_studies", "get_study"]


# Modules defining studies, each with a STUDIES tuple; one line per paper (or cross-paper study).
STUDY_MODULES: tuple[str, ...] = (
    "search_spaces.demo",
    "search_spaces.richter2020",
    "search_spaces.gros2024",
    "search_spaces.yun2020",
    "search_spaces.atlas",
    "search_spaces.csordas2021",
)


def _register_study_modules() -> None:
    """Each study of :data:`STUDY_MODULES` under its name and its aliases (a duplicate is a RegistryError)."""
    for module in STUDY_MODULES:
        for study in importlib.import_module(module).STUDIES:
            for name in (study.name, *study.aliases):
                STUDIES.add(name, study, module=module)


#: Every study of this project by name, aliases included (an alias maps to the study that holds its trials): the
#: project's one :class:`core.registry.Registry`, filled from :data:`STUDY_MODULES` on first read.
STUDIES: Registry[Study] = Registry("study", fill=_register_study_modules)


def all_studies() -> dict[str, Study]:
    """Every study by name, aliases included (an alias maps to the study that holds its trials)."""
    return {name: STUDIES.get(name) for name in STUDIES}


def get_study(name: str, scale: str = "paper") -> Study:
    """The study called `name` at `scale`; unknown names fail with the list of valid ones.

    `name` may also be ``path/to/file.py:VARIABLE``: a study defined in a file of your own. The study's ``plugins``
    (and a study file itself, with the modules of its folder it imports) are imported here, as plugins
    (:mod:`trainables.plugins`), so that what they register is known before anything runs.
    """
    if ":" in name and name.split(":", 1)[0].endswith(".py"):
        study = _from_file(name)
    else:
        try:
            study = STUDIES.get(name)
        except RegistryError as error:  # the registry's one line, and the other way to name a study
            raise StudyError(f"{error} (or path/to/file.py:VARIABLE)") from None
    load_plugins(study)
    return study.at_scale(scale)


def load_plugins(study: Study) -> None:
    """Import the modules the study names in ``plugins`` (each once per process); a module that fails to import is a
    StudyError naming it and the study."""
    from trainables.plugins import PluginError, load_module

    for module in study.plugins:
        try:
            load_module(module, origin="study")
        except PluginError as error:
            raise StudyError(f"study {study.name}: {error}") from None


def _from_file(spec: str) -> Study:
    path_text, variable = spec.rsplit(":", 1)
    path = Path(path_text)
    if not path.is_file():
        raise StudyError(f"invalid study file {path_text!r}; allowed: an existing .py file")
    from core.errors import one_line
    from trainables.plugins import load_study_file

    try:
        module = load_study_file(path)
    except Exception as error:  # noqa: BLE001 - any error of the user's file becomes one line naming it
        typed = not isinstance(error, StudyError)  # the schema's own refusal says everything: no type name before it
        raise StudyError(f"invalid study file {path_text!r}: {one_line(error, at=True, typed=typed)}") from None
    study = getattr(module, variable, None)
    if not isinstance(study, Study):
        found = [k for k, v in vars(module).items() if isinstance(v, Study)]
        raise StudyError(f"invalid study variable {variable!r} in {path_text}; valid: {', '.join(found) or 'none'}")
    return study
