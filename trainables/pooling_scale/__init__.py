"""The measurement family: a pooling's output scale at initialisation vs sequence length (Richter & Wattenhofer
2020, Fig. 1 middle/right and App. B; task ``pooling_scale``), and Yun et al. 2020's two theory items on the
average and softmax attention mixers as initialised (task ``token_mixing``), Richter & Wattenhofer's share of
context in a layer (task ``context_share``), and what Yun et al. say their layers are: the cheaper mixers' cost,
parameters and input dependence (task ``mixer_properties``) and the permutation equivariance of Transformer blocks
(task ``equivariance``). Nothing is trained: one row per seed, at step 0.

``config.py`` (:class:`~trainables.pooling_scale.config.PoolingScaleConfig`, every task), ``scale.py``, ``mixing.py``,
``context.py``, ``mixer_properties.py`` with ``cost.py``, and ``equivariance.py`` (the measurements), ``family.py``
(the :class:`~trainables.families.Family` value).
"""
