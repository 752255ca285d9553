"""Mode finding (Richter & Wattenhofer 2020, Sec. 5.2): the most frequent token, ties -> smallest token.

S = 10 tokens, N = 128, no positional embedding (the task is defined on sets); the output is a linear map
from the first token's final embedding to S logits. Worked example (S = 4, N = 6)::

    [3, 1, 3, 0, 1, 2] -> 1   (1 and 3 both occur twice; the smaller token wins)
    [2, 2, 0, 2, 1, 3] -> 2

Validation uses sequences of twice the training length by default (zero-shot length generalisation).
"""

from __future__ import annotations

from typing import ClassVar

import torch

from trainables.richter2020.tasks.base import TASKS, Head, Task


@TASKS.register("mode")
class ModeTask(Task):
    """Most frequent token of the sequence (ties -> smallest token)."""

    name = "mode"
    head: ClassVar[Head] = "first_token_classes"
    positional = False
    default_vocab_size = 10

    def __init__(self, *, vocab_size: int | None = None, case_mix: str = "natural") -> None:
        if case_mix != "natural":
            raise ValueError(f"invalid case_mix={case_mix!r}; allowed: 'natural' (task 'mode' has no cases)")
        super().__init__(vocab_size=vocab_size, case_mix=case_mix)

    @classmethod
    def default_val_seq_len(cls, seq_len: int) -> int:
        return 2 * seq_len

    def labels(self, tokens: torch.Tensor) -> torch.Tensor:
        counts = torch.zeros(tokens.shape[0], self.vocab_size, dtype=torch.long, device=tokens.device)
        counts.scatter_add_(1, tokens, torch.ones_like(tokens))  # (B, S) occurrences per token
        return counts.argmax(dim=1)  # (B,); argmax returns the first (= smallest) maximal token
