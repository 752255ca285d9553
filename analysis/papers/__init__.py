"""Report sections of one paper each, registered in :mod:`analysis.report.sections` and chosen by the study.

* :mod:`~analysis.papers.richter2020` - ``pooling_scale`` (Fig. 1 right: output scale vs sequence length);
* :mod:`~analysis.papers.csordas2021` - ``csordas2021.table1``, ``csordas2021.probe`` (Neural Data Router);
* :mod:`~analysis.papers.gros2024` - ``expressive_curves``, ``expressive_attention``, ``expressive_ladder``;
* :mod:`~analysis.papers.leaderboard` - ``leaderboard`` (the atlas study) and ``hybrid`` (Yun et al. 2020).

A fifth paper's sections are a fifth module here; nothing else changes.
"""
