"""``faster_than`` read per seed (a finding's ``per_seed``): each seed's own first time at the level, and an exact
two-sample rank test that A's seeds reach it more than ``time_margin`` earlier than B's (never: censored at the last
evaluation, a tie with every other never)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from scipy import stats

from analysis.stats.kinds.seed_times import censored, chances, hodges_lehmann, rank_sum_chances, shift_interval
from analysis.stats.verdicts.status import Status
from search_spaces import Finding, StudyError
from tests.test_per_seed_findings import _verdicts

NEVER = math.inf
EPOCHS = 20


def _brute(a: list[float], b: list[float]) -> tuple[float, float]:
    """The two chances by listing every relabeling of the pooled values."""
    pooled = np.array(a + b)
    ranks = stats.rankdata(pooled)
    observed = ranks[:len(a)].sum()
    sums = np.array([ranks[list(c)].sum() for c in itertools.combinations(range(len(pooled)), len(a))])
    return float(np.mean(sums <= observed + 1e-9)), float(np.mean(sums >= observed - 1e-9))


@pytest.mark.parametrize(("a", "b", "expected"), [
    ([1, 2], [3, 4], (1 / 6, 1.0)),  # no overlap: 1 / C(4, 2)
    ([1, 2, 3], [4, 5, 6], (1 / 20, 1.0)),
    ([1, 2, 3, 4, 5], [6, 7, 8, 9, 10], (1 / 252, 1.0)),
    ([1, NEVER], [NEVER, NEVER], (1 / 2, 1.0)),  # three nevers tie: A's sum 1 + 3 is the least of its 6 draws' 3
    ([NEVER, NEVER], [1, 2], (1.0, 1 / 6)),  # A never reaches it, B does: A surely behind
    ([NEVER, NEVER], [NEVER, NEVER], (1.0, 1.0)),  # all tie: nothing told
])
def test_the_exact_chance_on_hand_made_cases(a: list[float], b: list[float], expected: tuple[float, float]) -> None:
    found = rank_sum_chances(np.array(a, dtype=float), np.array(b, dtype=float))
    assert found == pytest.approx(expected)
    assert found == pytest.approx(_brute(a, b))


def test_ties_on_an_evaluation_grid_count_as_every_relabeling_does() -> None:
    a, b = [50, 100, 100, NEVER], [100, 150, NEVER, NEVER, 200]
    assert rank_sum_chances(np.array(a), np.array(b)) == pytest.approx((21 / 126, 118 / 126))
    assert rank_sum_chances(np.array(a), np.array(b)) == pytest.approx(_brute(a, b))


def test_the_margin_shifts_a_and_censors_it_at_the_last_evaluation() -> None:
    """A seed that reaches the level only in the last ``margin`` evaluations is never once shifted: it cannot be shown
    more than the margin earlier than a seed that never reaches it."""
    assert list(censored(np.array([3.0, 18.0, NEVER]), 5.0, 20.0)) == [8.0, NEVER, NEVER]
    # A at 18 against B never: earlier, but not by more than 5 within 20 epochs
    a, b = np.array([18.0, 18.0, 18.0]), np.array([NEVER, NEVER, NEVER])
    assert chances(a, b, 0.0, 20.0) == pytest.approx((1 / 20, 1.0))
    assert chances(a, b, 5.0, 20.0) == pytest.approx((1.0, 1.0))
    # shifted by the margin 2, A's (3, 4, 5) lie below B's (8, 9, 10): 1 / C(6, 3); shifted by 6 they overlap
    a, b = np.array([1.0, 2.0, 3.0]), np.array([8.0, 9.0, 10.0])
    assert chances(a, b, 2.0, 20.0) == pytest.approx((1 / 20, 1.0))
    assert chances(a, b, 6.0, 20.0) == pytest.approx(_brute([7, 8, 9], [8, 9, 10]))


def test_the_shift_estimate_and_its_interval() -> None:
    """Hodges-Lehmann: the median of the 25 differences B - A; the interval inverts the two tests (each end at 5%):
    "earlier by more than d" holds for every d < 5 (at 5, A's 5 ties B's 10 and the chance is above 5%), fails for
    every d > 16 (A's 4 and 5 shifted past the last evaluation, epoch 20, are never)."""
    a, b = np.array([2.0, 3, 3, 4, 5]), np.array([8.0, 9, 10, 12, NEVER])
    assert hodges_lehmann(a, b, 20.0) == 7.0
    low, high = shift_interval(a, b, 20.0, 0.05)
    assert (low, high) == (5.0, 16.0)
    assert chances(a, b, 4.9, 20.0)[0] <= 0.05 < chances(a, b, 5.0, 20.0)[0]
    assert chances(a, b, 16.1, 20.0)[1] <= 0.05 < chances(a, b, 16.0, 20.0)[1]  # fails for every d > 16
    assert hodges_lehmann(np.array([NEVER]), np.array([NEVER]), 20.0) is None


def _draw(rng: np.random.Generator, n: int, shift: float = 0.0) -> np.ndarray:
    """``n`` seeds' first times on a grid of evaluations every 50 epochs to 1000 (an escape time: exponential, mean
    300, plus 50), ``shift`` earlier; past 1000: never (about one seed in twenty)."""
    times = 50 * np.ceil((50 + rng.exponential(300, n)) / 50) - shift
    return np.where(times > 1000, NEVER, times)


@pytest.mark.parametrize(("n_a", "n_b"), [(3, 3), (5, 5), (8, 5), (16, 16)])
@pytest.mark.parametrize("margin", [0.0, 100.0])
def test_seeds_of_no_difference_beyond_the_margin_pass_no_more_often_than_stated(n_a: int, n_b: int,
                                                                                 margin: float) -> None:
    """500 worlds a size: A's seeds drawn from B's distribution of times moved exactly ``margin`` earlier (the null's
    edge: ties on the grid, censored nevers), the bound read at 5%: it PASSes at most 5% of the worlds plus the
    binomial slack (and FAILs no more often either: the truth is the edge of both); the exact test on a grid with ties
    is conservative (3/3 seeds: 1/20 exactly, at most once in 20)."""
    rng = np.random.default_rng(58 + n_a + n_b + int(margin))
    worlds, error = 500, 0.05
    passes = fails = 0
    for _ in range(worlds):
        b = _draw(rng, n_b)
        a = _draw(rng, n_a, margin)
        ahead, behind = chances(a, b, margin, 1000.0)
        passes += ahead <= error
        fails += behind <= error
    slack = stats.binom.ppf(0.99, worlds, error)
    assert passes <= slack and fails <= slack, (passes, fails)


def test_a_clear_shift_passes_and_its_reverse_fails() -> None:
    rng = np.random.default_rng(4)
    verdicts = []
    for _ in range(200):
        a, b = _draw(rng, 8, 0.0), _draw(rng, 8, 0.0) + 800  # B 800 epochs later, margin 100
        ahead, behind = chances(a, b, 100.0, 1800.0)
        reverse = chances(b, a, 100.0, 1800.0)
        verdicts.append((ahead <= 0.05, reverse[1] <= 0.05))
    passed, reversed_fails = (sum(v[i] for v in verdicts) for i in range(2))
    assert passed >= 180 and reversed_fails >= 180, (passed, reversed_fails)


def _rows(times: dict[str, list[float]], lrs: tuple[float, ...] = (0.09,)) -> pl.DataFrame:
    """One cell per architecture and learning rate; seed i's curve at 30% until its first time, then 99%."""
    return pl.DataFrame([{"architecture": arch, "d_model": 16, "learning_rate": lr, "seed": seed, "epoch": e,
                          "step": 100 * e, "val_accuracy": 0.99 if e >= t else 0.3}
                         for arch, ts in times.items() for lr in lrs for seed, t in enumerate(ts)
                         for e in range(1, EPOCHS + 1)])


def _faster(a: str = "NAP", b: str = "NON", margin: float = 2, **fields: object) -> dict:
    return {"description": "d", "level": 0.9, "faster_than": {a: (b,)}, "time_margin": margin, "per_seed": True,
            **fields}


FAST, SLOW = [2.0, 3, 3, 4, 5], [8.0, 9, 10, 12, NEVER]


def test_seeds_clearly_earlier_pass_and_the_reverse_fails_with_the_numbers_shown() -> None:
    rows = _rows({"NAP": FAST, "NON": SLOW})
    (v,) = _verdicts([_faster()], rows)
    assert v.status == Status.PASS, v.lines()
    (check,) = v.checks
    assert ("per seed, first reaches 90.0%: NAP's median epoch 3 (5 seeds; at d_model 16, learning_rate 0.09) "
            "against NON's median epoch 10 (5 seeds, 1 never; at d_model 16, learning_rate 0.09); NAP earlier by +7 "
            "epochs [+5, +16] (Hodges-Lehmann, seeds' times censored at epoch 20), required more than 2 epochs "
            "earlier: chance 0.4% of seeds this far ahead without a difference beyond the margin, 100% this far "
            "behind with one (exact rank-sum test), allowed 5%: holds") in check.text()
    assert (check.estimate.value, check.estimate.low, check.estimate.high) == (-7.0, -16.0, -5.0)
    (v,) = _verdicts([_faster("NON", "NAP", 0)], rows)
    assert v.status == Status.FAIL and "0.4% this far behind" in v.checks[0].text(), v.lines()
    (v,) = _verdicts([_faster(margin=6)], rows)  # earlier by about 7, "more than 6" not shown
    assert v.status == Status.UNDECIDED and v.checks[0].open_because.startswith("the seeds' first times do not")


def test_one_slow_seed_holds_the_mean_curve_back_but_not_the_seeds() -> None:
    """Gros' Fig. 4 in small: A's seeds reach the level by epoch 3 but one never does, so A's seed mean never reaches
    95% (the mean-curve bound is open: its interval of first times runs from epoch 2 to never); per seed A is
    typically far earlier than B and the bound PASSes."""
    rows = _rows({"NAP": [1.0, 2, 2, 2, 3, 3, 3, NEVER], "NON": [9.0, 10, 10, 11, 12, 12, 13, 14]})
    mean, per_seed = _verdicts([_faster(per_seed=False, level=0.95), _faster(level=0.95)], rows, seeds=8)
    assert mean.status == Status.UNDECIDED and "first reaches 95.0%: never [" in mean.checks[0].text(), mean.lines()
    assert per_seed.status == Status.PASS and "1 never" in per_seed.checks[0].text(), per_seed.lines()


def test_a_side_of_several_cells_pays_for_picking_its_best() -> None:
    """Two cells a side, both within seed noise of the best: each side's pick costs a quarter of the error, the test
    gets half, and it must hold on all four pairs."""
    (v,) = _verdicts([_faster()], _rows({"NAP": FAST, "NON": SLOW}, lrs=(0.09, 0.03)))
    assert v.status == Status.PASS, v.lines()
    assert "allowed 2.5%; 4 pairs of cells that may be the best, each must agree" in v.checks[0].text()


def test_two_seeds_a_side_never_decide() -> None:
    (v,) = _verdicts([_faster()], _rows({"NAP": [1.0, 2], "NON": [NEVER, NEVER]}), seeds=2)
    assert v.status == Status.UNDECIDED and "chance 17% of seeds this far ahead" in v.checks[0].text(), v.lines()


@pytest.mark.parametrize(("fields", "message"), [
    ({"per_seed": True, "faster_than": {}},
     "invalid per_seed of finding 'd' True; allowed: False, or True with faster_than and no other time-axis bound"),
    ({"per_seed": True, "reached_by": {"NON": 3}},
     "invalid per_seed of finding 'd' True; allowed: False, or True with faster_than and no other time-axis bound"),
    ({"per_seed": "maybe"}, "per_seed of finding d 'maybe'; allowed: a valid boolean"),
    ({"seeds_show": 3}, "(faster_than per seed: per_seed)"),
])
def test_per_seed_is_refused_in_one_line_naming_field_and_value(fields: dict, message: str) -> None:
    with pytest.raises(StudyError) as error:
        Finding(**{"description": "d", "faster_than": {"NAP": ("NON",)}, **fields})
    assert message in str(error.value) and "\n" not in str(error.value)
