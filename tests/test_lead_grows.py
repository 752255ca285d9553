"""``lead_grows``: A's lead over B larger in one region than in another (analysis/stats/kinds/lead_grows.py): by hand,
how often it is wrong by simulation, and its refusals."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.evaluate import evaluate_findings
from analysis.stats.verdicts.status import Status
from search_spaces import Finding, StudyError
from tests.test_findings import _cells, _meta, _verdicts

#: NAP's lead over max at d_model 16 against its lead at d_model 512, each side its best cell over the two rates.
GROWS = {"description": "NAP's lead over max grows at d = 16", "where": {"d_model": [16]},
         "versus_where": {"d_model": [512]}, "lead_grows": {"NAP": ["max"]}}


@pytest.mark.parametrize(("margin", "status"), [(0.0, Status.PASS), (0.49, Status.PASS), (0.51, Status.FAIL)])
def test_the_growth_by_hand(margin: float, status: Status) -> None:
    """Bests: NAP 90% and max 30% at d = 16 (lead 60 points), NAP 60% and max 50% at 512 (lead 10): growth 50 points;
    more than 49 points, not more than 51."""
    cells = _cells({"NAP": [0.9, 0.5, 0.6, 0.4], "max": [0.3, 0.2, 0.5, 0.1]})
    (verdict,) = _verdicts([{**GROWS, "margin": margin}], cells)
    assert verdict.status == status, verdict.lines()
    (check,) = verdict.checks
    assert check.relation == "lead_grows" and check.estimate.value == pytest.approx(0.5)
    assert check.text() == (f"NAP: lead over max at d_model in {{16}} +60.0 pp [+60.0, +60.0] pp, required "
                            f"{f'more than {100 * margin:.1f} pp beyond' if margin else 'beyond'} its lead at "
                            f"d_model in {{512}} +10.0 pp [+10.0, +10.0] pp; growth +50.0 pp [+50.0, +50.0] pp: "
                            f"{status.value.lower().replace('pass', 'holds').replace('fail', 'fails')}")


def test_a_side_without_cells_fails() -> None:
    cells = _cells({"NAP": [0.9, 0.5, 0.6, 0.4]})
    (verdict,) = _verdicts([GROWS], cells)
    assert verdict.status == Status.FAIL


def test_published_data_without_the_other_sides_cells_in_one_region_leaves_the_bound_out() -> None:
    """A release that has max at d = 512 only (its d = 16 cells absent, not failed): the growth cannot be read, so the
    bound is left out (NOT CHECKED: it is the finding's only one), not failed as a side without cells is on a run."""
    cells = _cells({"NAP": [0.9, 0.5, 0.6, 0.4], "max": [0.3, 0.2, 0.5, 0.1]}).filter(
        ~((pl.col("architecture") == "max") & (pl.col("d_model") == 16)))
    (verdict,) = _verdicts([GROWS], cells, present={"NAP", "max"})
    assert verdict.status == Status.NOT_CHECKED, verdict.lines()
    assert "the data has none of the panel values it names (max)" in verdict.reason
    (on_a_run,) = _verdicts([GROWS], cells)  # a run's missing side fails, as before
    assert on_a_run.status == Status.FAIL


def _world(rng: np.random.Generator, growth: float, sd: float = 0.05, seeds: int = 5) -> pl.DataFrame:
    """NAP at 70% / 60% and max at 40% / 30 - growth at d = 16 / 512 (their best rate; the other rate 20 points lower),
    each cell the mean and sd of ``seeds`` seeds scattered by ``sd``."""
    truth = {"NAP": [0.7, 0.5, 0.6, 0.4], "max": [0.4 - growth, 0.2 - growth, 0.3, 0.1]}
    rows = []
    for arch, values in truth.items():
        for v, (d, lr) in zip(values, [(16, 0.09), (16, 1e-5), (512, 0.09), (512, 1e-5)], strict=True):
            draws = v + rng.normal(0, sd, seeds)
            rows.append({"architecture": arch, "d_model": d, "learning_rate": lr, "g": float(draws.mean()),
                         "sd": float(draws.std(ddof=1)), "n_seeds": seeds})
    return pl.DataFrame(rows)


WORLDS = 60


def test_no_growth_passes_and_a_growth_fails_no_more_often_than_stated() -> None:
    """At the edge of the claim (the lead the same in both regions: "grows" is false) a PASS is wrong; just past it
    (a growth of half a point) a FAIL is: each at most the stated 5% plus the binomial slack. A growth of 30 points
    PASSes in most worlds."""
    rng = np.random.default_rng(58)
    record = _meta([GROWS])

    def status(cells: pl.DataFrame) -> Status:
        data = FindingData(cells={"val_accuracy": cells}, panel="architecture", select_metric="val_accuracy",
                           max_seeds=5)
        return evaluate_findings(record, data)[0].status

    slack = stats.binom.ppf(0.99, WORLDS, 0.05)
    statuses = [status(_world(rng, 0.0)) for _ in range(WORLDS)]
    assert statuses.count(Status.PASS) <= slack, statuses.count(Status.PASS)
    statuses = [status(_world(rng, 0.005)) for _ in range(WORLDS)]
    assert statuses.count(Status.FAIL) <= slack, statuses.count(Status.FAIL)
    grown = [status(_world(rng, 0.3, sd=0.02)) for _ in range(10)]
    assert grown.count(Status.PASS) >= 9, grown


@pytest.mark.parametrize("fields", [{"versus_where": None}, {"lead_grows": {"NAP": ["NAP"]}}])
def test_a_bad_lead_grows_is_refused_in_one_line(fields: dict) -> None:
    with pytest.raises(StudyError) as raised:
        Finding(**{**GROWS, **fields})
    assert "lead_grows of finding" in str(raised.value) and "with versus_where" in str(raised.value)
    assert "\n" not in str(raised.value)
