"""Findings' verdicts: the bound quoted exactly, NOT CHECKED below its scales, UNDECIDED only where missing cells
could change the outcome, and FAIL as the one verdict the CLI exits 3 for."""

from __future__ import annotations

import polars as pl
import pytest

from analysis.findings import FAIL, FINDING_FAILED_EXIT, NOT_CHECKED, PASS, UNDECIDED, evaluate_findings, failed
from analysis.meta import parse_meta

BEST = {"val_accuracy": pl.DataFrame({"architecture": ["NAP", "max", "sum"], "g": [0.826, 0.161, 0.15]}),
        "val_loss": pl.DataFrame({"architecture": ["NAP", "max"], "g": [0.2, 2.0]})}


def _verdicts(findings: list[dict], scale: str = "paper", complete: set[str] | None = None) -> list:
    meta = parse_meta({"scale": scale, "findings": findings})
    return evaluate_findings(meta, BEST, "architecture", "val_accuracy", complete, "1 unreadable")


def test_the_check_quotes_exactly_the_bound_it_tests() -> None:
    (v,) = _verdicts([{"description": "max cannot learn (paper: <= 15%)", "below": {"max": 0.15},
                       "above": {"NAP": 0.5}}])
    assert v.status == FAIL
    assert [c.text() for c in v.checks] == ["max: 16.1%, required <= 15.0%: fails",
                                            "NAP: 82.6%, required >= 50.0%: holds"]
    assert v.lines()[0] == "  FAIL: max cannot learn (paper: <= 15%)"
    assert failed([v]) == [v] and FINDING_FAILED_EXIT == 3


def test_bounds_are_inclusive_at_most_and_at_least() -> None:
    (v,) = _verdicts([{"description": "sum at most 15%", "below": {"sum": 0.15}, "above": {"sum": 0.15}}])
    assert v.status == PASS and [c.state for c in v.checks] == ["holds", "holds"]


def test_a_finding_below_its_scales_is_not_checked_not_failed() -> None:
    (v,) = _verdicts([{"description": "max fails", "below": {"max": 0.15}, "scales": ["paper", "cpu"]}], "smoke")
    assert v.status == NOT_CHECKED and not v.checks and failed([v]) == []
    assert v.reason == "not checked at this scale (smoke); checked at: paper, cpu"
    (old,) = _verdicts([{"description": "max fails", "below": {"max": 0.15}}], "smoke")  # no scales: every scale
    assert old.status == FAIL


@pytest.mark.parametrize(("bound", "status"), [
    ({"below": {"max": 0.2}}, UNDECIDED),  # holds so far, a missing cell could exceed 20%
    ({"below": {"max": 0.15}}, FAIL),  # already above: no missing cell can lower a max
    ({"above": {"max": 0.1}}, PASS),  # already above: certain
    ({"above": {"max": 0.5}}, UNDECIDED),  # below so far, a missing cell could reach it
])
def test_an_incomplete_panel_decides_only_what_missing_cells_cannot_change(bound: dict, status: str) -> None:
    (v,) = _verdicts([{"description": "d", **bound}], complete={"NAP", "sum"})
    assert v.status == status
    if status == UNDECIDED:
        assert v.reason == "not decided: the grid is incomplete (1 unreadable)"


def test_losses_are_decided_the_other_way_round() -> None:
    # the best loss is a min over the grid: a missing cell can only lower it
    (holds,) = _verdicts([{"description": "d", "metric": "val_loss", "below": {"max": 2.5}}], complete=set())
    (open_,) = _verdicts([{"description": "d", "metric": "val_loss", "below": {"max": 1.0}}], complete=set())
    assert (holds.status, open_.status) == (PASS, UNDECIDED)


def test_a_panel_value_without_data_fails_when_complete_and_is_undecided_otherwise() -> None:
    (v,) = _verdicts([{"description": "d", "below": {"BERT": 0.5}}])
    assert v.status == FAIL and v.checks[0].text() == "BERT: no data, required <= 50.0%: fails"
    (u,) = _verdicts([{"description": "d", "below": {"BERT": 0.5}}], complete=set())
    assert u.status == UNDECIDED
