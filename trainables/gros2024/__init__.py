"""Gros 2024, "Climbing the Complexity Ladder with Expressive Attention": NT tasks, the bilayer, training.

``config`` (GrosConfig), ``tasks`` (NT series), ``head`` (the paper's DPA/EA head, a mixer), ``model`` (the
stacked bilayer), ``loop`` (SGD, greedy evaluation), ``family`` (what ``trainables.catalog`` registers).
Decisions and results: docs/gros2024.md.
"""

from trainables.gros2024.config import ATTENTIONS, WEIGHTS, GrosConfig
from trainables.gros2024.tasks import GROS_TASKS, continue_series, cycle_lengths, generate, initial_symbols

__all__ = ["ATTENTIONS", "GROS_TASKS", "WEIGHTS", "GrosConfig", "continue_series", "cycle_lengths", "generate",
           "initial_symbols"]
