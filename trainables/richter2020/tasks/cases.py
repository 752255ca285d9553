"""The argmin-first-argmax case distinction task (Richter & Wattenhofer 2020, Sec. 5.1).

Tokens are uniform over S = 100 values, N = 128. The label is a sequence position:

* if 64 occurs: the position of the minimum (first occurrence)            -> case "argmin"
* elif 50 occurs: position 0                                               -> case "first"
* else: the position of the maximum (first occurrence)                     -> case "argmax"

Worked example (S = 100, N = 6)::

    [ 7, 64,  3, 3, 99, 50] -> 2   (64 present: first minimum 3 is at index 2)
    [ 7, 50,  3, 3, 99, 12] -> 0   (no 64, 50 present)
    [ 7, 51,  3, 3, 99, 99] -> 4   (neither: first maximum 99 is at index 4)

With uniform tokens the cases occur with P(argmin) = 1 - 0.99^N, P(first) = 0.99^N - 0.98^N,
P(argmax) = 0.98^N: 72.4 / 20.1 / 7.5 % at N = 128. ``case_mix="a,f,m"`` instead draws each example's
case with these probabilities and samples the sequence exactly from the uniform distribution conditioned
on that case (see :meth:`CasesTask.sample_case`); the same sampler builds the equalised evaluation sets.
"""

from __future__ import annotations

import functools
from typing import ClassVar

import torch

from trainables.counter_draws import Draws
from trainables.richter2020.tasks.base import TASKS, Head, Task

ARGMIN_TOKEN = 64
FIRST_TOKEN = 50
CASES: tuple[str, ...] = ("argmin", "first", "argmax")
ARGMIN, FIRST, ARGMAX = 0, 1, 2


def parse_case_mix(case_mix: str) -> tuple[float, float, float] | None:
    """None for ``"natural"``, else the three shares of ``"a,f,m"``; ValueError if malformed."""
    if case_mix == "natural":
        return None
    allowed = "'natural' or three non-negative shares 'a,f,m' summing to 1, e.g. '0.34,0.33,0.33'"
    try:
        shares = tuple(float(s) for s in str(case_mix).split(","))
    except ValueError:
        raise ValueError(f"invalid case_mix={case_mix!r}; allowed: {allowed}") from None
    if len(shares) != 3 or min(shares) < 0 or abs(sum(shares) - 1.0) > 1e-3:
        raise ValueError(f"invalid case_mix={case_mix!r}; allowed: {allowed}")
    total = sum(shares)
    return (shares[0] / total, shares[1] / total, shares[2] / total)


def _uniform_excluding(
    shape: tuple[int, ...], vocab_size: int, excluded: tuple[int, ...], draws: Draws
) -> torch.Tensor:
    """Tokens (K, *shape) uniform over range(vocab_size) minus ``excluded`` (sorted ascending)."""
    r = draws.integers(vocab_size - len(excluded), shape)
    for e in excluded:  # shift past each excluded value in turn (ascending order keeps this a bijection)
        r = r + (r >= e).long()
    return r


def _first_position(n: int, seq_len: int, keep: float, draws: Draws) -> torch.Tensor:
    """(K, n) positions k in [0, N) with P(k) proportional to keep^k (truncated geometric), by inverting the CDF.

    The CDF is computed once in float64 on the host and compared with exact uniforms, so every device finds the same k.
    """
    table = _geometric_cdf(seq_len, keep, draws.device)
    return torch.searchsorted(table, draws.uniform((n,)), right=True)  # (K, n): how many CDF values are <= u


@functools.lru_cache(maxsize=64)
def _geometric_cdf(seq_len: int, keep: float, device: torch.device) -> torch.Tensor:
    """The truncated geometric CDF (N,) float64 on ``device``, built once (a copy to a GPU waits for it)."""
    total = 1.0 - keep**seq_len
    cdf = [(1.0 - keep ** (i + 1)) / total for i in range(seq_len)]
    cdf[-1] = 1.0
    return torch.tensor(cdf, dtype=torch.float64, device=device)


