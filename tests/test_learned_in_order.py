"""``learned_in_order``: within one architecture one metric mostly learned before another, each run read on its own
curve (analysis/stats/kinds/learned_in_order.py): the counts and chances by hand, the refusals, the verdict through a
study's evaluations, and the wrong-decision rate by simulation."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import polars as pl
import pytest
from scipy import stats

from analysis.stats.kinds.base import bounds_of
from analysis.stats.kinds.learned_in_order import RunOrder, order_of
from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.evaluate import evaluate_findings
from analysis.stats.verdicts.status import Status
from search_spaces import Finding
from tests.test_findings import _meta

INF = math.inf
KEYS = ["architecture", "d_model", "learning_rate"]
GRID = ((16, 0.09), (16, 1e-5), (512, 0.09), (512, 1e-5))


def test_each_run_is_in_order_tied_out_of_order_or_left_out() -> None:
    """A's first time against B's: earlier (B never included) in order, the same evaluation tied, later (A never
    included) out of order, both never left out."""
    found = order_of(np.array([1.0, 2.0, 3.0, 3.0, INF, INF, 2.0]), np.array([2.0, INF, 3.0, 1.0, 4.0, INF, 5.0]))
    assert found == RunOrder(in_order=3, tied=1, out_of_order=2, neither=1)
    assert found.ordered == 6


def test_the_two_chances_by_hand() -> None:
    """9 of 10 in order: a count at 1/2 reaches 9 with chance 11/1024 (holds at 5%, not at 1%); 1 in order and 1 tied
    of 10: it falls to 2 with chance 56/1024 (fails at 6%, not at 5%: the tie counts for the order there)."""
    many = RunOrder(9, 0, 1, 3)
    assert many.chances(0.5)[0] == pytest.approx(11 / 1024)
    assert many.state(0.5, (0.05, 0.05)) == "holds" and many.state(0.5, (0.01, 0.01)) == "undecided"
    few = RunOrder(1, 1, 8, 0)
    assert few.chances(0.5)[1] == pytest.approx(56 / 1024)
    assert few.state(0.5, (0.06, 0.06)) == "fails" and few.state(0.5, (0.05, 0.05)) == "undecided"
    # a tie counts against a PASS: 8 in order and 2 tied is 8 of 10, whose chance at 1/2 is 56/1024
    assert RunOrder(8, 2, 0, 0).chances(0.5)[0] == pytest.approx(56 / 1024)
    assert RunOrder(8, 2, 0, 0).state(0.5, (0.05, 0.05)) == "undecided"


def test_the_interval_is_clopper_pearson_with_ties_against_below_and_for_above() -> None:
    """All 10 in order: the lower end is 0.05^(1/10); none in order or tied: the upper end is 1 - 0.05^(1/10); no run:
    0 to 1."""
    assert RunOrder(10, 0, 0, 0).interval((0.05, 0.05)) == pytest.approx((0.05 ** 0.1, 1.0))
    assert RunOrder(0, 0, 10, 0).interval((0.05, 0.05)) == pytest.approx((0.0, 1 - 0.05 ** 0.1))
    low, high = RunOrder(6, 2, 2, 0).interval((0.05, 0.05))
    assert low == pytest.approx(stats.beta.ppf(0.05, 6, 5)) and high == pytest.approx(stats.beta.ppf(0.95, 9, 2))
    assert RunOrder(0, 0, 0, 4).interval((0.05, 0.05)) == (0.0, 1.0)


def _finding(**argument: object) -> Finding:
    order = {"values": ("NAP", "BERT"), "then": "train_first_accuracy", "more_than": 0.5, **argument}
    return Finding(description="in order", metric="train_argmin_accuracy", level=0.5,
                   kinds={"learned_in_order": order})


@pytest.mark.parametrize(("argument", "words"), [
    ({"then": "train_argmin_accuracy"}, "then"),
    ({"then": "a - b"}, "then"),
    ({"more_than": 1.0}, "more_than"),
    ({"values": ()}, "values"),
    ({"order": 1}, "order"),
])
def test_a_bad_argument_is_one_line_naming_the_field(argument: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words) as raised:
        bounds_of(_finding(**argument))
    assert "\n" not in str(raised.value) and "allowed" in str(raised.value)


def _rows(first: dict[str, tuple[float, float]], seeds: int = 5) -> pl.DataFrame:
    """Per architecture, cell and seed, 4 epochs: argmin reaches 90% from its epoch on, first from its (inf: never)."""
    return pl.DataFrame([{"architecture": a, "d_model": d, "learning_rate": lr, "seed": s, "epoch": e,
                          "step": 100 * e, "train_argmin_accuracy": 0.9 if e >= ta else 0.1,
                          "train_first_accuracy": 0.9 if e >= tb else 0.1}
                         for a, (ta, tb) in first.items() for d, lr in GRID for s in range(seeds)
                         for e in range(1, 5)])


def _verdicts(finding: Finding, rows: pl.DataFrame | None, evaluations: bool = True) -> list:
    frame = _rows({"NAP": (1, 3), "BERT": (2, 2)}) if rows is None else rows
    per_epoch = frame.group_by(*KEYS, "epoch").agg(g=pl.col("train_argmin_accuracy").mean(),
                                                   sd=pl.col("train_argmin_accuracy").std(), n_seeds=pl.len())
    cells = per_epoch.sort("g", descending=True).group_by(KEYS).first().drop("epoch")
    data = FindingData(cells={"train_argmin_accuracy": cells}, panel="architecture", select_metric="train_accuracy",
                       max_seeds=5, evaluations=frame if evaluations else None)
    return evaluate_findings(_meta([finding]), data)


def test_a_study_s_runs_decide_each_architecture() -> None:
    """NAP's 20 runs all learn argmin at epoch 1 and first at epoch 3: 20 of 20 in order, a chance of 2^-20; BERT's
    learn both at epoch 2: 20 ties, so not shown in order (ties against) and not shown out of order (ties for):
    UNDECIDED, with NAP's bound holding."""
    (verdict,) = _verdicts(_finding(), None)
    nap, bert = verdict.checks
    assert nap.state == "holds" and nap.estimate.value == 1.0, nap.text()
    assert "in 20 of the 20 runs that reach it in either (4 cells, every seed), 0 at the same epoch" in nap.text()
    assert nap.estimate.low == pytest.approx(0.025 ** (1 / 20))  # the finding's 5% at its two bounds' ends
    assert bert.state == "undecided" and "0 of the 20 runs" in bert.text() and "20 at the same epoch" in bert.text()
    assert verdict.status == Status.UNDECIDED


