"""Findings' verdicts with intervals from seed variation: a bound is decided only where the interval clears it,
each number says its interval and seeds, cells not run span their metric's range, NOT CHECKED below a finding's
scales or outside the grid, PARTIAL for half a claim, and FAIL as the one verdict the CLI exits 3 for."""

from __future__ import annotations

import math
import re

import numpy as np
import polars as pl
import pytest
from scipy import stats

from analysis.data.meta import parse_meta
from analysis.data.synthetic import ARCHITECTURES, synthetic_record
from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.evaluate import evaluate_findings, failed
from analysis.stats.verdicts.status import Status
from search_spaces import StudyError


def _meta(findings: list[dict], scale: str = "paper", d_models: tuple = (16, 512), **fields: object):
    """A record of a grid of architecture x d_model x learning rate with ``findings``."""
    return parse_meta(synthetic_record(scale=scale, findings=findings,
                                       scientific={"architecture": ARCHITECTURES, "d_model": d_models},
                                       nuisance={"learning_rate": (0.09, 1e-5)}, **fields))


def _cells(g: dict[str, list[float]], sd: float = 0.0, n: int = 5) -> pl.DataFrame:
    """Per architecture, G of its cells over d_model 16, 512 x learning rate 0.09, 1e-5 (in that order)."""
    return pl.DataFrame([{"architecture": a, "d_model": d, "learning_rate": lr, "g": v, "sd": sd, "n_seeds": n}
                         for a, values in g.items()
                         for v, (d, lr) in zip(values, [(16, 0.09), (16, 1e-5), (512, 0.09), (512, 1e-5)],
                                               strict=False)])


def _verdicts(findings: list[dict], cells: pl.DataFrame, *, scale: str = "paper", expected: bool = False,
              metric: str = "val_accuracy", present: set[str] | None = None, **meta: object) -> list:
    record = _meta(findings, scale, **meta)
    grid = record.axes
    full = pl.DataFrame({"architecture": list(grid["architecture"].grid_values())}).join(
        pl.DataFrame({"d_model": list(grid["d_model"].grid_values())}), how="cross").join(
        pl.DataFrame({"learning_rate": list(grid["learning_rate"].grid_values())}), how="cross")
    data = FindingData(cells={metric: cells}, panel="architecture", select_metric=metric,
                       expected=full if expected else None, max_seeds=5, missing_note="2 pending", present=present)
    return evaluate_findings(record, data)


def test_a_number_says_its_interval_its_seeds_and_exactly_the_bound_tested() -> None:
    cells = _cells({"NAP": [0.826] * 4, "max": [0.161] * 4, "sum": [0.15] * 4})
    (v,) = _verdicts([{"description": "max cannot learn (paper: <= 15%)", "below": {"max": 0.15},
                       "above": {"NAP": 0.5}}], cells)
    assert v.status == Status.FAIL and failed([v]) == [v]
    assert [c.text() for c in v.checks] == ["max: 16.1% [16.1, 16.1] (5 seeds), required <= 15.0%: fails",
                                            "NAP: 82.6% [82.6, 82.6] (5 seeds), required >= 50.0%: holds"]
    assert v.lines()[0] == "  FAIL: max cannot learn (paper: <= 15%)"
    # seeds that agree exactly everywhere: no seed noise measured, so no confidence is claimed (issue 57: the line
    # said "95% confidence" and "no confidence" at once)
    assert v.lines()[-1].startswith("      no confidence stated: no seed noise measured")
    assert "95% confidence" not in "\n".join(v.lines())
    noisy = _cells({"NAP": [0.826] * 4, "max": [0.161] * 4, "sum": [0.15] * 4}, sd=0.01)
    (w,) = _verdicts([{"description": "d", "below": {"max": 0.15}, "above": {"NAP": 0.5}}], noisy)
    assert w.lines()[-1].startswith("      95% confidence (a wrong PASS or FAIL at most 5%; one look; each end of an "
                                    "interval at 2.5%); seed noise from each cell's grid neighbours")


