"""The Neural Data Router family (Csordás, Irie & Schmidhuber 2021) on compositional table lookup (task ``ctl``).

Modules: :mod:`~trainables.ndr.ctl` (the generator and batching), :mod:`~trainables.ndr.geometric` (geometric
attention), :mod:`~trainables.ndr.models` (Table 1's models), :mod:`~trainables.ndr.config` (the config and
per-model hyperparameters), :mod:`~trainables.ndr.loop` (the training loop), :mod:`~trainables.ndr.family`
(what ``trainables.catalog`` registers).
"""