@TASKS.register("cases")
class CasesTask(Task):
    """argmin-first-argmax case distinction; one logit per token, cross-entropy over positions."""

    name = "cases"
    head: ClassVar[Head] = "per_token"
    positional = True
    default_vocab_size = 100
    has_cases = True

    def __init__(self, *, vocab_size: int | None = None, case_mix: str = "natural") -> None:
        super().__init__(vocab_size=vocab_size, case_mix=case_mix)
        self.case_shares = parse_case_mix(case_mix)

    @classmethod
    def default_val_seq_len(cls, seq_len: int) -> int:
        return max(1, seq_len // 2)

    @classmethod
    def check_vocab_size(cls, vocab_size: int) -> str | None:
        if vocab_size <= ARGMIN_TOKEN:
            return f"vocab_size={vocab_size} is invalid for task {cls.name!r}; need > {ARGMIN_TOKEN}"
        return None

    @staticmethod
    def case_of(tokens: torch.Tensor) -> torch.Tensor:
        """Case id (B,) (0 argmin, 1 first, 2 argmax) of tokens (B, N)."""
        has_min = (tokens == ARGMIN_TOKEN).any(dim=1)  # (B,)
        has_first = (tokens == FIRST_TOKEN).any(dim=1)  # (B,)
        return torch.where(has_min, ARGMIN, torch.where(has_first, FIRST, ARGMAX))

    def labels(self, tokens: torch.Tensor) -> torch.Tensor:
        has_min = (tokens == ARGMIN_TOKEN).any(dim=1)  # (B,)
        has_first = (tokens == FIRST_TOKEN).any(dim=1)  # (B,)
        # torch.argmin/argmax return the first occurrence of the extremum.
        first = torch.zeros_like(has_min, dtype=torch.long)
        return torch.where(has_min, tokens.argmin(dim=1), torch.where(has_first, first, tokens.argmax(dim=1)))

    def sample_case(self, case: int, n: int, seq_len: int, draws: Draws) -> torch.Tensor:
        """n sequences per member (K, n, N) drawn exactly from uniform sequences conditioned on ``case``."""
        s = self.vocab_size
        shape = (n, seq_len)
        if case == ARGMAX:  # neither 64 nor 50 anywhere
            return _uniform_excluding(shape, s, (FIRST_TOKEN, ARGMIN_TOKEN), draws)
        if case == ARGMIN:  # first 64 at k; before: no 64; after: anything
            k = _first_position(n, seq_len, (s - 1) / s, draws)  # (K, n)
            before = _uniform_excluding(shape, s, (ARGMIN_TOKEN,), draws)
            after = _uniform_excluding(shape, s, (), draws)
            marker = ARGMIN_TOKEN
        elif case == FIRST:  # no 64 anywhere; first 50 at k; before: neither; after: no 64
            k = _first_position(n, seq_len, (s - 2) / (s - 1), draws)
            before = _uniform_excluding(shape, s, (FIRST_TOKEN, ARGMIN_TOKEN), draws)
            after = _uniform_excluding(shape, s, (ARGMIN_TOKEN,), draws)
            marker = FIRST_TOKEN
        else:
            raise ValueError(f"unknown case {case!r}; valid: 0 (argmin), 1 (first), 2 (argmax)")
        pos = torch.arange(seq_len, device=draws.device)  # (N,)
        k = k.unsqueeze(-1)  # (K, n, 1)
        return torch.where(pos < k, before, torch.where(pos == k, torch.full_like(after, marker), after))  # (K, n, N)

    def draw(self, batch_size: int, seq_len: int, draws: Draws) -> torch.Tensor:
        if self.case_shares is None:
            return super().draw(batch_size, seq_len, draws)
        argmin_share, first_share, _ = self.case_shares
        u = draws.uniform((batch_size,))  # (K, B): the case of each example, by comparison with the cumulative shares
        case = (u >= argmin_share).long() + (u >= argmin_share + first_share).long()
        per_case = [self.sample_case(c, batch_size, seq_len, draws) for c in range(3)]  # 3 x (K, B, N)
        case = case.unsqueeze(-1)
        return torch.where(case == ARGMIN, per_case[0], torch.where(case == FIRST, per_case[1], per_case[2]))

    def case_eval_set(
        self, n_per_case: int, seq_len: int, draws: Draws
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Equalised sets per member: tokens (K, 3n, N), labels (K, 3n), case ids (3n,), n examples of each case."""
        tokens = torch.cat([self.sample_case(c, n_per_case, seq_len, draws) for c in range(3)], dim=1)
        case = torch.arange(3, device=draws.device).repeat_interleave(n_per_case)  # (3n,)
        return tokens, self.labels(tokens.flatten(0, 1)).view(tokens.shape[:2]), case


@TASKS.register("cases_first_token")
class CasesFirstTokenTask(CasesTask):
    """Same data and labels as ``cases``; the output is read from the first token.

    Example: ``[7, 64, 3, 3, 99, 50] -> 2`` as in ``cases``, but predicted as a linear map from the first
    token's final embedding to max_seq_len logits, sliced to the actual length.
    """

    name = "cases_first_token"
    head: ClassVar[Head] = "first_token_positions"
