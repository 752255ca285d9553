"""Richter & Wattenhofer 2020, "Normalized Attention Without Probability Cage": the encoder family.

``config`` (TrainConfig), ``architectures`` (BERT, MTE, NAP, NON, sum, max, EA as data), ``tasks`` (cases,
cases_first_token, mode), ``model`` (the encoder over any registered mixer), ``recipe`` (the training
recipe: schedule, clipping, losses, streams, evaluation sets), ``loop`` (the one training loop: K members
stacked, one seed is K = 1), ``family`` (what the catalog registers).
"""
