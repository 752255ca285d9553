"""Trainables: what a trial is. Plain PyTorch, no Ray, no study/analysis imports.

Shared ground floor: ``registry`` (names), ``validation`` (config checks), ``rows`` (the row writer),
``stacked`` (member-stacked modules and their Adam). Above it: ``mixers/`` (one file per token mixer),
``families`` (the family protocol, and when seeds stack), one package per model family (``richter/``, ``ndr/``,
``gros/``, and ``measure/``: Fig. 1's measurement, which trains nothing) and ``catalog`` (task name -> family).
Importing this package imports nothing else (no torch).
"""
