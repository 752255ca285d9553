"""Counter-based random numbers for K members at once: a member's draws are a pure function of (key, counter).

A packed loop needs a batch per member per step. With one ``torch.Generator`` per member that is K draws (K kernel
launches on a GPU) per step, and a member's stream depends on how many numbers were drawn before. Here every number
is a hash of (member key, counter, lane, index): ``Draws(keys, counter)`` gives the K members' numbers of one batch in
one call, the same numbers for any K (member k's do not depend on the others) and on any device, because the hash is
integer arithmetic that is exact everywhere (no float rounding, no overflow: 32-bit words held in int64, products
split so that none exceeds 2^63).

The hash is Wellons' ``lowbias32`` (a 32-bit integer finaliser with full avalanche): first on the counter and lane
with the member key mixed in (one word per member per lane), then on that word plus the number's index, and once more
with the key XORed in (so two members' streams are not shifts of one another). The index only ever has a loaded word
added to it: a compiler that folds arithmetic on an index into 32-bit index expressions (Triton) sees no large
constant there. Uniform integers
below ``high`` take the top bits of a 32-bit word times ``high`` (Lemire's multiply-shift: bias below high / 2^32).

    draws = Draws(keys, counter)            # keys (K,) int64, counter: an int or a 0-dim int64 tensor
    tokens = draws.integers(100, (32, 128))  # (K, 32, 128)
    u = draws.uniform((32,))                 # (K, 32) float64 in [0, 1), exact multiples of 2^-32
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from trainables.rows import stream_seed

MASK32 = 0xFFFFFFFF
LANES = 64  # numbers drawn per counter value, at most (a batch draws a handful of arrays)
_KEY_TWEAK = 0x85EBCA6B


def _mul32(x: torch.Tensor, c: int) -> torch.Tensor:
    """(x * c) mod 2^32 for words x in [0, 2^32) held in int64, with no intermediate above 2^48."""
    low = (x & 0xFFFF) * c
    high = ((x >> 16) * c) & 0xFFFF
    return (low + (high << 16)) & MASK32


def mix32(x: torch.Tensor) -> torch.Tensor:
    """Wellons' lowbias32 finaliser on 32-bit words (int64 tensor, values in [0, 2^32))."""
    x = x ^ (x >> 16)
    x = _mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = _mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


def member_keys(seeds: Sequence[int], stream: int, salt: int, device: str | torch.device) -> torch.Tensor:
    """The keys (K,) int64 of ``seeds``' data stream ``stream`` on ``device``: their stream seeds folded to 32 bits and
    mixed (stream seeds are linear in the seed)."""
    folded = [(s ^ (s >> 32)) & MASK32 for s in (stream_seed(seed, stream, salt) for seed in seeds)]
    return mix32(torch.tensor(folded, dtype=torch.int64, device=device))


class Draws:
    """The random numbers of one counter value (a step, a validation batch) for K members, one array per call.

    Calls are numbered (lanes) in the order they are made, so a sampler that draws the same arrays in the same order
    sees the same numbers; at most :data:`LANES` calls per counter value.

    Args:
        keys: (K,) int64 member keys (:func:`member_keys`).
        counter: which batch: a Python int or a 0-dim int64 tensor on the keys' device (a tensor keeps a compiled
            sampler from specialising on the step).
    """

    def __init__(self, keys: torch.Tensor, counter: int | torch.Tensor) -> None:
        if keys.dtype != torch.int64 or keys.dim() != 1:
            raise ValueError(f"invalid keys {tuple(keys.shape)} {keys.dtype}; allowed: a (K,) int64 tensor")
        self.keys = keys
        self.counter = counter
        self._lane = 0

    @property
    def k(self) -> int:
        return self.keys.shape[0]

    @property
    def device(self) -> torch.device:
        return self.keys.device

    def words(self, shape: tuple[int, ...]) -> torch.Tensor:
        """(K, *shape) int64 words, uniform on [0, 2^32); the next lane."""
        lane = self._lane
        if lane >= LANES:
            raise ValueError(f"more than {LANES} draws from one counter value; allowed: at most {LANES}")
        self._lane += 1
        counter = self.counter * LANES + lane
        if isinstance(counter, torch.Tensor):
            counter = counter & MASK32
        else:
            counter = torch.tensor(counter & MASK32, dtype=torch.int64, device=self.device)
        base = mix32(self.keys ^ mix32(counter))  # (K,): one word per member and lane
        index = torch.arange(math.prod(shape), dtype=torch.int64, device=self.device).view(1, *shape)
        view = (self.k,) + (1,) * len(shape)
        x = mix32((base.view(view) + index) & MASK32)
        return mix32(x ^ _mul32(self.keys.view(view), _KEY_TWEAK))

    def integers(self, high: int, shape: tuple[int, ...]) -> torch.Tensor:
        """(K, *shape) int64 uniform on [0, high), 1 <= high < 2^31."""
        if not 1 <= high < 2**31:
            raise ValueError(f"invalid high={high}; allowed: 1 <= high < 2^31")
        return (self.words(shape) * high) >> 32

    def uniform(self, shape: tuple[int, ...]) -> torch.Tensor:
        """(K, *shape) float64 uniform on [0, 1): multiples of 2^-32, exact on every device."""
        return self.words(shape).to(torch.float64) * 2.0**-32
