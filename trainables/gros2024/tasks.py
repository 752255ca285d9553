"""NT prediction tasks of Gros 2024: symbol series over {0..N-1} built by delayed addition modulo N.

``NxTy`` means basis N = x, delay tau = y. A series starts from tau+1 random symbols (one of N^(tau+1)
initial conditions, uniformly; the all-zero fixed point included) and continues by a deterministic rule:

* ``nt``:   x(t) = [x(t - tau) + x(t - 1 - tau)] % N                  (paper Eq. 4; N2T1 is XOR)
* ``nt_s``: x(t) = [x(t - 1) + ... + x(t - 1 - tau)] % N              (Eq. 8; equals ``nt`` for tau = 1)
* ``nt_r``: the ``nt_s`` rule when x(t - 1 - tau) == 0, else the ``nt`` rule (Eq. 9, a "rare event")
* ``nt_mix``: each series is ``nt`` or ``nt_s`` with probability 1/2, unlabelled (Fig. 6)

Worked example, ``nt`` N2T1 (XOR) from the initial symbols 0, 1: 0 1 1 0 1 1 0 1 1 ... (cycle 011);
``nt_s`` N4T2 from 1, 2, 3: x(3) = (3 + 2 + 1) % 4 = 2, x(4) = (2 + 3 + 2) % 4 = 3, ...

The rules are invertible maps of the state (x(t - 1 - tau), ..., x(t - 1)), so every series is periodic:
:func:`cycle_lengths` counts the cycles (N16T2: 64/16/4/1/1 cycles of length 56/28/14/7/1).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import torch

GROS_TASKS: tuple[str, ...] = ("nt", "nt_s", "nt_r", "nt_mix")
#: The single rules a series follows; ``nt_mix`` draws one of the first two per series.
RULES: tuple[str, ...] = ("nt", "nt_s", "nt_r")
#: What a task's evaluation reports separately: the mixture is scored on each of its two tasks.
COMPONENTS: dict[str, tuple[str, ...]] = {"nt": ("nt",), "nt_s": ("nt_s",), "nt_r": ("nt_r",),
                                          "nt_mix": ("nt", "nt_s")}


def _check(task: str, basis: int, delay: int) -> None:
    if task not in GROS_TASKS:
        raise ValueError(f"invalid task={task!r}; allowed: {', '.join(GROS_TASKS)}")
    if basis < 2:
        raise ValueError(f"invalid basis={basis!r}; allowed: an integer >= 2")
    if delay < 1:
        raise ValueError(f"invalid delay={delay!r}; allowed: an integer >= 1")


def next_symbol(rule: str, window: torch.Tensor, basis: int, delay: int) -> torch.Tensor:
    """The next symbol from the last tau+1 symbols ``window`` (..., tau+1) (oldest first) under ``rule``."""
    oldest = window[..., 0]  # x(t-1-tau)
    nt = (window[..., 1] + oldest) % basis  # x(t-tau) + x(t-1-tau)
    if rule == "nt":
        return nt
    total = window.sum(dim=-1) % basis
    if rule == "nt_s":
        return total
    if rule == "nt_r":
        return torch.where(oldest == 0, total, nt)
    raise ValueError(f"invalid rule={rule!r}; allowed: {', '.join(RULES)}")


def initial_symbols(task: str, basis: int, delay: int, n_series: int, generator: torch.Generator,
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """The random start of ``n_series`` series: (first tau+1 symbols (n, tau+1), rule index (n,)), both int64.

    The rule index points into :data:`RULES`; for ``nt_mix`` it is drawn per series (probability 1/2 each,
    after the symbols). Draws come from ``generator`` only.
    """
    _check(task, basis, delay)
    device = generator.device
    start = torch.randint(0, basis, (n_series, delay + 1), generator=generator, device=device)
    if task == "nt_mix":
        rules = torch.randint(0, 2, (n_series,), generator=generator, device=device)
    else:
        rules = torch.full((n_series,), RULES.index(task), dtype=torch.int64, device=device)
    return start, rules


def continue_series(start: torch.Tensor, rules: torch.Tensor, basis: int, delay: int, length: int) -> torch.Tensor:
    """Series (n, length) from their first tau+1 symbols ``start`` (n, tau+1) and rule indices ``rules`` (n,).

    Deterministic; runs in numpy (a time loop of tiny vector operations, ~1 us each instead of torch's ~5 us).
    """
    k = delay + 1
    if length < k:
        raise ValueError(f"invalid length={length!r}; allowed: an integer >= delay + 1 = {k}")
    x = np.empty((start.shape[0], length), dtype=np.int64)
    x[:, :k] = start.cpu().numpy()
    r = rules.cpu().numpy()
    used = sorted(set(r.tolist()))
    for t in range(k, length):
        oldest = x[:, t - k]  # x(t-1-tau)
        nt = (x[:, t - delay] + oldest) % basis
        if used == [0]:
            x[:, t] = nt
            continue
        total = x[:, t - k:t].sum(axis=1) % basis
        s_value = total if 1 in used else nt
        r_value = np.where(oldest == 0, total, nt) if 2 in used else nt
        x[:, t] = np.where(r == 0, nt, np.where(r == 1, s_value, r_value))
    return torch.from_numpy(x).to(start.device)


def generate(task: str, basis: int, delay: int, n_series: int, length: int, generator: torch.Generator,
             ) -> tuple[torch.Tensor, torch.Tensor]:
    """``n_series`` random series of ``length`` symbols: (series (n, length), rule index (n,)), int64."""
    start, rules = initial_symbols(task, basis, delay, n_series, generator)
    return continue_series(start, rules, basis, delay, length), rules


def cycle_lengths(rule: str, basis: int, delay: int) -> Counter[int]:
    """{cycle length: number of cycles} of ``rule`` over all N^(tau+1) initial conditions.

    Example: ``cycle_lengths("nt", 2, 1) == Counter({3: 1, 1: 1})`` (XOR: cycle 011 and the fixed point 00).
    """
    if rule not in RULES:
        raise ValueError(f"invalid rule={rule!r}; allowed: {', '.join(RULES)}")
    k = delay + 1
    n_states = basis**k
    digits = np.array(np.unravel_index(np.arange(n_states), (basis,) * k)).T  # (S, tau+1), oldest first
    nxt = next_symbol(rule, torch.from_numpy(digits), basis, delay).numpy()
    successor = np.ravel_multi_index(tuple(np.concatenate([digits[:, 1:], nxt[:, None]], axis=1).T),
                                     (basis,) * k)
    seen = np.zeros(n_states, dtype=bool)
    counts: Counter[int] = Counter()
    for start in range(n_states):
        if seen[start]:
            continue
        length, state = 0, start
        while not seen[state]:
            seen[state] = True
            state = successor[state]
            length += 1
        if state != start:
            raise AssertionError(f"rule {rule} N{basis}T{delay} is not invertible (state {start} is transient)")
        counts[length] += 1
    return counts


def rule_rollout_accuracy(task: str, rule: str, basis: int, delay: int, n_context: int, n_predictions: int,
                          n_series: int, seed: int = 0) -> float:
    """Free-running greedy accuracy of a model that knows ``rule`` exactly, on ``task`` series.

    Scored like the studies' evaluation: from the first ``n_context`` symbols of each series, ``n_predictions``
    predictions, each fed back into the context; accuracy = share equal to the true continuation. The level a
    model reaches by learning only ``rule``: e.g. ``nt`` on ``nt_r`` N16T2 (the rare if-statement ignored) scores
    ~35% with 50 predictions, the level of the paper's DPA in Fig. 7 at N_con = 64 ("about 0.36").
    """
    series, _ = generate(task, basis, delay, n_series, n_context + n_predictions,
                         torch.Generator().manual_seed(seed))
    window = series[:, n_context - delay - 1:n_context]  # the rule needs only the last tau + 1 symbols
    correct = 0.0
    for i in range(n_predictions):
        pred = next_symbol(rule, window, basis, delay)
        correct += float((pred == series[:, n_context + i]).float().mean())
        window = torch.cat([window[:, 1:], pred[:, None]], dim=1)
    return correct / n_predictions
