"""``counted``: a sentence that counts comparisons ("regularization often decreases mean performance") - more than a
share of the members are so, each member decided at its share of the error (analysis/stats/kinds/counted.py): the
counts by hand, the shares of the error, the refusals, and the wrong-decision rate by simulation."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

from analysis.data.synthetic import ARCHITECTURES
from analysis.stats.kinds.base import bounds_of
from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.evaluate import evaluate_findings
from analysis.stats.verdicts.status import Status
from search_spaces import Finding, StudyError, get_study
from study.run.preflight import check_finding_kinds
from tests.test_findings import _meta

#: The grid of tests.test_findings: d_model 16, 512 x learning rate 0.09, 1e-5. A member: d 512 against d 16.
BIGGER = {"bigger": ((512,), (16,))}


def _cells(leads: dict[str, float], sd: float = 0.0, base: float = 0.5) -> pl.DataFrame:
    """Per architecture its four cells: G ``base`` at d 16, ``base`` + its lead at d 512 (both rates alike)."""
    return pl.DataFrame([{"architecture": a, "d_model": d, "learning_rate": lr, "g": base + (lead if d == 512 else 0),
                          "sd": sd, "n_seeds": 5}
                         for a, lead in leads.items() for d in (16, 512) for lr in (0.09, 1e-5)])


def _counted(**count: object) -> dict:
    return {"description": "d", "kinds": {"counted": {"values": ARCHITECTURES, "axis": "d_model", "compare": BIGGER,
                                                      **count}}}


def _verdict(finding: dict, cells: dict[str, pl.DataFrame]):
    data = FindingData(cells=cells, panel="architecture", select_metric="val_accuracy", max_seeds=5)
    (verdict,) = evaluate_findings(_meta([finding]), data)
    return verdict


@pytest.mark.parametrize(("more_than", "status", "words"), [
    # 3 of 6 lower: more than a quarter needs 2, each shown at 1/(6 - 2 + 1) of the error
    (0.25, Status.PASS, "3 of 6 comparisons shown so (each at 1/5 of the error), 3 could be (those shown not so at "
                        "1/2), 3 on the means"),
    # more than half needs 4: 3 shown, and the other 3 are shown higher: at most 3 could be
    (0.5, Status.FAIL, "3 of 6 comparisons shown so (each at 1/3 of the error), 3 could be (those shown not so at "
                       "1/4)"),
])
def test_a_count_of_members_shown_so(more_than: float, status: Status, words: str) -> None:
    leads = {"BERT": -0.2, "MTE": -0.2, "NAP": -0.2, "NON": 0.1, "sum": 0.1, "max": 0.1}
    verdict = _verdict(_counted(lead="below", more_than=more_than), {"val_accuracy": _cells(leads, sd=0.01)})
    assert verdict.status == status, verdict.lines()
    (check,) = verdict.checks
    assert words in check.text()
    assert "BERT bigger -20.0 pp [" in check.text() and ": so;" in check.text() and "max bigger +10.0 pp [" in \
        check.text() and ": not so" in check.text()
    assert check.estimate.value == 0.5 and check.estimate.low == 0.5 and check.estimate.high == 0.5


def test_a_member_within_its_noise_is_open_and_a_tie_cannot_be_shown_lower() -> None:
    """Two leads of 1 point with seeds 10 points apart: neither shown lower nor shown not lower; one lead of -20 points
    alone is not more than a quarter of six: UNDECIDED, since the four ties could still be lower."""
    leads = {"BERT": -0.2, "MTE": -0.01, "NAP": 0.01, "NON": 0.0, "sum": 0.0, "max": 0.0}
    verdict = _verdict(_counted(lead="below", more_than=0.25), {"val_accuracy": _cells(leads, sd=0.1)})
    assert verdict.status == Status.UNDECIDED, verdict.lines()
    assert verdict.checks[0].text().count(": open") >= 4


def test_per_value_counts_each_panel_value_over_its_metrics() -> None:
    """``per_value``: one bound per architecture over its two metrics; "some member not higher" (more than 0 of 2)
    holds for BERT (its training lead is -20 points), fails for max (both leads +10, shown higher)."""
    val = _cells({"BERT": 0.1, "max": 0.1}, sd=0.01)
    train = _cells({"BERT": -0.2, "max": 0.1}, sd=0.01)
    finding = _counted(lead="at_most", more_than=0.0, per_value=True, metrics=("train_accuracy", "val_accuracy"),
                       values=("BERT", "max"))
    verdict = _verdict(finding, {"val_accuracy": val, "train_accuracy": train})
    bert, top = verdict.checks
    assert [bert.state, top.state] == ["holds", "fails"], verdict.lines()
    assert verdict.status == Status.FAIL
    assert "1 of 2 comparisons shown so (each at 1/2 of the error), 1 could be (those shown not so at 1/1)" in \
        bert.text() and "BERT train_accuracy bigger -20.0 pp" in bert.text()
    assert "0 of 2 comparisons shown so" in top.text() and "0 could be" in top.text()


def test_one_seed_decides_no_member() -> None:
    """Leads of -20 and +10 points on one seed a cell: every member spans the range, so neither count is shown."""
    leads = {"BERT": -0.2, "MTE": -0.2, "NAP": -0.2, "NON": 0.1, "sum": 0.1, "max": 0.1}
    cells = _cells(leads, sd=0.01).with_columns(n_seeds=pl.lit(1))
    verdict = _verdict(_counted(lead="below", more_than=0.25), {"val_accuracy": cells})
    assert verdict.status == Status.UNDECIDED and "0 of 6 comparisons shown so" in verdict.checks[0].text() and \
        "6 could be" in verdict.checks[0].text() and "3 on the means" in verdict.checks[0].text()


def test_a_side_without_cells_leaves_its_member_open() -> None:
    """A printed table gives one strength per kind: a member whose other side has no cell is open, never so."""
    cells = _cells({"BERT": -0.2}, sd=0.01).filter(pl.col("d_model") == 512)
    verdict = _verdict(_counted(lead="below", more_than=0.0, values=("BERT",)), {"val_accuracy": cells})
    assert verdict.status == Status.UNDECIDED and "(a side has no cell): open" in verdict.checks[0].text()


@pytest.mark.parametrize(("argument", "words"), [
    ({"lead": "lower"}, r"counted\.lead of finding 'd' 'lower'; allowed: below, at_most, at_least"),
    ({"more_than": 1.0}, r"counted\.more_than of finding 'd' 1\.0; allowed: a share of the members, 0 <= share < 1"),
    ({"compare": {"x": (512,)}}, r"counted\.compare .*; allowed: a mapping label -> \(axis values, axis values"),
    ({"values": ()}, r"counted\.values of finding 'd' \[\]; allowed: a non-empty tuple of panel values"),
    ({"metrics": ("a - b",)}, r"counted\.metrics .*; allowed: a tuple of metric columns"),
    ({"margins": 0.1}, r"counted\.margins of finding 'd' 0\.1; allowed: the keys values, axis, compare"),
])
def test_a_bad_argument_is_one_line_naming_the_field(argument: dict, words: str) -> None:
    finding = _counted(lead="below", more_than=0.25)
    finding["kinds"]["counted"].update(argument)
    with pytest.raises(ValueError, match=f"^invalid {words}"):
        bounds_of(Finding(**finding))
    study = get_study("richter2020.table4", "paper")
    bad = study.replace(findings=(Finding(**finding),))
    with pytest.raises(StudyError, match=f"^invalid kinds of finding 'd' of study richter2020.table4: invalid {words}"):
        check_finding_kinds(bad)


def test_an_unknown_metric_is_a_failed_verdict_naming_it() -> None:
    verdict = _verdict(_counted(lead="below", more_than=0.25, metrics=("val_acuracy",)),
                       {"val_accuracy": _cells({"BERT": -0.2}, sd=0.01)})
    assert verdict.status == Status.FAIL and "invalid metric 'val_acuracy'" in verdict.reason


def _seeded(leads: dict[str, float], rng: np.random.Generator, sd: float = 0.05) -> pl.DataFrame:
    """Cells as a study of five seeds a cell measures them: each seed ``sd`` around its cell's true G."""
    truth = _cells(leads)
    draws = truth.get_column("g").to_numpy()[:, None] + sd * rng.standard_normal((truth.height, 5))
    return truth.with_columns(g=pl.Series(draws.mean(1)), sd=pl.Series(draws.std(1, ddof=1)))


