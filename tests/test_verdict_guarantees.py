"""What a verdict promises whatever the statistic (issue 48): one seed decides nothing, and fewer seeds never make a
PASS more likely - the property an equivalence tested as "the interval holds zero" breaks (a wider interval holds
zero more often)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from analysis.calibration.findings import calibration_findings
from analysis.calibration.simulate import first_seeds_verdicts
from analysis.calibration.world import World, study
from analysis.stats.training_stats import training_stats
from analysis.stats.verdicts.data import published_data
from analysis.stats.verdicts.evaluate import evaluate_findings
from analysis.stats.verdicts.status import Status
from search_spaces import Finding, get_study
from search_spaces.finding import STATISTICS
from study.cli.findings import published_rows

WORLD = World.of_release()
FINDINGS = calibration_findings(WORLD)
REPLAYS = 80
ALPHA = 0.05


def test_the_calibration_findings_cover_every_statistic_and_relation() -> None:
    assert {f.statistic for f in FINDINGS} == set(STATISTICS)
    relations = {r for f in FINDINGS for r in ("above", "below", "ahead", "level_with", "not_ahead") if getattr(f, r)}
    assert relations == {"above", "below", "ahead", "level_with", "not_ahead"}


@pytest.mark.parametrize("statistic", STATISTICS)
def test_one_seed_decides_nothing_for_any_statistic(statistic: str) -> None:
    """Every statistic, every relation, on one seed per cell of the authors' release: UNDECIDED, never a verdict -
    however the one seed lies (a seed spread of one seed reads [0, 0] and once FAILed every such file)."""
    bounds = [{"above": {"NON": 0.3}}, {"below": {"NON": 0.99}}, {"ahead": {"NON": ("NAP",)}, "margin": -0.5},
              {"level_with": {"NON": ("NAP",)}, "equivalence_margin": 0.9},
              {"not_ahead": {"NON": ("NAP",)}, "equivalence_margin": 0.9}]
    findings = [Finding(description=f"{statistic} {i}", statistic=statistic, level=0.3, **b)
                for i, b in enumerate(bounds)]
    values = WORLD.draw(np.random.default_rng(1), 4)
    verdicts = first_seeds_verdicts(study(findings, WORLD, seeds=4), WORLD, values, 1)
    assert [v.status for v in verdicts] == [Status.UNDECIDED] * len(findings), [v.lines() for v in verdicts]


@pytest.mark.parametrize("name", ["richter2020.fig3", "richter2020.fig5", "richter2020.fig7"])
def test_every_finding_on_one_seed_of_a_release_file_is_undecided(name: str) -> None:
    """Every finding that reads cells' G; a count over runs (``learned_in_order``: each seed of each cell one draw) is
    no statistic of a cell, and one seed of 80 cells is 80 runs: it decides there (fig3 #13, #14 hold on every seed)."""
    _, rows, meta, _ = published_rows(get_study(name), "published")
    counts = [i for i, f in enumerate(meta.findings) if "learned_in_order" in f.kinds]
    for seed in range(5):
        one = training_stats(rows.filter(pl.col("seed") == seed), meta)
        verdicts = evaluate_findings(meta.replace(budget="fixed"), published_data(one, 5))
        cells = [v for i, v in enumerate(verdicts) if i not in counts]
        assert {v.status for v in cells} <= {Status.UNDECIDED, Status.NOT_CHECKED}, [v.lines() for v in cells]
        assert all(verdicts[i].checks[0].state == "holds" for i in counts), [verdicts[i].lines() for i in counts]


@pytest.mark.slow  # a long simulation
def test_fewer_seeds_never_make_a_pass_more_likely() -> None:
    """The same drawn seeds read as their first 2, 3 and 4: for every finding, every statistic and relation, PASS is
    no likelier on fewer seeds than on more, beyond the stated error (a verdict may be wrong with that probability on
    any number of seeds, so a false claim may PASS on fewer up to 5% more often, never more) and the replays' noise
    (two binomial standard errors). An equivalence tested as "the interval holds zero" PASSes more often on fewer seeds
    (a wider interval holds zero more often); tested against its margin it cannot (tests/test_findings.py shows both
    on one pair of cells)."""
    meta = study(FINDINGS, WORLD, seeds=4)
    rng = np.random.default_rng(7)
    passes = {k: np.zeros(len(FINDINGS)) for k in (2, 3, 4)}
    for _ in range(REPLAYS):
        values = WORLD.draw(rng, 4)
        for k in passes:
            passes[k] += [v.status == Status.PASS for v in first_seeds_verdicts(meta, WORLD, values, k)]
    rate = {k: p / REPLAYS for k, p in passes.items()}
    slack = ALPHA + 2 * np.sqrt(np.maximum(rate[4] * (1 - rate[4]), ALPHA * (1 - ALPHA)) / REPLAYS)
    for k in (2, 3):
        worse = [f.description for f, few, every, s in zip(FINDINGS, rate[k], rate[4], slack, strict=True)
                 if few > every + s]
        assert worse == [], (k, worse)
    assert rate[4].sum() > rate[2].sum()  # and more seeds do decide more