def test_a_cells_variance_is_moderated_by_its_grid_neighbours() -> None:
    """A 2 x 2 grid per architecture, every cell a neighbour of the others. NAP's cell (16, 0.09) has seed sd 0.02 over
    5 seeds; its neighbourhood's mean variance (0.02², 0.04², 0.02², 0.02²) is 0.0007, its largest step in G (0.1)
    counts as (0.1 / 8)², NAP's floor is 5/6 (Laplace: 4 of 4 cells differ) of its median variance 0.0004: the prior
    is 0.0007 with 3 degrees of freedom, the cell's variance (3 x 0.0007 + 4 x 0.0004) / 7 with 7."""
    from analysis.stats.noise import NoiseModel
    from analysis.stats.table import cell_table

    cells = pl.DataFrame([{"architecture": "NAP", "d_model": d, "learning_rate": lr, "g": g, "sd": sd, "n_seeds": 5}
                          for (d, lr), g, sd in zip([(16, 0.09), (16, 1e-5), (512, 0.09), (512, 1e-5)],
                                                    (0.5, 0.6, 0.5, 0.5), (0.02, 0.04, 0.02, 0.02), strict=True)])
    table = cell_table({"val_accuracy": cells}, "val_accuracy")
    assert table is not None
    noise = NoiseModel.fit(table)
    annotated = noise.annotate(table)
    first = annotated.filter((pl.col("d_model") == 16) & (pl.col("learning_rate") == 0.09))
    assert first.frame.get_column("prior_var").item() == pytest.approx(0.0007)
    assert first.frame.get_column("prior_df").item() == 3.0
    se, df = noise.standard_errors(first)
    assert se[0] == pytest.approx(math.sqrt((3 * 0.0007 + 4 * 0.0004) / 7 / 5)) and df[0] == 7.0
    (v,) = _verdicts([{"description": "d", "where": {"d_model": [16], "learning_rate": [0.09]},
                       "above": {"NAP": 0.4}}], cells)  # one bound, one cell: each end at 5% one-sided
    assert v.checks[0].estimate.low == pytest.approx(0.5 - stats.t.ppf(0.95, 7) * se[0])
    assert v.checks[0].estimate.high == pytest.approx(0.5 + stats.t.ppf(0.95, 7) * se[0])


def test_a_split_neighbour_widens_a_cell_whose_own_seeds_agree() -> None:
    """Two seeds that agree next to a cell whose seeds split (some learn, some not) are not trusted at their own
    spread: the neighbour's variance enters the prior; far from any split the same two seeds give a narrow interval."""
    from analysis.stats.noise import NoiseModel
    from analysis.stats.table import cell_table

    def cell_se(neighbour_sd: float) -> float:
        grid = pl.DataFrame([{"architecture": "NAP", "d_model": d, "learning_rate": lr, "g": 0.95, "sd": sd,
                              "n_seeds": 2} for d, lr, sd in ((16, 0.09, 0.005), (16, 1e-5, neighbour_sd),
                                                              (512, 0.09, 0.005), (512, 1e-5, 0.005))])
        table = cell_table({"val_accuracy": grid}, "val_accuracy")
        assert table is not None
        noise = NoiseModel.fit(table)
        return float(noise.standard_errors(noise.annotate(table).cell(0))[0][0])

    assert cell_se(0.35) > 10 * cell_se(0.005)


def test_pass_and_fail_need_the_interval_clear_of_the_bound_else_undecided() -> None:
    """A lead of 23.7 points with seeds that disagree wildly is no FAIL of a 10-point claim (Fig. 14 on the
    authors' data): the interval reaches both sides, so it is UNDECIDED; it FAILs only wholly below the bound."""
    noisy = _cells({"BERT": [0.46, 0.2, 0.223, 0.21]}, sd=0.3)
    (v,) = _verdicts([{"description": "small beat large at high rates", "where": {"d_model": [16]},
                       "versus_where": {"d_model": [512]}, "ahead": {"BERT": ["BERT"]}, "margin": 0.1}], noisy)
    assert v.status == Status.UNDECIDED and v.checks[0].state == "undecided"
    assert "lead +23.7 pp [" in v.checks[0].text()
    quiet = _cells({"BERT": [0.46, 0.2, 0.223, 0.21]}, sd=0.002)
    (w,) = _verdicts([{"description": "d", "where": {"d_model": [16]}, "versus_where": {"d_model": [512]},
                       "ahead": {"BERT": ["BERT"]}, "margin": 0.1}], quiet)
    assert w.status == Status.PASS
    (x,) = _verdicts([{"description": "d", "where": {"d_model": [16]}, "versus_where": {"d_model": [512]},
                       "ahead": {"BERT": ["BERT"]}, "margin": 0.3}], quiet)
    assert x.status == Status.FAIL


