"""The measurement family: a pooling's output scale at initialisation vs sequence length (Richter & Wattenhofer
2020, Fig. 1 middle/right and App. B). Nothing is trained: one row per seed, at step 0.

``config.py`` (:class:`~trainables.pooling_scale.config.PoolingScaleConfig`, the task ``pooling_scale``),
``scale.py`` (the measurement), ``family.py`` (the :class:`~trainables.families.Family` value).
"""
