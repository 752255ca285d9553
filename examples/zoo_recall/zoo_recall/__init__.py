"""Associative recall for attention-studies, as an outside package (docs/extending.md).

Importing it registers three components, each through the project's public seam:

* the mixer ``linear_attention`` (:mod:`zoo_recall.linear_attention`),
* the task ``recall`` of the existing ``richter2020`` family (:mod:`zoo_recall.recall`),
* the model family ``mqar`` with its task ``mqar`` (:mod:`zoo_recall.mqar`).
"""

from zoo_recall import linear_attention, mqar, recall

__all__ = ["linear_attention", "mqar", "recall"]