def test_bounds_are_inclusive_at_most_and_at_least() -> None:
    verdicts = _verdicts([{"description": "sum at most 15%", "below": {"sum": 0.15}},
                          {"description": "sum at least 15%", "above": {"sum": 0.15}}], _cells({"sum": [0.15] * 4}))
    assert [v.status for v in verdicts] == [Status.PASS,
            Status.PASS] and [v.checks[0].state for v in verdicts] == ["holds"] * 2


def test_a_tie_is_not_a_lead() -> None:
    tie = _cells({"NAP": [0.9] * 4, "BERT": [0.9] * 4})
    (v,) = _verdicts([{"description": "NAP more than BERT", "ahead": {"NAP": ["BERT"]}}], tie)
    assert v.status == Status.FAIL  # no noise: the lead is exactly 0, not more than 0
    (w,) = _verdicts([{"description": "d", "ahead": {"NAP": ["BERT"]}}], _cells({"NAP": [0.9] * 4, "BERT": [0.9] * 4},
                                                                                 sd=0.02))
    assert w.status == Status.UNDECIDED  # with seed noise a tie can be neither confirmed nor refuted
    (similar,) = _verdicts([{"description": "d", "ahead": {"NAP": ["BERT"]}, "margin": -0.02}], tie)
    assert similar.status == Status.PASS


def test_more_bounds_and_more_seed_counts_make_each_interval_wider() -> None:
    """Each end of an interval is a one-sided bound at alpha over the ends that can fail the finding (two bounds: 2.5%
    each); an adaptive budget spends alpha over a cell's seed counts (2, 3, 4, 5 seeds: 1/16, 3/16, 5/16, 7/16), so a
    cell's interval depends on its seeds, not on the look - and a mean's (one interval over many cells) on the look."""
    from analysis.stats.intervals.errors import error_budget, spent

    cells = _cells({a: [0.5, 0.5, 0.5, 0.5] for a in ("NAP", "sum")}, sd=0.05)
    (one,) = _verdicts([{"description": "d", "above": {"NAP": 0.1}}], cells)
    (two,) = _verdicts([{"description": "d", "above": {"NAP": 0.1, "sum": 0.1}}], cells)
    assert two.checks[0].estimate.low < one.checks[0].estimate.low
    adaptive = _meta([{"description": "d", "above": {"NAP": 0.1}}], budget="adaptive")
    errors = error_budget(adaptive, 1, 1)
    assert errors.share(np.array([2, 3, 4, 5])).tolist() == pytest.approx([1 / 16, 3 / 16, 5 / 16, 7 / 16])
    assert sum(spent(0.05, k, 4) for k in range(1, 5)) == pytest.approx(0.05)
    data = FindingData(cells={"val_accuracy": cells}, panel="architecture", select_metric="val_accuracy",
                       max_seeds=5)
    first, last = (evaluate_findings(adaptive, data, look=k)[0] for k in (1, adaptive.looks))
    assert first.checks[0].estimate.low == last.checks[0].estimate.low < one.checks[0].estimate.low
    assert "look 1 of 4" in first.basis and adaptive.looks == 4
    mean = _meta([{"description": "d", "statistic": "mean", "above": {"NAP": 0.1}}], budget="adaptive")
    early, late = (evaluate_findings(mean, data, look=k)[0].checks[0].estimate.low for k in (1, 4))
    assert early < late


def test_a_finding_below_its_scales_is_not_checked_not_failed() -> None:
    cells = _cells({"max": [0.161] * 4})
    (v,) = _verdicts([{"description": "max fails", "below": {"max": 0.15}, "scales": ["paper", "cpu"]}], cells,
                     scale="smoke")
    assert v.status == Status.NOT_CHECKED and not v.checks and failed([v]) == []
    assert v.reason == "not checked at this scale (smoke); checked at: paper, cpu"


