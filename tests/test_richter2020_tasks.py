"""Tasks: labels on hand-made inputs, case shares, conditional samplers, determinism."""

from __future__ import annotations

import pytest
import torch

from trainables.counter_draws import Draws, member_keys
from trainables.richter2020.tasks import TASKS
from trainables.richter2020.tasks.cases import ARGMAX, ARGMIN, FIRST, CasesTask


def _gen(seed: int = 0) -> Draws:
    """One member's draws (K = 1): the tests below read member 0."""
    return Draws(member_keys([seed], 1, 0, "cpu"), 0)


@pytest.mark.parametrize("name", ["cases", "cases_first_token"])
def test_cases_labels_hand_made(name: str) -> None:
    task = TASKS.get(name)()
    tokens = torch.tensor(
        [
            [7, 64, 3, 3, 99, 50],  # argmin: first minimum 3 at 2
            [7, 50, 3, 3, 99, 12],  # first: 0
            [7, 51, 3, 3, 99, 99],  # argmax: first maximum 99 at 4
            [64, 0, 5, 0, 50, 1],  # argmin wins over first: min 0 at 1
        ]
    )
    assert task.labels(tokens).tolist() == [2, 0, 4, 1]
    assert CasesTask.case_of(tokens).tolist() == [ARGMIN, FIRST, ARGMAX, ARGMIN]


def test_mode_labels_with_tie_rule() -> None:
    task = TASKS.get("mode")(vocab_size=4)
    tokens = torch.tensor([[3, 1, 3, 0, 1, 2], [2, 2, 0, 2, 1, 3], [3, 2, 1, 0, 3, 2]])
    assert task.labels(tokens).tolist() == [1, 2, 2]


def test_heads_and_defaults() -> None:
    assert [TASKS.get(t).head for t in TASKS] == ["per_token", "first_token_positions", "first_token_classes"]
    assert [TASKS.get(t).positional for t in TASKS] == [True, True, False]
    assert [TASKS.get(t).default_val_seq_len(128) for t in TASKS] == [64, 64, 256]
    assert [TASKS.get(t).default_vocab_size for t in TASKS] == [100, 100, 10]


def test_natural_case_shares_at_128() -> None:
    tokens, labels = (x[0] for x in TASKS.get("cases")().sample(50_000, 128, _gen()))
    shares = torch.bincount(CasesTask.case_of(tokens), minlength=3).double() / 50_000
    torch.testing.assert_close(shares, torch.tensor([0.724, 0.201, 0.075], dtype=torch.float64), atol=0.01, rtol=0)
    assert tokens.shape == (50_000, 128) and labels.shape == (50_000,)


def test_case_mix_shares_honoured() -> None:
    task = TASKS.get("cases")(case_mix="0.2,0.3,0.5")
    tokens, labels = (x[0] for x in task.sample(20_000, 128, _gen()))
    shares = torch.bincount(CasesTask.case_of(tokens), minlength=3).double() / 20_000
    torch.testing.assert_close(shares, torch.tensor([0.2, 0.3, 0.5], dtype=torch.float64), atol=0.015, rtol=0)
    torch.testing.assert_close(labels, task.labels(tokens))


@pytest.mark.parametrize("case", [ARGMIN, FIRST, ARGMAX])
def test_conditional_sampler_gives_only_requested_case(case: int) -> None:
    task = TASKS.get("cases")()
    tokens = task.sample_case(case, 5000, 16, _gen())[0]
    assert tokens.shape == (5000, 16) and tokens.min() >= 0 and tokens.max() < 100
    assert torch.all(CasesTask.case_of(tokens) == case)


def test_conditional_sampler_matches_uniform_conditional() -> None:
    """Position of the first 64 in argmin-case sequences follows the truncated geometric law."""
    task = TASKS.get("cases")()
    n = 8
    tokens = task.sample_case(ARGMIN, 40_000, n, _gen())[0]
    first = (tokens == 64).int().argmax(dim=1)
    w = torch.tensor([0.99**k for k in range(n)], dtype=torch.float64)
    torch.testing.assert_close(torch.bincount(first, minlength=n).double() / 40_000, w / w.sum(), atol=0.01, rtol=0)
    # after the marker tokens are uniform over all 100 values (64 included), before it never 64
    pos = torch.arange(n)
    after = tokens[pos > first.unsqueeze(1)]
    assert (after == 64).double().mean().item() == pytest.approx(0.01, abs=0.004)
    assert not torch.any(tokens[pos < first.unsqueeze(1)] == 64)


def test_case_eval_set_is_equalised() -> None:
    tokens, labels, case = TASKS.get("cases")().case_eval_set(100, 32, _gen())
    assert tokens.shape == (1, 300, 32) and labels.shape == (1, 300)
    tokens = tokens[0]
    assert torch.bincount(case).tolist() == [100, 100, 100]
    assert torch.equal(CasesTask.case_of(tokens), case)


@pytest.mark.parametrize("name", TASKS.names())
def test_determinism_per_generator_seed(name: str) -> None:
    task = TASKS.get(name)()
    a, la = task.sample(4, 16, _gen(1))
    b, lb = task.sample(4, 16, _gen(1))
    c, _ = task.sample(4, 16, _gen(2))
    assert torch.equal(a, b) and torch.equal(la, lb) and not torch.equal(a, c)
    mixed = TASKS.get("cases")(case_mix="0.34,0.33,0.33")
    assert torch.equal(mixed.sample(4, 16, _gen(3))[0], mixed.sample(4, 16, _gen(3))[0])


def test_a_task_written_to_the_old_generator_interface_is_refused_where_it_is_defined() -> None:
    """Before issue 49 a task sampled one batch from a torch.Generator; such a class is refused in one line naming the
    method and what is allowed now (a user's own task file fails at import, before Ray starts)."""
    from trainables.richter2020.tasks.base import Task

    with pytest.raises(TypeError, match=r"task class Old: sample\(\.\.\., generator\) is the old interface; allowed: "
                                        r"sample\(\.\.\., draws\)"):
        class Old(Task):
            def sample(self, batch_size: int, seq_len: int, generator: torch.Generator) -> tuple:
                raise AssertionError("never called")

    class New(Task):  # the current interface defines fine
        def sample(self, batch_size: int, seq_len: int, draws: Draws) -> tuple:
            raise AssertionError("never called")

    assert New.__name__ == "New"
