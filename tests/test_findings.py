"""Findings' verdicts: the bound quoted exactly, NOT CHECKED below its scales, UNDECIDED only where missing cells
could change the outcome, and FAIL as the one verdict the CLI exits 3 for."""

from __future__ import annotations

import re

import polars as pl
import pytest

from analysis.data.meta import parse_meta
from analysis.data.synthetic import ARCHITECTURES, synthetic_record
from analysis.stats.findings import (
    FAIL,
    FINDING_FAILED_EXIT,
    NOT_CHECKED,
    PARTIAL,
    PASS,
    UNDECIDED,
    evaluate_findings,
    failed,
)

BEST = {"val_accuracy": pl.DataFrame({"architecture": ["NAP", "max", "sum"], "g": [0.826, 0.161, 0.15]}),
        "val_loss": pl.DataFrame({"architecture": ["NAP", "max"], "g": [0.2, 2.0]})}


def _meta(findings: list[dict], scale: str = "paper", d_models: tuple = (16, 512)):
    """A record of a grid of architecture x d_model x learning rate with ``findings``."""
    return parse_meta(synthetic_record(scale=scale, findings=findings,
                                       scientific={"architecture": ARCHITECTURES, "d_model": d_models},
                                       nuisance={"learning_rate": (0.09, 1e-5)}))


def _verdicts(findings: list[dict], scale: str = "paper", complete: set[str] | None = None) -> list:
    meta = _meta(findings, scale)
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
    (old,) = _verdicts([{"description": "max fails", "below": {"max": 0.15}, "scales": ["paper", "cpu", "smoke"]}],
                       "smoke")
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


# A 2 x 2 grid per architecture (d_model x learning_rate) with case accuracies, G per cell.
CELLS = pl.DataFrame({
    "architecture": ["NAP"] * 4 + ["BERT"] * 4,
    "d_model": [16, 16, 512, 512] * 2,
    "learning_rate": [0.09, 1e-5] * 4,
})
GRID = {
    "train_accuracy": CELLS.with_columns(g=pl.Series([0.95, 0.40, 0.92, 0.97, 0.96, 0.30, 0.20, 0.99])),
    "train_first_accuracy": CELLS.with_columns(g=pl.Series([0.9, 0.5, 0.9, 1.0, 0.8, 0.3, 0.7, 1.0])),
    "train_argmin_accuracy": CELLS.with_columns(g=pl.Series([0.9, 0.9, 0.9, 1.0, 0.2, 0.9, 0.1, 1.0])),
}


def _grid_verdicts(finding: dict, complete: set[str] | None = None) -> list:
    meta = _meta([finding])
    return evaluate_findings(meta, GRID, "architecture", "train_accuracy", complete, "2 pending")


def test_a_region_and_a_statistic_pick_the_cells_and_say_so() -> None:
    (v,) = _grid_verdicts({"description": "d", "metric": "train_accuracy", "where": {"learning_rate": {"min": 0.05}},
                           "statistic": "worst", "above": {"NAP": 0.9, "BERT": 0.3}})
    assert [c.text() for c in v.checks] == ["NAP (worst at learning_rate >= 0.05): 92.0%, required >= 90.0%: holds",
                                            "BERT (worst at learning_rate >= 0.05): 20.0%, required >= 30.0%: fails"]
    (share,) = _grid_verdicts({"description": "d", "statistic": "share", "level": 0.9, "where": {"d_model": [512]},
                               "below": {"BERT": 0.5}})
    assert share.checks[0].text() == "BERT (share of cells with G >= 90% at d_model in {512}): 50.0%, required <= " \
                                     "50.0%: holds"
    (mean,) = _grid_verdicts({"description": "d", "statistic": "mean", "above": {"NAP": 0.81}})
    assert mean.status == PASS and mean.checks[0].value == pytest.approx(0.81)


def test_a_metric_of_case_columns_is_computed_per_cell() -> None:
    (both,) = _grid_verdicts({"description": "d", "metric": "min(train_first_accuracy, train_argmin_accuracy)",
                              "below": {"BERT": 1.0}, "above": {"NAP": 1.0}})
    assert [c.value for c in both.checks] == [1.0, 1.0] and both.status == PASS
    (diff,) = _grid_verdicts({"description": "d", "metric": "train_first_accuracy - train_argmin_accuracy",
                              "where": {"learning_rate": [0.09]}, "above": {"BERT": 0.6}, "below": {"NAP": 0.0}})
    assert [c.text() for c in diff.checks] == [
        "NAP (best at learning_rate in {0.09}): 0.0%, required <= 0.0%: holds",
        "BERT (best at learning_rate in {0.09}): 60.0%, required >= 60.0%: holds"]
    (missing,) = _grid_verdicts({"description": "d", "metric": "max(train_argmax_accuracy, train_accuracy)",
                                 "above": {"NAP": 0.5}})
    assert missing.status == FAIL and missing.reason.startswith("the results have no column of max(")