@pytest.mark.parametrize(("bound", "status"), [
    ({"below": {"max": 0.2}}, Status.UNDECIDED),  # holds so far, a cell not run could exceed 20%
    ({"below": {"max": 0.15}}, Status.FAIL),  # already above: no cell not run can lower a best
    ({"above": {"max": 0.1}}, Status.PASS),  # already above: certain
    ({"above": {"max": 0.5}}, Status.UNDECIDED),  # below so far, a cell not run could reach it
])
def test_cells_not_run_decide_only_what_they_cannot_change(bound: dict, status: str) -> None:
    cells = _cells({"NAP": [0.8] * 4, "max": [0.161, 0.12]})  # max's other two cells not run
    (v,) = _verdicts([{"description": "d", **bound}], cells, expected=True)
    assert v.status == status
    if status == Status.UNDECIDED:
        assert v.reason == ("not decided: an interval holds the bound; cells not run yet could move it (2 pending)")


def test_losses_are_decided_the_other_way_round() -> None:
    cells = _cells({"max": [2.0, 2.2]})  # the best loss is a min: a cell not run can only lower it
    (holds,) = _verdicts([{"description": "d", "metric": "val_loss", "below": {"max": 2.5}}], cells, expected=True,
                         metric="val_loss")
    (open_,) = _verdicts([{"description": "d", "metric": "val_loss", "below": {"max": 1.0}}], cells, expected=True,
                         metric="val_loss")
    assert (holds.status, open_.status) == (Status.PASS, Status.UNDECIDED)


def test_a_panel_value_without_data_fails_when_nothing_is_expected_and_is_undecided_otherwise() -> None:
    cells = _cells({"NAP": [0.8] * 4})
    (v,) = _verdicts([{"description": "d", "below": {"BERT": 0.5}}], cells)
    assert v.status == Status.FAIL and v.checks[0].text() == "BERT: no data, required <= 50.0%: fails"
    (u,) = _verdicts([{"description": "d", "below": {"BERT": 0.5}}], cells, expected=True)
    assert u.status == Status.UNDECIDED


# A 2 x 2 grid per architecture (d_model x learning_rate) with case accuracies, G per cell.
GRID = {
    "train_accuracy": _cells({"NAP": [0.95, 0.40, 0.92, 0.97], "BERT": [0.96, 0.30, 0.20, 0.99]}),
    "train_first_accuracy": _cells({"NAP": [0.9, 0.5, 0.9, 1.0], "BERT": [0.8, 0.3, 0.7, 1.0]}),
    "train_argmin_accuracy": _cells({"NAP": [0.9, 0.9, 0.9, 1.0], "BERT": [0.2, 0.9, 0.1, 1.0]}),
}


def _grid_verdicts(finding: dict, expected: bool = False) -> list:
    record = _meta([finding])
    data = FindingData(cells=GRID, panel="architecture", select_metric="train_accuracy", max_seeds=5)
    return evaluate_findings(record, data)


def test_a_region_and_a_statistic_pick_the_cells_and_say_so() -> None:
    (v,) = _grid_verdicts({"description": "d", "metric": "train_accuracy", "where": {"learning_rate": {"min": 0.05}},
                           "statistic": "worst", "above": {"NAP": 0.9, "BERT": 0.3}})
    assert [re.sub(r" \[.*?\] \(5 seeds\)", "", c.text()) for c in v.checks] == [
        "NAP (worst at learning_rate >= 0.05): 92.0%, required >= 90.0%: holds",
        "BERT (worst at learning_rate >= 0.05): 20.0%, required >= 30.0%: fails"]
    (share,) = _grid_verdicts({"description": "d", "statistic": "share", "level": 0.9, "where": {"d_model": [512]},
                               "below": {"BERT": 0.5}})
    assert share.checks[0].text() == "BERT (share of cells with G >= 90% at d_model in {512}): 50.0% [50.0, 50.0] " \
                                     "(5 seeds), required <= 50.0%: holds"
    (mean,) = _grid_verdicts({"description": "d", "statistic": "mean", "above": {"NAP": 0.81}})
    assert mean.status == Status.PASS and mean.checks[0].value == pytest.approx(0.81)


