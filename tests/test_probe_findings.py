"""Findings read probes (issue 58 item 2): a probe column (``probe_*``: what a model does inside) has no better or
worse, so a finding reads it per cell at the cell's checkpoint - the evaluation where the study's own metric's seed
mean is best - never maximised over training; its seeds, interval and verdict are those of any metric."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from analysis.data.meta import parse_meta
from analysis.data.synthetic import synthetic_record
from analysis.stats.table import Column, cell_table
from analysis.stats.training_stats import training_stats
from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.evaluate import evaluate_findings
from analysis.stats.verdicts.status import Status
from search_spaces import Finding, Study, StudyError

#: Per architecture the seed mean of val_accuracy and of two probes at epochs 1-6: accuracy peaks at epoch 4 (NAP)
#: and epoch 5 (BERT), while the entropy falls all along training and the distance rises.
ACCURACY = {"NAP": (0.2, 0.5, 0.8, 0.95, 0.9, 0.85), "BERT": (0.2, 0.3, 0.5, 0.7, 0.9, 0.8)}
ENTROPY = {"NAP": (2.0, 1.8, 1.5, 1.0, 0.6, 0.3), "BERT": (2.0, 1.95, 1.9, 1.85, 1.8, 1.75)}
DISTANCE = {"NAP": (3.0, 2.5, 2.0, 1.0, 0.9, 0.8), "BERT": (3.0, 3.0, 3.0, 3.0, 3.0, 3.0)}
SEEDS = 5


def _rows(sd: float = 0.01, missing: tuple[str, int] | None = None) -> pl.DataFrame:
    """One row per architecture, seed and epoch (one cell each), seeds scattered by ``sd``; ``missing``: the
    (architecture, seed) whose probes are null (a diverged seed's fill rows)."""
    rng = np.random.default_rng(0)
    rows = []
    for a in ACCURACY:
        for s in range(SEEDS):
            for e in range(6):
                gone = missing == (a, s)
                rows.append({"architecture": a, "d_model": 16, "learning_rate": 0.01, "seed": s, "epoch": e + 1,
                             "step": 100 * (e + 1), "status": "ok", "trial_key": a,
                             "val_accuracy": ACCURACY[a][e] + rng.normal(0, sd) / 10,
                             "probe_entropy_l1_h1": None if gone else ENTROPY[a][e] + rng.normal(0, sd),
                             "probe_distance_l1_h1": None if gone else DISTANCE[a][e] + rng.normal(0, sd)})
    return pl.DataFrame(rows)


def _stats(findings: list[dict], rows: pl.DataFrame | None = None):
    meta = parse_meta(synthetic_record(scientific={"architecture": tuple(ACCURACY), "d_model": (16,)},
                                       nuisance={"learning_rate": (0.01,)}, seeds=tuple(range(SEEDS)),
                                       findings=findings))
    return meta, training_stats((_rows() if rows is None else rows).lazy(), meta)


def _verdicts(findings: list[dict], rows: pl.DataFrame | None = None) -> list:
    meta, stats = _stats(findings, rows)
    data = FindingData(cells=stats.finding_cells(), panel="architecture", select_metric=stats.metrics.select,
                       max_seeds=SEEDS)
    return evaluate_findings(meta, data)


def test_a_probe_is_read_at_the_epoch_its_cells_accuracy_is_best_not_at_its_own_best() -> None:
    rows = _rows()
    _, stats = _stats([{"description": "d", "metric": "probe_entropy_l1_h1", "below": {"NAP": 1.2}}], rows)
    assert stats.metrics.read == ("probe_entropy_l1_h1",) and "probe_entropy_l1_h1" not in stats.metrics.extra_max
    cells = stats.finding_cells()["probe_entropy_l1_h1"].sort("architecture")
    for a, epoch in (("BERT", 5), ("NAP", 4)):
        at = rows.filter(pl.col("architecture") == a, pl.col("epoch") == epoch).get_column("probe_entropy_l1_h1")
        cell = cells.filter(pl.col("architecture") == a).row(0, named=True)
        assert cell["g"] == pytest.approx(at.mean()) and cell["sd"] == pytest.approx(at.std())
        assert cell["seeds"] == pytest.approx(at.to_list()) and cell["n_seeds"] == SEEDS
        assert cell["r"] == pytest.approx(at.min()) and cell["b"] == pytest.approx(at.max())
    table = cell_table(stats.finding_cells(), "probe_entropy_l1_h1")
    assert table is not None and table.values(Column.LIFT).tolist() == [0.0, 0.0]  # nothing maximised: no lift
    assert cells.get_column("g").to_list() == pytest.approx([1.8, 1.0], abs=0.02)  # not 2.0, its best over training


@pytest.mark.parametrize(("bound", "status"), [
    ({"below": {"NAP": 1.2}}, Status.PASS),  # 1.0 at its checkpoint (2.0 at its largest)
    ({"below": {"NAP": 0.8}}, Status.FAIL),  # its final 0.3 would pass: the checkpoint is epoch 4
    ({"ahead": {"BERT": ("NAP",)}, "margin": 0.5}, Status.PASS),  # BERT attends more broadly: 1.8 against 1.0
    ({"ahead": {"NAP": ("BERT",)}}, Status.FAIL),
    ({"level_with": {"NAP": ("BERT",)}, "equivalence_margin": 0.1}, Status.FAIL),
])
def test_a_probe_finding_is_decided_on_its_seeds_at_the_checkpoint(bound: dict, status: Status) -> None:
    (v,) = _verdicts([{"description": "d", "metric": "probe_entropy_l1_h1", **bound}])
    assert v.status == status, v.lines()


def test_a_difference_of_two_probes_is_taken_per_seed_at_the_checkpoint() -> None:
    """NAP: entropy 1.0 less distance 1.0 at epoch 4 (at its last epoch: 0.3 - 0.8): about 0, inside +-0.1."""
    metric = "probe_entropy_l1_h1 - probe_distance_l1_h1"
    (v,) = _verdicts([{"description": "d", "metric": metric, "above": {"NAP": -0.1}, "below": {"NAP": 0.1}}])
    assert v.status == Status.PASS, v.lines()
    _, stats = _stats([{"description": "d", "metric": metric, "above": {"NAP": -0.1}}])
    nap = stats.finding_cells()[metric].filter(pl.col("architecture") == "NAP").row(0, named=True)
    assert nap["g"] == pytest.approx(0.0, abs=0.02) and len(nap["seeds"]) == SEEDS


def test_a_seed_without_probe_values_is_left_out_and_counted_so() -> None:
    rows = _rows(missing=("NAP", 2))
    _, stats = _stats([{"description": "d", "metric": "probe_entropy_l1_h1", "below": {"NAP": 1.2}}], rows)
    nap = stats.finding_cells()["probe_entropy_l1_h1"].filter(pl.col("architecture") == "NAP").row(0, named=True)
    kept = rows.filter(pl.col("architecture") == "NAP", pl.col("epoch") == 4, pl.col("seed") != 2)
    assert nap["n_seeds"] == SEEDS - 1 and nap["g"] == pytest.approx(kept.get_column("probe_entropy_l1_h1").mean())


@pytest.mark.parametrize(("fields", "words"), [
    ({"metric": "probe_entropy_l1_h1 - val_accuracy", "above": {"NAP": 0.0}}, "probe columns only or none"),
    ({"metric": "probe_gate_s1", "still_holds": ("NDR",)}, "not a probe with a time-axis bound"),
    ({"metric": "probe_entrpy_l1_h1", "above": {"NAP": 0.0}}, "'probe_entrpy_l1_h1'; allowed: a probe column"),
    ({"metric": "max(probe_gate_s1, probe_gate_s2_h1)", "below": {"NDR": 0.5}}, "'probe_gate_s2_h1'; allowed"),
])
def test_a_probe_finding_that_cannot_mean_anything_is_refused_in_one_line(fields: dict, words: str) -> None:
    with pytest.raises(StudyError) as error:
        Finding(description="d", **fields)
    assert words in str(error.value) and "\n" not in str(error.value)


def test_a_probe_is_no_study_metric() -> None:
    with pytest.raises(StudyError, match="metric of study s .probe_entropy_l1_h1.; allowed: a results column that "
                                         "is not a probe"):
        Study(name="s", goal="g", tasks=("cases",), metric="probe_entropy_l1_h1",
              scientific={"architecture": ("NAP",)}, nuisance={"learning_rate": (0.01,)})


def test_a_probe_verdict_says_where_it_was_read_in_the_probes_own_unit() -> None:
    (v,) = _verdicts([{"description": "d", "metric": "probe_entropy_l1_h1", "below": {"NAP": 1.2}}])
    assert "a probe, read at each cell's checkpoint (the evaluation where its val_accuracy seed mean is best)" in \
        v.basis
    assert " pp" not in v.basis and "median sd 0.0" in v.basis  # entropy in nats, not points of a fraction


def test_results_without_the_probe_leave_its_finding_not_checked_not_failed() -> None:
    """The authors' releases (and a study that did not ask for probes) have no probe column: nothing says yes or no."""
    (v,) = _verdicts([{"description": "d", "metric": "probe_peak_l1_h1", "above": {"NAP": 0.5}}])
    assert v.status == Status.NOT_CHECKED and "probes are written only by trials that ask for them" in v.reason


def test_min_over_heads_takes_the_heads_a_model_has() -> None:
    """A one-head model writes no ``_h2`` column: ``min`` over both heads is its one head; ``a - b`` needs both."""
    rows = _rows().with_columns(probe_entropy_l1_h2=pl.when(pl.col("architecture") == "BERT")
                                .then(pl.col("probe_entropy_l1_h1") - 0.5))
    both = "min(probe_entropy_l1_h1, probe_entropy_l1_h2)"
    _, stats = _stats([{"description": "d", "metric": both, "below": {"NAP": 1.2}},
                       {"description": "e", "metric": "probe_entropy_l1_h1 - probe_entropy_l1_h2",
                        "below": {"NAP": 1.2}}], rows)
    cells = stats.finding_cells()
    g = dict(cells[both].select("architecture", "g").iter_rows())
    assert g["NAP"] == pytest.approx(1.0, abs=0.02) and g["BERT"] == pytest.approx(1.3, abs=0.02)
    difference = cells["probe_entropy_l1_h1 - probe_entropy_l1_h2"]
    assert difference.get_column("architecture").to_list() == ["BERT"]  # NAP has no h2: not measured


def test_yun_breadth_findings_read_columns_its_stack_writes(one_torch_thread: None) -> None:
    """Preflight's one-step run of each configuration (at the scale the findings are checked at) writes every probe
    column the findings read; a stack of two heads (the smoke scale's) does not write ``_h4``, which preflight
    leaves alone there (the findings are not checked at smoke)."""
    from search_spaces import get_study
    from study.run.preflight import check_components

    assert check_components(get_study("yun2020.breadth"), echo=lambda _: None) == 2
    assert check_components(get_study("yun2020.breadth", "smoke"), echo=lambda _: None) == 2
    broken = get_study("yun2020.breadth").model_copy(update={"findings": (
        Finding(description="d", metric="probe_entropy_l5_h1", above={"cases": 0.0}),)})
    with pytest.raises(StudyError, match="invalid metric of finding 'd' of study yun2020.breadth "
                                         "'probe_entropy_l5_h1'"):
        check_components(broken, echo=lambda _: None)


def test_a_probe_finding_does_not_keep_a_model_at_the_ceiling_training() -> None:
    """The early stop (every seed of a cell at the ceiling of every column the study reads) ignores probes: they are
    read at the checkpoint the study's metric picks, the first evaluation at its best, which stopping there keeps."""
    from search_spaces import get_study
    from study.trial.stopping import read_columns

    read = read_columns(get_study("yun2020.breadth"))
    assert "val_accuracy" in read and not any(c.startswith("probe_") for c in read)


def test_min_over_heads_reads_rows_that_have_only_one_head() -> None:
    """Rows of one-head models alone (``--where`` ran those first) have no ``_h2`` column at all: ``min`` over both
    heads still reads their head; ``a - b`` of a missing column is not read (its finding: no column)."""
    both = "min(probe_entropy_l1_h1, probe_entropy_l1_h2)"
    _, stats = _stats([{"description": "d", "metric": both, "below": {"NAP": 1.2}},
                       {"description": "e", "metric": "probe_entropy_l1_h1 - probe_entropy_l1_h2",
                        "below": {"NAP": 1.2}}])
    assert stats.metrics.read == (both,)
    g = dict(stats.finding_cells()[both].select("architecture", "g").iter_rows())
    assert g["NAP"] == pytest.approx(1.0, abs=0.02) and g["BERT"] == pytest.approx(1.8, abs=0.02)
