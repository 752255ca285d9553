"""Token mixers, one file each, all registered in :data:`MIXERS` (``(B, N, d) -> (B, N, d)``)."""

from trainables.mixers import (  # noqa: F401  (fill the registry)
    average,  # Yun et al. 2020
    bilinear,  # Yun et al. 2020
    expressive,  # Gros 2024
    no_norm,
    normalized,
    reduce,
    separable_conv,  # Yun et al. 2020
    softmax,
)
from trainables.mixers.base import MIXERS, Mixer, MultiHeadMixer

__all__ = ["MIXERS", "Mixer", "MultiHeadMixer"]
