"""The Neural Data Router family (Csordás, Irie & Schmidhuber 2021) on compositional table lookup (task ``ctl``).

Modules: :mod:`~trainables.csordas2021.ctl` (the generator and batching),
:mod:`~trainables.csordas2021.geometric` (geometric attention), :mod:`~trainables.csordas2021.relative` (relative
attention), :mod:`~trainables.csordas2021.models` (Table 1's models, one definition for one model and K stacked),
:mod:`~trainables.csordas2021.noise` (each member's own dropout draws), :mod:`~trainables.csordas2021.config` (the
config and per-model hyperparameters), :mod:`~trainables.csordas2021.members` (a configuration's seeds as one model),
:mod:`~trainables.csordas2021.evaluation` (evaluation sets, probe artifacts), :mod:`~trainables.csordas2021.loop`
(the one training loop: one seed is K = 1), :mod:`~trainables.csordas2021.family` (what ``trainables.catalog``
registers), :mod:`~trainables.csordas2021.properties` (what the paper says its attention and data are, measured
without training: tasks of the measurement family).
"""
