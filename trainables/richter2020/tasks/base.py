"""Task interface: fresh random batches for K members at once ("infinite data, limited time").

A task knows how to sample ``(tokens, labels)``, which output head the model needs, whether it uses
positional embeddings, and its default vocabulary size and validation length. Sampling draws only from the given
:class:`trainables.counter_draws.Draws` (one counter value: a step's or a validation batch's numbers for every
member), so a member's batch is a pure function of (its seed, the split, the step), the same for any K and on any
device; tensors carry a leading member axis K and live on the draws' device.
"""

from __future__ import annotations

import inspect
from typing import ClassVar, Literal

import torch

from core.registry import Registry
from trainables.counter_draws import Draws

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

    def __init_subclass__(cls, **kwargs: object) -> None:
        """A task written to the interface before issue 49 (``sample`` / ``draw`` taking a ``torch.Generator`` and
        returning one batch) is refused where it is defined, in one line, not deep inside a trial."""
        super().__init_subclass__(**kwargs)
        for name in ("sample", "draw", "case_eval_set"):
            method = cls.__dict__.get(name)
            if method is not None and "generator" in inspect.signature(method).parameters:
                raise TypeError(
                    f"task class {cls.__name__}: {name}(..., generator) is the old interface; allowed: "
                    f"{name}(..., draws) drawing every member's numbers from a trainables.counter_draws.Draws "
                    "(draws.integers(high, shape), draws.uniform(shape); results have a leading member axis K: "
                    "docs/extending.md)")

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
        """Labels (B,) int64 for tokens (B, N), each row's label a function of that row alone (the K members' rows
        are labelled in one call)."""
        raise NotImplementedError

    def draw(self, batch_size: int, seq_len: int, draws: Draws) -> torch.Tensor:
        """The random part of a fresh batch per member: tokens (K, B, N) int64."""
        return draws.integers(self.vocab_size, (batch_size, seq_len))

    def sample(self, batch_size: int, seq_len: int, draws: Draws) -> tuple[torch.Tensor, torch.Tensor]:
        """A fresh batch per member: tokens (K, B, N) int64 and labels (K, B) int64. A task whose batch is more than
        the labels of its draw overrides this, drawing from ``draws`` alone."""
        tokens = self.draw(batch_size, seq_len, draws)
        return tokens, self.labels(tokens.flatten(0, 1)).view(tokens.shape[:2])


TASKS: Registry[type[Task]] = Registry("task")
