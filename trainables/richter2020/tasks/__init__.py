"""Synthetic tasks, registered in :data:`TASKS` by name."""

from trainables.richter2020.tasks import cases, mode  # noqa: F401  (fill the registry)
from trainables.richter2020.tasks.base import TASKS, Task
from trainables.richter2020.tasks.cases import CASES, CasesTask, parse_case_mix

__all__ = ["CASES", "TASKS", "CasesTask", "Task", "parse_case_mix"]