def test_a_metric_of_case_columns_is_computed_per_cell() -> None:
    (both,) = _grid_verdicts({"description": "d", "metric": "min(train_first_accuracy, train_argmin_accuracy)",
                              "below": {"BERT": 1.0}, "above": {"NAP": 1.0}})
    assert [c.value for c in both.checks] == [1.0, 1.0] and both.status == Status.PASS
    (diff,) = _grid_verdicts({"description": "d", "metric": "train_first_accuracy - train_argmin_accuracy",
                              "where": {"learning_rate": [0.09]}, "above": {"BERT": 0.6}, "below": {"NAP": 0.0}})
    assert [c.value for c in diff.checks] == [pytest.approx(0.0), pytest.approx(0.6)] and diff.status == Status.PASS
    (missing,) = _grid_verdicts({"description": "d", "metric": "max(train_argmax_accuracy, train_accuracy)",
                                 "above": {"NAP": 0.5}})
    assert missing.status == Status.FAIL and missing.reason.startswith("the results have no column of max(")


def test_ahead_compares_panel_values_or_regions_with_a_margin() -> None:
    (v,) = _grid_verdicts({"description": "d", "ahead": {"NAP": ["BERT"]}, "margin": 0.05})
    assert v.status == Status.FAIL and v.checks[0].text().startswith(
        "NAP: 97.0% [97.0, 97.0] (5 seeds), required >= BERT 99.0% (5 seeds) + 5.0 pp = 104.0%; lead -2.0 pp")
    (shift,) = _grid_verdicts({"description": "d", "where": {"d_model": [16], "learning_rate": {"min": 0.05}},
                               "versus_where": {"d_model": [512], "learning_rate": {"min": 0.05}},
                               "ahead": {"BERT": ["BERT"]}, "margin": 0.3})
    assert shift.status == Status.PASS and shift.checks[0].threshold == pytest.approx(0.5)


def test_a_region_naming_no_column_of_the_study_is_refused_when_written() -> None:
    with pytest.raises(StudyError, match=r"invalid where column of finding 'd' of study synthetic.study 'seq_len'; "
                                         r"allowed: task, architecture, d_model, learning_rate"):
        _grid_verdicts({"description": "d", "where": {"seq_len": [256]}, "above": {"NAP": 0.5}})
    with pytest.raises(StudyError, match=r"invalid architecture value of finding 'd' of study synthetic.study "
                                         r"'NPA'; allowed: BERT, MTE, NAP, NON, sum, max"):
        _grid_verdicts({"description": "d", "above": {"NPA": 0.5}})


@pytest.mark.parametrize(("finding", "reason"), [
    ({"where": {"d_model": [64]}}, "the grid has no cell at d_model in {64} (its d_model: 16, 512)"),
    ({"where": {"learning_rate": {"min": 0.1}}},
     "the grid has no cell at learning_rate >= 0.1 (its learning_rate: 0.09, 1e-05)"),
    ({"where": {"d_model": [16]}, "versus_where": {"d_model": {"min": 1024}}, "ahead": {"NAP": ["NAP"]}},
     "the grid has no cell at d_model >= 1024 (its d_model: 16, 512)"),
])
def test_a_region_outside_this_scales_grid_is_not_checked_not_failed(finding: dict, reason: str) -> None:
    (v,) = _verdicts([{"description": "d", "above": {"NAP": 0.5}, **finding}], GRID["train_accuracy"], scale="cpu",
                     metric="train_accuracy")
    assert v.status == Status.NOT_CHECKED and not v.checks and failed([v]) == []
    assert v.reason == f"not checked at this scale (cpu): {reason}"
    # a region inside the grid whose cells have not run yet is UNDECIDED, not NOT CHECKED
    (w,) = _verdicts([{"description": "d", "where": {"d_model": [1024]}, "above": {"NAP": 0.5}}],
                     GRID["train_accuracy"], scale="cpu", metric="train_accuracy", expected=True,
                     d_models=(16, 512, 1024))
    assert w.status == Status.UNDECIDED


def test_panel_values_the_data_lacks_are_left_out_and_named() -> None:
    kept, gone = _verdicts([{"description": "a", "above": {"NAP": 0.5, "MTE": 0.5}},
                            {"description": "b", "ahead": {"MTE": ["BERT"]}}], GRID["train_accuracy"],
                           metric="train_accuracy", present={"NAP", "BERT"})
    # never PASS for half a claim
    assert kept.status == Status.PARTIAL and [c.panel_value for c in kept.checks] == ["NAP"]
    assert kept.reason == "checked on NAP only; not in the data, left out: MTE"
    assert gone.status == Status.NOT_CHECKED and gone.reason == "the data has none of the panel values it names (MTE)"


