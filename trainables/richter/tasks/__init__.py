"""Synthetic tasks, registered in :data:`TASKS` by name."""

from trainables.richter.tasks import cases, mode  # noqa: F401  (fill the registry)
from trainables.richter.tasks.base import TASKS, Task
from trainables.richter.tasks.cases import CASES, CasesTask, parse_case_mix

__all__ = ["CASES", "TASKS", "CasesTask", "Task", "parse_case_mix"]
