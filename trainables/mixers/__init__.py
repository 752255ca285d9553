"""Token mixers, one file each, all registered in :data:`MIXERS` (``(B, N, d) -> (B, N, d)``)."""

from trainables.mixers import no_norm, normalized, reduce, softmax  # noqa: F401  (fill the registry)
from trainables.mixers.base import MIXERS, Mixer, MultiHeadMixer

__all__ = ["MIXERS", "Mixer", "MultiHeadMixer"]
