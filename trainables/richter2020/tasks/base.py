"""Task interface: fresh random batches from a ``torch.Generator`` ("infinite data, limited time").

A task knows how to sample ``(tokens, labels)``, which output head the model needs, whether it uses
positional embeddings, and its default vocabulary size and validation length. All sampling is vectorised
and draws only from the given generator, so each seed has its own reproducible data stream; tensors are
created on the generator's device.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import torch

from core.registry import Registry

Head = Literal["per_token", "first_token_positions", "first_token_classes"]


class Task:
    """Base class of all tasks.

    Args:
        vocab_size: number of distinct tokens S.
        case_mix: ``"natural"`` or ``"a,f,m"`` case shares (cases tasks only).
    """

    name: ClassVar[str]
    head: ClassVar[Head]
    positional: ClassVar[bool]
    default_vocab_size: ClassVar[int]
    has_cases: ClassVar[bool] = False

    def __init__(self, *, vocab_size: int | None = None, case_mix: str = "natural") -> None:
        self.vocab_size = self.default_vocab_size if vocab_size is None else vocab_size
        problem = self.check_vocab_size(self.vocab_size)
        if problem:
            raise ValueError(problem)
        self.case_mix = case_mix

    @classmethod
    def default_val_seq_len(cls, seq_len: int) -> int:
        """Validation sequence length used when the config leaves it unset."""
        raise NotImplementedError

    @classmethod
    def check_vocab_size(cls, vocab_size: int) -> str | None:
        """An error message if ``vocab_size`` is unusable for this task, else None."""
        return None if vocab_size >= 2 else f"vocab_size={vocab_size} is invalid for task {cls.name!r}; need >= 2"

    def labels(self, tokens: torch.Tensor) -> torch.Tensor:
        """Labels (B,) int64 for tokens (B, N), each row's label a function of that row alone (the packed loop
        labels the rows of all its members' batches in one call)."""
        raise NotImplementedError

    def draw(self, batch_size: int, seq_len: int, generator: torch.Generator) -> torch.Tensor:
        """The random part of a fresh batch: tokens (B, N) int64, drawn from ``generator`` alone."""
        return torch.randint(self.vocab_size, (batch_size, seq_len), generator=generator, device=generator.device)

    def sample(self, batch_size: int, seq_len: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """A fresh batch: tokens (B, N) int64 and labels (B,) int64. A task whose batch is more than the labels of
        its draw overrides this (the packed loop then samples member by member)."""
        tokens = self.draw(batch_size, seq_len, generator)
        return tokens, self.labels(tokens)


TASKS: Registry[type[Task]] = Registry("task")
