"""csordas2021.table1's findings #19-#24 (the routing over the steps, issue 58) judged end to end on synthetic rows of
the study's own grid: each reads its probe columns (a min or max over 8-14 steps) at each cell's checkpoint (the
evaluation of its best depth-validation accuracy), PASSes on what the paper's figures show and FAILs on the opposite."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from analysis.stats.training_stats import training_stats
from analysis.stats.verdicts.data import finding_data
from analysis.stats.verdicts.evaluate import evaluate_findings
from analysis.stats.verdicts.status import Status
from search_spaces import get_study
from search_spaces.csordas2021 import ROUTE_FINDINGS
from search_spaces.record import StudyRecord

SEEDS = 5
#: per probe statistic, the steps its findings read and a value that shows the paper's claim / its opposite
AS_PAPER = {"drift": 0.1, "last_op": 0.99, "same_peak": 0.8, "blur": 0.3, "gate_early": 0.02, "gate_ready": 0.97}
OPPOSITE = {"drift": 0.6, "last_op": 0.3, "same_peak": 0.2, "blur": -0.3, "gate_early": 0.5, "gate_ready": 0.3}


def _probes(values: dict[str, float], noise: np.ndarray) -> dict[str, float]:
    heads = {"drift", "last_op", "same_peak", "blur"}
    return {f"probe_{name}_s{step}" + ("_h1" if name in heads else ""): value + noise[step - 1]
            for name, value in values.items() for step in range(1, 15)}


def _rows(at_checkpoint: dict[str, float], elsewhere: dict[str, float]) -> pl.DataFrame:
    """NDR and + abs/rel + gate backward, 5 seeds, evaluations at steps 1,000 and 2,000: the second has the best
    depth-validation accuracy (the checkpoint) and ``at_checkpoint``'s probes, the first ``elsewhere``'s."""
    rng = np.random.default_rng(58)
    rows = []
    for model in ("NDR", "+ abs/rel + gate"):
        for seed in range(SEEDS):
            for step, accuracy, values in ((1000, 0.6, elsewhere), (2000, 0.99, at_checkpoint)):
                rows.append({"model": model, "direction": "backward", "seed": seed, "step": step,
                             "epoch": step // 1000, "status": "ok", "trial_key": f"{model}-backward",
                             "learning_rate": 1e-4,
                             "depth_val_accuracy": accuracy, "test_accuracy": accuracy, "iid_accuracy": 1.0,
                             **_probes(values, rng.normal(0, 0.01, 14))})
    return pl.DataFrame(rows)


def _verdicts(rows: pl.DataFrame) -> list:
    meta = StudyRecord.of(get_study("csordas2021.table1"))
    verdicts = evaluate_findings(meta, finding_data(meta, training_stats(rows.lazy(), meta)))
    assert [v.finding for v in verdicts[-len(ROUTE_FINDINGS):]] == list(ROUTE_FINDINGS)
    return verdicts[-len(ROUTE_FINDINGS):]


@pytest.mark.parametrize(("at_checkpoint", "elsewhere", "status"), [
    (AS_PAPER, OPPOSITE, Status.PASS),
    (OPPOSITE, AS_PAPER, Status.FAIL),  # what the paper says at the other evaluation: not read
])
def test_the_route_findings_read_every_step_at_the_checkpoint(at_checkpoint: dict, elsewhere: dict,
                                                              status: Status) -> None:
    verdicts = _verdicts(_rows(at_checkpoint, elsewhere))
    assert [v.status for v in verdicts] == [status] * len(ROUTE_FINDINGS), [v.lines() for v in verdicts]


def test_one_step_against_the_claim_decides_an_every_step_finding() -> None:
    """#22 (NDR's gates open when the input arrives, every step 1-9): step 5 alone at 30% fails it; step 12 (no
    function's input arrives there at depth 9-10, not read) at 30% does not."""
    rows = _rows(AS_PAPER, OPPOSITE)
    checkpoint = pl.col("step") == 2000
    late = _verdicts(rows.with_columns(pl.when(checkpoint).then(0.3).otherwise(pl.col("probe_gate_ready_s12"))
                                       .alias("probe_gate_ready_s12")))
    early = _verdicts(rows.with_columns(pl.when(checkpoint).then(0.3).otherwise(pl.col("probe_gate_ready_s5"))
                                        .alias("probe_gate_ready_s5")))
    ready = next(i for i, f in enumerate(ROUTE_FINDINGS) if "gate_ready" in str(f.metric))
    assert late[ready].status == Status.PASS and early[ready].status == Status.FAIL
    assert early[ready].checks[0].estimate.value == pytest.approx(0.3)  # the smallest over the steps: step 5's
