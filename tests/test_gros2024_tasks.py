"""Gros 2024 NT tasks: the rules, the paper's cycle counts, the mixture, errors that name the field."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from trainables.gros2024.tasks import (
    COMPONENTS,
    RULES,
    continue_series,
    cycle_lengths,
    generate,
    next_symbol,
    rule_rollout_accuracy,
)


def test_xor_series_is_nt_n2t1() -> None:
    x = continue_series(torch.tensor([[0, 1], [1, 1], [0, 0]]), torch.zeros(3, dtype=torch.int64), 2, 1, 9)
    assert x.tolist() == [[0, 1, 1, 0, 1, 1, 0, 1, 1], [1, 1, 0, 1, 1, 0, 1, 1, 0], [0] * 9]


def test_worked_examples_of_nt_s_and_nt() -> None:
    s = continue_series(torch.tensor([[1, 2, 3]]), torch.tensor([1]), 4, 2, 6)  # nt_s N4T2
    assert s.tolist() == [[1, 2, 3, 2, 3, 0]]  # 1+2+3=6%4=2, 2+3+2=7%4=3, 3+2+3=8%4=0
    n = continue_series(torch.tensor([[1, 2, 3]]), torch.tensor([0]), 4, 2, 6)  # nt N4T2: x(t-2) + x(t-3)
    assert n.tolist() == [[1, 2, 3, 3, 1, 2]]  # 2+1=3, 3+2=5%4=1, 3+3=6%4=2


def test_nt_r_switches_to_the_sum_rule_when_the_oldest_symbol_is_zero() -> None:
    window = torch.tensor([[0, 5, 7], [3, 5, 7]])  # x(t-3), x(t-2), x(t-1) for tau = 2
    assert next_symbol("nt_r", window, 16, 2).tolist() == [12, 8]  # (0+5+7) vs (5+3)
    assert next_symbol("nt", window, 16, 2).tolist() == [5, 8]
    assert next_symbol("nt_s", window, 16, 2).tolist() == [12, 15]


@pytest.mark.parametrize(("rule", "basis", "delay", "expected"), [
    ("nt", 16, 2, {56: 64, 28: 16, 14: 4, 7: 1, 1: 1}),  # paper Eq. 7
    ("nt", 16, 3, {120: 512, 60: 64, 30: 8, 15: 1, 1: 1}),  # paper Eq. 6
    ("nt", 2, 5, {63: 1, 1: 1}),  # paper: "a cycle of length 63" and the default state
    ("nt", 2, 1, {3: 1, 1: 1}),  # XOR: 011 and 000
])
def test_cycle_counts_of_the_paper(rule: str, basis: int, delay: int, expected: dict[int, int]) -> None:
    counts = cycle_lengths(rule, basis, delay)
    assert counts == Counter(expected)
    assert sum(length * n for length, n in counts.items()) == basis ** (delay + 1)


def test_mean_cycle_lengths_of_nt_and_nt_s() -> None:
    # Paper, "Mixture of tasks": mean cycle length 47.6 for N16T2 and 23.8 for N16T2-S.
    for rule, mean in (("nt", 47.6), ("nt_s", 23.8)):
        counts = cycle_lengths(rule, 16, 2)
        assert 16**3 / sum(counts.values()) == pytest.approx(mean, abs=0.05)
    assert cycle_lengths("nt_s", 16, 1) == cycle_lengths("nt", 16, 1)  # identical for tau = 1


def test_generated_series_follow_their_rules_and_the_mixture_is_half_and_half() -> None:
    g = torch.Generator().manual_seed(0)
    x, rules = generate("nt_mix", 16, 2, 2000, 12, g)
    assert set(rules.tolist()) == {0, 1}
    assert 0.45 < rules.float().mean().item() < 0.55
    for i in range(0, 2000, 97):
        for t in range(3, 12):
            assert x[i, t] == next_symbol(RULES[int(rules[i])], x[i, t - 3:t], 16, 2)
    x, rules = generate("nt_r", 16, 2, 50, 30, g)
    assert set(rules.tolist()) == {RULES.index("nt_r")}
    assert COMPONENTS["nt_mix"] == ("nt", "nt_s")


def test_generation_depends_only_on_the_generator() -> None:
    a = generate("nt", 16, 3, 5, 20, torch.Generator().manual_seed(3))[0]
    b = generate("nt", 16, 3, 5, 20, torch.Generator().manual_seed(3))[0]
    assert torch.equal(a, b) and a.max() < 16


@pytest.mark.parametrize(("args", "message"), [
    (("ntx", 16, 2), "invalid task='ntx'; allowed: nt, nt_s, nt_r, nt_mix"),
    (("nt", 1, 2), "invalid basis=1; allowed: an integer >= 2"),
    (("nt", 16, 0), "invalid delay=0; allowed: an integer >= 1"),
])
def test_invalid_task_parameters_name_field_value_and_allowed(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        generate(*args, 2, 10, torch.Generator())


def test_a_model_knowing_only_the_nt_rule_scores_the_papers_fig7_dpa_level_on_nt_r() -> None:
    # An error each step with p = P(x(t-3) = 0 and x(t-1) != 0) = 15/256; after the first one the free-running
    # rollout has left the true series and matches it by chance (1/16): the expected accuracy over 50 steps.
    p, n = 15 / 256, 50
    before = (1 - p) * (1 - (1 - p) ** n) / p
    expected = (before + (n - before - (1 - (1 - p) ** n)) / 16) / n  # 0.348
    level = rule_rollout_accuracy("nt_r", "nt", 16, 2, n_context=64, n_predictions=n, n_series=10_000)
    assert abs(level - expected) < 0.01
    assert abs(level - 0.36) < 0.02  # the paper's DPA at N_con = 64 ("about 0.36")
    assert rule_rollout_accuracy("nt_r", "nt", 16, 2, 64, 100, 10_000) < level - 0.1  # longer rollouts: lower
    assert rule_rollout_accuracy("nt_r", "nt_r", 16, 2, 64, n, 1000) == 1.0
    assert rule_rollout_accuracy("nt", "nt", 16, 2, 32, n, 1000) == 1.0


def test_rule_rollout_rejects_an_unknown_rule() -> None:
    with pytest.raises(ValueError, match=r"invalid rule='nt_mix'; allowed: nt, nt_s, nt_r"):
        rule_rollout_accuracy("nt", "nt_mix", 16, 2, 32, 50, 10)
