"""Single-query associative recall, a task of the existing ``richter2020`` family (its encoder, its loop).

The first token is a query key; the rest are (key, value) pairs with distinct keys. The label is the value that
follows the query key. Keys come from the lower half of the vocabulary, values from the upper half. Worked example
(vocab_size S = 8: keys 0..3, values 4..7; N = 7)::

    [2, 0, 5, 2, 7, 3, 4] -> 7   (query 2; pairs 0->5, 2->7, 3->4)

The encoder's first-token head reads the answer from the first token: the model must move the value of the matching
pair there, which needs two hops (a value finds its key, the query finds that value). Positional embeddings on;
validation at the training length. Measured in the example's study (docs/extending.md): no mixer learns it within
1600 steps (best 26-28% at N = 17, where guessing among the 8 values present gives 12.5%), and the mean mixer is
no worse than attention there: between its two pools the feed-forward layers mix each token with its position.
"""

from __future__ import annotations

import torch

from trainables.counter_draws import Draws
from trainables.richter2020.tasks.base import TASKS, Head, Task


@TASKS.register("recall")
class RecallTask(Task):
    """The value paired with the query key (the first token)."""

    name = "recall"
    head: Head = "first_token_classes"
    positional = True
    default_vocab_size = 32

    def __init__(self, *, vocab_size: int | None = None, case_mix: str = "natural") -> None:
        if case_mix != "natural":
            raise ValueError(f"invalid case_mix={case_mix!r}; allowed: 'natural' (task 'recall' has no cases)")
        super().__init__(vocab_size=vocab_size, case_mix=case_mix)

    @classmethod
    def default_val_seq_len(cls, seq_len: int) -> int:
        return seq_len

    @classmethod
    def check_vocab_size(cls, vocab_size: int) -> str | None:
        if vocab_size < 4 or vocab_size % 2:
            return f"vocab_size={vocab_size} is invalid for task 'recall'; need an even number >= 4"
        return None

    def sample(self, batch_size: int, seq_len: int, draws: Draws) -> tuple[torch.Tensor, torch.Tensor]:
        """Every member's batch in one call (draws for K members): tokens (K, B, N), labels (K, B)."""
        n_keys = self.vocab_size // 2
        pairs = (seq_len - 1) // 2
        if pairs < 1 or pairs > n_keys:
            raise ValueError(f"invalid seq_len={seq_len} for task 'recall' with vocab_size={self.vocab_size}; "
                             f"allowed: 3 .. {2 * n_keys + 2} (one query and 1 .. {n_keys} pairs of distinct keys)")
        keys = draws.uniform((batch_size, n_keys)).argsort(dim=-1)[..., :pairs]  # (K, B, P): distinct keys
        values = n_keys + draws.integers(n_keys, (batch_size, pairs))  # (K, B, P)
        which = draws.integers(pairs, (batch_size, 1))  # (K, B, 1)
        query = keys.gather(-1, which)  # (K, B, 1)
        body = torch.stack([keys, values], dim=-1).flatten(-2)  # (K, B, 2P): k1 v1 k2 v2 ...
        filler = keys[..., :1].expand(-1, -1, seq_len - 1 - 2 * pairs)  # an even N leaves one slot: a repeated key
        tokens = torch.cat([query, body, filler], dim=-1)  # (K, B, N)
        return tokens, values.gather(-1, which).squeeze(-1)  # labels (K, B)
