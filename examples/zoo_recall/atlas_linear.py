"""Linear attention in attention-studies' robustness atlas: the project's cross-paper table with this package's mixer
beside every one of the project's own (docs/extending.md, "Your mixer in the atlas")::

    study run examples/zoo_recall/atlas_linear.py:ATLAS --scale cpu --report

The study is the atlas itself (same tasks, grid, findings, name and results directory) with one more mixer, so where
``study run atlas --scale cpu`` ran before with the same ``--storage``, its 400 trials are found done and only linear
attention's 40 train. The package comes from this file's folder (no install needed), which Ray ships to every worker.
"""

import zoo_recall.linear_attention  # noqa: F401 - registers the mixer ``linear_attention``

from search_spaces.atlas import atlas_with

ATLAS = atlas_with("linear_attention")
