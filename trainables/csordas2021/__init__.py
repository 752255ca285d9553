"""The Neural Data Router family (Csordás, Irie & Schmidhuber 2021) on compositional table lookup (task ``ctl``).

Modules: :mod:`~trainables.csordas2021.ctl` (the generator and batching),
:mod:`~trainables.csordas2021.geometric` (geometric attention), :mod:`~trainables.csordas2021.models` (Table 1's
models), :mod:`~trainables.csordas2021.config` (the config and per-model hyperparameters),
:mod:`~trainables.csordas2021.loop` (the training loop), :mod:`~trainables.csordas2021.family` (what
``trainables.catalog`` registers).
"""
