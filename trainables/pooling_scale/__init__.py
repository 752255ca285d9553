"""The measurement family: a pooling's output scale at initialisation vs sequence length (Richter & Wattenhofer
2020, Fig. 1 middle/right and App. B; task ``pooling_scale``), and Yun et al. 2020's two theory items on the
average and softmax attention mixers as initialised (task ``token_mixing``). Nothing is trained: one row per seed,
at step 0.

``config.py`` (:class:`~trainables.pooling_scale.config.PoolingScaleConfig`, both tasks), ``scale.py`` and
``mixing.py`` (the measurements), ``family.py`` (the :class:`~trainables.families.Family` value).
"""