def test_one_seed_per_cell_without_any_measured_noise_decides_nothing() -> None:
    (v,) = _verdicts([{"description": "d", "above": {"NAP": 0.5}}], _cells({"NAP": [0.9] * 4}, n=1))
    assert v.status == Status.UNDECIDED and "a cell of one seed decides nothing" in v.basis


def test_the_cells_an_undecided_finding_asks_seeds_for() -> None:
    """A best against a threshold: the one cell pointing past it; a share: as many cells as the bound needs; a mean:
    every cell short of seeds; and a bound every seed would leave open (its projection with every seed still holds
    it) asks for nothing."""
    noisy = _cells({"NAP": [0.93, 0.88, 0.70, 0.89]}, sd=0.05, n=2)
    (best,) = _verdicts([{"description": "d", "above": {"NAP": 0.85}}], noisy)
    assert best.status == Status.UNDECIDED and best.contention(futility=True).get_column("d_model").to_list() == [16]
    (share,) = _verdicts([{"description": "d", "statistic": "share", "level": 0.85, "above": {"NAP": 0.25}}], noisy)
    asked = share.contention(futility=True)
    assert share.status == Status.UNDECIDED and asked.get_column("d_model").to_list() == [16]  # one sure cell is enough
    (far,) = _verdicts([{"description": "d", "statistic": "share", "level": 0.85, "above": {"NAP": 0.5}}], noisy)
    # even every seed would not show 2 of 4
    assert far.status == Status.UNDECIDED and far.contention(futility=True) is None
    (mean,) = _verdicts([{"description": "d", "statistic": "mean", "above": {"NAP": 0.825}}], noisy)
    assert mean.status == Status.UNDECIDED and mean.contention(futility=True).height == 4
    (close,) = _verdicts([{"description": "d", "above": {"NAP": 0.931}}], noisy)
    assert close.status == Status.UNDECIDED and close.checks[0].hopeless() and close.contention(futility=True) is None
    assert close.contention().height == 3  # without the futility rule every cell holding 93.1% would still ask


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


def test_equivalence_is_tested_against_the_stated_margin_two_one_sided_tests() -> None:
    """"Level with" and "not ahead" state a margin: PASS only where the difference's whole interval lies inside it,
    FAIL only where it lies wholly outside, UNDECIDED otherwise - never "the interval holds zero"."""
    close = _cells({"NAP": [0.90, 0.89], "BERT": [0.88, 0.87]}, sd=0.003)  # no cliff in G: no neighbour widens
    (v,) = _verdicts([{"description": "d", "level_with": {"NAP": ["BERT"]}, "equivalence_margin": 0.05}], close)
    assert v.status == Status.PASS and "required within 5.0 pp of BERT 88.0%" in v.checks[0].text()
    (tight,) = _verdicts([{"description": "d", "level_with": {"NAP": ["BERT"]}, "equivalence_margin": 0.01}], close)
    assert tight.status == Status.FAIL and "difference +2.0 pp" in tight.checks[0].text()  # 2 points apart, margin 1
    noisy = _cells({"NAP": [0.90, 0.89], "BERT": [0.88, 0.87]}, sd=0.1, n=2)
    (open_,) = _verdicts([{"description": "d", "level_with": {"NAP": ["BERT"]}, "equivalence_margin": 0.05}], noisy)
    assert open_.status == Status.UNDECIDED  # an interval that holds 0 but reaches past the margin shows nothing
    (ahead,) = _verdicts([{"description": "d", "not_ahead": {"NAP": ["BERT"]}, "equivalence_margin": 0.05}], close)
    assert ahead.status == Status.PASS and "required at most 5.0 pp ahead of BERT" in ahead.checks[0].text()
    (behind,) = _verdicts([{"description": "d", "not_ahead": {"BERT": ["NAP"]}, "equivalence_margin": 0.0}], close)
    assert behind.status == Status.PASS  # 2 points behind: not ahead even with no margin
    with pytest.raises(StudyError, match="equivalence_margin of finding 'd' None; allowed: a number >= 0"):
        _meta([{"description": "d", "level_with": {"NAP": ["BERT"]}}])
    with pytest.raises(StudyError, match="equivalence_margin of finding 'd' 0.02; allowed: None without"):
        _meta([{"description": "d", "above": {"NAP": 0.5}, "equivalence_margin": 0.02}])


