"""Trainables: what a trial is. Plain PyTorch, no Ray, no study/analysis imports.

Shared ground floor (names: ``core.registry``): ``config_fields`` (the config dataclasses' field checks), ``rows``
(the row writer), ``stacked`` (member-stacked modules and their Adam). Above it: ``mixers/`` (one file per token
mixer), ``families`` (the family protocol, and when seeds stack), one package per model family, named after its
paper (``richter2020/``, ``csordas2021/``, ``gros2024/``) or, for ``pooling_scale/`` (Richter & Wattenhofer's
Fig. 1, which trains nothing), after what it measures, and ``catalog`` (task name -> family).
Importing this package imports nothing else (no torch).
"""