def test_runs_out_of_order_fail_it_and_runs_learning_neither_are_left_out() -> None:
    """BERT learns first at epoch 1 and argmin at 3 (out of order): FAIL; NAP's runs learn neither and are left out, so
    its bound has no run to read and stays open."""
    (verdict,) = _verdicts(_finding(), _rows({"NAP": (INF, INF), "BERT": (3, 1)}))
    nap, bert = verdict.checks
    assert bert.state == "fails" and "0 of the 20 runs" in bert.text() and "20 after it" in bert.text()
    assert nap.state == "undecided" and "20 reaching it in neither (left out)" in nap.text()
    assert verdict.status == Status.FAIL


def test_without_the_rows_of_each_evaluation_it_is_not_checked() -> None:
    (verdict,) = _verdicts(_finding(), None, evaluations=False)
    assert verdict.status == Status.NOT_CHECKED and "epoch" in verdict.reason


def test_a_then_column_the_rows_lack_is_a_failed_verdict_naming_it() -> None:
    (verdict,) = _verdicts(_finding(then="train_argmax_accuracy"), None)
    assert verdict.status == Status.FAIL and "train_argmax_accuracy" in verdict.reason


def _wrong(share: np.ndarray, tie: float, decide: str, sims: int, rng: np.random.Generator) -> int:
    """How often ``sims`` studies of runs with these chances of being in order (and ``tie`` of a tie) are decided
    ``decide`` at 5% (each distinct count decided once)."""
    u = rng.random((sims, share.size))
    counts = Counter(zip((u < share).sum(1), ((u >= share) & (u < share + tie)).sum(1), strict=True))
    return sum(times for (k, t), times in counts.items()
               if RunOrder(int(k), int(t), share.size - int(k) - int(t), 0).state(0.5, (0.05, 0.05)) == decide)


def test_the_count_is_wrong_no_more_often_than_stated_whatever_each_run_s_chance() -> None:
    """Studies of known truth, 80 runs whose chances of being in order differ (0.1 ... 0.9): where their mean is 0.5
    (the claim "more than half" false), a PASS at most 5% of the time; with a tenth of ties on top, still at most 5%
    (ties count against); where the runs in order or tied have a mean chance of 0.55 (the claim may be true), a FAIL
    at most 5%; where the mean chance is 0.8, a PASS nearly always."""
    rng = np.random.default_rng(58)
    spread = np.linspace(0.1, 0.9, 80)
    allowed = stats.binom.ppf(0.99, 2000, 0.05)
    assert _wrong(spread, 0.0, "holds", 2000, rng) <= allowed
    assert _wrong(spread * 0.9 + 0.05, 0.1, "holds", 2000, rng) <= allowed  # mean 0.5 in order, 0.1 tied
    assert _wrong(spread * 0.9, 0.1, "fails", 2000, rng) <= allowed  # mean 0.45 in order, 0.55 with the ties
    assert _wrong(np.clip(spread + 0.3, 0, 1), 0.0, "holds", 200, rng) >= 190


def test_on_the_authors_release_bert_learns_the_cases_in_the_order_of_their_frequency() -> None:
    """Fig. 3's release (BERT, 80 cells x 5 seeds, 32 epochs): the study keeps ``then``'s column with the rows of each
    evaluation although no time-axis field reads it, and both orders hold for BERT - argmin before first in 263 of 337
    runs (23 tied), first before argmax in 231 of 242 (11 tied, none the other way) - while the other five
    architectures, absent from the file, leave it PARTIAL."""
    from analysis.stats.training_stats import training_stats
    from analysis.stats.verdicts.data import published_data
    from search_spaces import get_study
    from study.cli.findings import published_rows

    _, rows, meta, _ = published_rows(get_study("richter2020.fig3"), "published")
    order = [f for f in meta.findings if "learned_in_order" in f.kinds]
    assert len(order) == 2 and meta.findings[-2:] == tuple(order)
    timed = meta.replace(budget="fixed", findings=order[1:])
    with_rows = training_stats(rows, timed)
    assert with_rows.evaluations is not None and "train_argmax_accuracy" in with_rows.evaluations.columns
    verdicts = evaluate_findings(meta.replace(budget="fixed", findings=order), published_data(
        training_stats(rows, meta.replace(budget="fixed", findings=order)), 5))
    assert [v.status for v in verdicts] == [Status.PARTIAL, Status.PARTIAL], [v.lines() for v in verdicts]
    first, then = (v.checks[0] for v in verdicts)
    assert "in 263 of the 337 runs" in first.text() and "23 at the same epoch, 51 after it" in first.text()
    assert "in 231 of the 242 runs" in then.text() and "11 at the same epoch, 0 after it" in then.text()
    assert first.state == then.state == "holds" and first.estimate.low > 0.5
