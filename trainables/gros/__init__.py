"""Gros 2024, "Climbing the Complexity Ladder with Expressive Attention": NT tasks, the bilayer, training.

Spec: shared/specs/gros2024.md; decisions and results: docs/gros2024.md. The family registers itself via
``trainables.gros.family`` (imported by ``trainables.families._load``).
"""

from trainables.gros.config import ATTENTIONS, WEIGHTS, GrosConfig
from trainables.gros.tasks import GROS_TASKS, continue_series, cycle_lengths, generate, initial_symbols

__all__ = ["ATTENTIONS", "GROS_TASKS", "WEIGHTS", "GrosConfig", "continue_series", "cycle_lengths", "generate",
           "initial_symbols"]