def test_ahead_compares_panel_values_or_regions_with_a_margin() -> None:
    (v,) = _grid_verdicts({"description": "d", "ahead": {"NAP": ["BERT"]}, "margin": 0.05})
    assert v.status == FAIL and v.checks[0].text() == "NAP: 97.0%, required >= BERT 99.0% + 5.0 pp = 104.0%: fails"
    (shift,) = _grid_verdicts({"description": "d", "where": {"d_model": [16], "learning_rate": {"min": 0.05}},
                               "versus_where": {"d_model": [512], "learning_rate": {"min": 0.05}},
                               "ahead": {"BERT": ["BERT"]}, "margin": 0.3})
    assert shift.status == PASS and shift.checks[0].threshold == pytest.approx(0.5)
    (similar,) = _grid_verdicts({"description": "d", "ahead": {"NAP": ["BERT"]}, "margin": -0.02})
    assert similar.status == PASS and "BERT 99.0% - 2.0 pp = 97.0%" in similar.checks[0].text()


def test_a_comparison_is_undecided_while_either_side_could_move_it() -> None:
    # NAP's best (97%) holds against BERT's (99% - 5 pp) so far; BERT incomplete could rise past it
    (v,) = _grid_verdicts({"description": "d", "ahead": {"NAP": ["BERT"]}, "margin": -0.05}, complete={"NAP"})
    assert v.status == UNDECIDED and v.reason == "not decided: the grid is incomplete (2 pending)"
    # ... but a best NAP could still raise does not undo a comparison it already wins against a complete BERT
    (w,) = _grid_verdicts({"description": "d", "ahead": {"NAP": ["BERT"]}, "margin": -0.05}, complete={"BERT"})
    assert w.status == PASS


def test_a_region_naming_no_column_of_the_study_is_refused_when_written() -> None:
    from search_spaces import StudyError

    with pytest.raises(StudyError, match=r"invalid where column of finding 'd' of study synthetic.study 'seq_len'; "
                                         r"allowed: task, architecture, d_model, learning_rate"):
        _grid_verdicts({"description": "d", "where": {"seq_len": [256]}, "above": {"NAP": 0.5}})


@pytest.mark.parametrize(("finding", "reason"), [
    ({"where": {"d_model": [64]}}, "the grid has no cell at d_model in {64} (its d_model: 16, 512)"),
    ({"where": {"learning_rate": {"min": 0.1}}},
     "the grid has no cell at learning_rate >= 0.1 (its learning_rate: 0.09, 1e-05)"),
    ({"where": {"d_model": [16]}, "versus_where": {"d_model": {"min": 1024}}, "ahead": {"NAP": ["NAP"]}},
     "the grid has no cell at d_model >= 1024 (its d_model: 16, 512)"),
])
def test_a_region_outside_this_scales_grid_is_not_checked_not_failed(finding: dict, reason: str) -> None:
    # the paper's grid has N = 4, a cpu grid of N = 16, 64, 256 has nothing there to judge: not "no data: fails"
    meta = _meta([{"description": "d", "above": {"NAP": 0.5}, **finding}], "cpu")
    (v,) = evaluate_findings(meta, GRID, "architecture", "train_accuracy", None)
    assert v.status == NOT_CHECKED and not v.checks and failed([v]) == []
    assert v.reason == f"not checked at this scale (cpu): {reason}"
    # a region inside the grid whose cells have not run yet is still UNDECIDED, not NOT CHECKED
    inside = _meta([{"description": "d", "where": {"d_model": [1024]}, "above": {"NAP": 0.5}}], "cpu",
                   d_models=(16, 512, 1024))
    (w,) = evaluate_findings(inside, GRID, "architecture", "train_accuracy", set(), "2 pending")
    assert w.status == UNDECIDED


def test_panel_values_the_data_lacks_are_left_out_and_named() -> None:
    meta = _meta([{"description": "a", "above": {"NAP": 0.5, "MTE": 0.5}},
                  {"description": "b", "ahead": {"MTE": ["BERT"]}}])
    kept, gone = evaluate_findings(meta, GRID, "architecture", "train_accuracy", None, present={"NAP", "BERT"})
    assert kept.status == PARTIAL and [c.panel_value for c in kept.checks] == ["NAP"]  # never PASS for half a claim
    assert kept.reason == "checked on NAP only; not in the data, left out: MTE"
    assert gone.status == NOT_CHECKED and gone.reason == "the data has none of the panel values it names (MTE)"


def test_old_study_json_findings_read_with_the_old_meaning_and_bad_fields_are_named() -> None:
    from analysis.data.meta import MetaError

    record = synthetic_record()
    old = {**record, "findings": [{"description": "d", "metric": "val_accuracy", "below": {"max": 0.15},
                                   "above": {}, "scales": None}]}
    (finding,) = parse_meta(old).findings
    assert (finding.where, finding.statistic, finding.ahead, finding.margin, finding.versus_where, finding.quote,
            finding.scales) == ({}, "best", {}, 0.0, None, "", ("paper", "cpu", "smoke"))
    for bad, message in (
            ({"statistic": "median"}, "invalid statistic of finding 'd' 'median'; allowed: best, worst, mean, share, "
                                      "spread"),
            ({"where": {"learning_rate": 0.1}}, "invalid where.learning_rate 0.1; allowed: a non-empty tuple"),
            ({"where": {"learning_rate": {"low": 0.1}}},
             "invalid where.learning_rate {'low': 0.1}; allowed: {'min': number} and/or {'max': number}")):
        with pytest.raises(MetaError, match=re.escape(message)):
            parse_meta({**record, "findings": [{"description": "d", "below": {"max": 0.1}, **bad}]})
