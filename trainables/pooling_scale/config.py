"""The trial configuration of the measurement family (Fig. 1: one pooling at one sequence length)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainables.config_fields import ConfigFields

TASKS: tuple[str, ...] = ("pooling_scale",)
#: softmax attention without projections, the registry's reduce mixers mean / sum / max, the sum
#: standardised over the vector dimension (App. B's "normalized"; not the NAP mixer, which has projections), and
#: NON's weighting (Sec. 4: the raw logits as weights, the sum scaled by 1 / sqrt(N); before its GELU).
POOLINGS: tuple[str, ...] = ("softmax", "mean", "sum", "max", "normalized", "non")


@dataclass(frozen=True, kw_only=True)
class PoolingScaleConfig(ConfigFields):
    """Hyperparameters of one measurement (names identical to the Parquet columns).

    Attributes:
        task: ``pooling_scale``.
        pooling: one of :data:`POOLINGS`.
        seq_len: sequence length N; must divide ``n_vectors``.
        d_head: dimension d_h of the value / key / query vectors (the paper: 128).
        n_vectors: vectors drawn from N(0, I) per seed, split into sequences of length N.
    """

    REQUIRED = ("task", "pooling", "seq_len")
    task: str
    pooling: str
    seq_len: int
    d_head: int = 128
    n_vectors: int = 16384

    def __post_init__(self) -> None:
        self.require_choice("task", TASKS)
        self.require_choice("pooling", POOLINGS)
        self.require_ints(["seq_len", "d_head", "n_vectors"])
        if self.n_vectors % self.seq_len:
            raise self.invalid("seq_len", f"a positive divisor of n_vectors={self.n_vectors}")

    def resolved(self) -> dict[str, Any]:
        """Every field as used (nothing is left to a default that depends on another): the Parquet columns."""
        return self.to_dict()
