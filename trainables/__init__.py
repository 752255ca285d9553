"""Trainables: models, tasks and the plain-PyTorch training loop (no Ray, no study/analysis imports).

Public API::

    TrainConfig, train_seed, train_trial, train_packed, build_model, pooling_output_scale,
    ARCHITECTURES, MIXERS, TASKS, Registry
"""

from trainables.architectures import ARCHITECTURES, Architecture
from trainables.config import TrainConfig
from trainables.loop import learning_rate_at, train_seed, train_trial
from trainables.measure import POOLINGS, pooling_output_scale
from trainables.mixers import MIXERS
from trainables.model import Model, build_model, count_parameters
from trainables.packed import train_packed
from trainables.registry import Registry
from trainables.tasks import TASKS

__all__ = [
    "ARCHITECTURES",
    "MIXERS",
    "POOLINGS",
    "TASKS",
    "Architecture",
    "Model",
    "Registry",
    "TrainConfig",
    "build_model",
    "count_parameters",
    "learning_rate_at",
    "pooling_output_scale",
    "train_packed",
    "train_seed",
    "train_trial",
]