def test_the_count_is_wrong_no_more_often_than_stated() -> None:
    """Studies of known truth, five seeds a cell at 5 points of seed noise: where one of six members is truly lower and
    five tie (more than a quarter is false: it needs two), a PASS needs a tie shown lower; where two are lower by a
    hair and four clearly higher (true: two are), a FAIL needs a lower one shown not lower. Each happens at most the
    stated 5% (far less: the shares of the error are Markov's bound, and ties are rarely even close); where three are
    lower by 30 points the count PASSes nearly always (at the seed used: 0 of 60, 0 of 60, 20 of 20)."""
    rng = np.random.default_rng(11)
    finding = _counted(lead="below", more_than=0.25)

    def rate(leads: dict[str, float], status: Status, runs: int = 60) -> int:
        return sum(_verdict(finding, {"val_accuracy": _seeded(leads, rng)}).status == status for _ in range(runs))

    false_claim = {"BERT": -0.3, **dict.fromkeys(ARCHITECTURES[1:], 0.0)}
    true_claim = {"BERT": -0.001, "MTE": -0.001, **dict.fromkeys(ARCHITECTURES[2:], 0.3)}
    clear = {**dict.fromkeys(ARCHITECTURES[:3], -0.3), **dict.fromkeys(ARCHITECTURES[3:], 0.0)}
    allowed = stats.binom.ppf(0.99, 60, 0.05)
    assert rate(false_claim, Status.PASS) <= allowed
    assert rate(true_claim, Status.FAIL) <= allowed
    assert rate(clear, Status.PASS, 20) >= 18