def test_a_column_the_base_configuration_fixes_does_not_hide_the_cells_not_run() -> None:
    """gros2024's grids sweep attention x N_con at one learning rate: a study half run leaves the other half's
    findings UNDECIDED (cells not run span the range), not FAIL for "no data"."""
    from analysis.stats.coverage import expected_cells
    from search_spaces import get_study
    from search_spaces.record import StudyRecord

    meta = StudyRecord.of(get_study("gros2024.fig7", "cpu"))
    expected = expected_cells(meta, ["attention", "n_context", "learning_rate"])
    assert expected is not None and expected.columns == ["attention", "n_context"]
    assert sorted(expected.rows()) == [("dpa", 64), ("dpa", 128), ("ea", 64), ("ea", 128)]
    half = pl.DataFrame([{"attention": a, "n_context": 64, "learning_rate": 0.02, "g": g, "sd": 0.02, "n_seeds": 16}
                         for a, g in (("dpa", 0.748), ("ea", 0.855))])
    data = FindingData(cells={"val_accuracy": half}, panel="attention", select_metric="val_accuracy",
                       expected=expected, max_seeds=16, missing_note="2 pending")
    statuses = [v.status for v in evaluate_findings(meta, data)]
    # 64 alone decides #1 and the worse-of-both #3; #5 and #6 read each seed's curve, which cells lack; #7 compares
    # the lead at 64 with the lead at 128, whose cells have not run
    assert statuses == [Status.FAIL, Status.UNDECIDED, Status.FAIL, Status.UNDECIDED, Status.NOT_CHECKED,
                        Status.NOT_CHECKED, Status.UNDECIDED]


def test_a_metric_column_missing_because_the_findings_cells_have_not_run_is_undecided_not_a_fail() -> None:
    """A study run in part (``--where``) has rows of other cells only, so a column that only the finding's cells
    carry (the cases accuracies of a cases task) is not there yet: UNDECIDED, naming the cells pending. With every
    cell in (nothing expected), or a region that did run, the missing column is a FAIL naming the columns there are."""
    cells = _cells({"NAP": [0.8, 0.7]})  # d_model 16 only ran; the finding reads d_model 512
    finding = {"description": "d", "metric": "val_argmin_accuracy", "where": {"d_model": [512]}, "below": {"max": 0.1}}
    (pending,) = _verdicts([finding], cells, expected=True)
    assert pending.status == Status.UNDECIDED
    assert pending.reason == ("none of its 12 cell(s) has run yet, so the results have no column of "
                              "val_argmin_accuracy so far")
    (complete,) = _verdicts([finding], cells)
    assert complete.status == Status.FAIL
    assert complete.reason.startswith("the results have no column of val_argmin_accuracy")
    (ran,) = _verdicts([{**finding, "where": {"d_model": [16]}}], cells, expected=True)
    assert ran.status == Status.FAIL


def test_a_fraction_s_interval_stays_inside_0_and_1() -> None:
    """Issue 57: yun2020.theory printed token_collision 0 [-0.006, 0.005] - a share below zero. A share, a collision
    rate or an attention weight is a fraction like an accuracy: its interval is clipped to [0, 1]; an unbounded
    measurement (an output's standard deviation, a log) is not."""
    from analysis.stats.metric import metric_range

    assert metric_range("token_collision") == metric_range("context_share") == metric_range("max_weight") == (0, 1)
    assert metric_range("output_std") == metric_range("context_share_log10") == (-math.inf, math.inf)
    cells = pl.DataFrame([{"architecture": "NAP", "d_model": d, "learning_rate": lr, "g": g, "sd": 0.01,
                           "n_seeds": 3} for (d, lr), g in zip([(16, 0.09), (16, 1e-5), (512, 0.09), (512, 1e-5)],
                                                               (0.0, 0.001, 0.0, 0.002), strict=True)])
    (v,) = _verdicts([{"description": "no collision", "metric": "token_collision", "statistic": "best",
                       "below": {"NAP": 0.01}}], cells, metric="token_collision")
    assert v.checks[0].estimate.low == 0.0 and v.checks[0].estimate.high < 0.02
    assert "[0, " in v.checks[0].text() and "[-" not in v.checks[0].text()
