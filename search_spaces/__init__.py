"""Declarative studies: one module per paper, plus the README's demo. `get_study` resolves names."""

from search_spaces.demo import DEMO
from search_spaces.richter2020 import STUDIES as RICHTER2020
from search_spaces.study import SCALES, Finding, IntRange, Linked, LogUniform, Plot, Study, StudyError, Uniform

__all__ = ["SCALES", "Finding", "IntRange", "Linked", "LogUniform", "Plot", "Study", "StudyError",
           "Uniform", "all_studies", "get_study"]


def _registry() -> dict[str, Study]:
    studies: dict[str, Study] = {}
    for study in (DEMO, *RICHTER2020):
        for name in (study.name, *study.aliases):
            if name in studies:
                raise StudyError(f"duplicate study name {name!r}")
            studies[name] = study
    return studies


_STUDIES = _registry()


def all_studies() -> dict[str, Study]:
    """Every study by name, aliases included (an alias maps to the study that holds its trials)."""
    return dict(_STUDIES)


def get_study(name: str, scale: str = "paper") -> Study:
    """The study called `name` at `scale`; unknown names fail with the list of valid ones."""
    if name not in _STUDIES:
        raise StudyError(f"unknown study {name!r}; valid: {', '.join(sorted(_STUDIES))}")
    return _STUDIES[name].at_scale(scale)
