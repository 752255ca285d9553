"""The csordas2021 studies and report sections: Table 1 statistic from rows, probe figures, smoke end to end."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest

from analysis.data.rows import scan_artifacts
from analysis.papers.csordas2021 import PAPER_TABLE1, seed_scores, side_by_side, table1, table1_stats
from search_spaces import get_study
from tests.cli import rows, run_cli


def _rows() -> pl.LazyFrame:
    # Two seeds of NDR forward: seed 0 peaks on depth-valid at step 2 (tied with step 3 -> latest wins).
    data = []
    for seed, dv, test, iid in ((0, [0.2, 0.9, 0.9], [0.1, 0.5, 0.7], [0.3, 0.8, 1.0]),
                                (1, [0.1, 0.6, 0.4], [0.2, 0.9, 0.3], [0.2, 0.6, 0.6])):
        for i, step in enumerate((1, 2, 3)):
            data.append({"model": "NDR", "direction": "forward", "seed": seed, "step": step,
                         "depth_val_accuracy": dv[i], "test_accuracy": test[i], "iid_accuracy": iid[i],
                         "status": "ok", "trial_key": "k"})
    data.append({**data[0], "direction": "backward"})
    return pl.DataFrame(data).lazy()


def test_table1_statistic_iid_at_end_longer_at_best_depth_valid() -> None:
    scores = seed_scores(_rows()).collect().filter(pl.col("direction") == "forward").sort("seed")
    assert scores["iid"].to_list() == [1.0, 0.6]
    assert scores["longer"].to_list() == [0.7, 0.9]  # seed 0: tie at steps 2, 3 -> step 3; seed 1: step 2
    assert scores["best_step"].to_list() == [3, 2]
    stats = table1_stats(seed_scores(_rows()).collect())
    stats = stats.filter((pl.col("direction") == "forward") & (pl.col("metric") == "longer"))
    assert stats["mean"][0] == pytest.approx(0.8)
    assert stats["std"][0] == pytest.approx(math.sqrt(0.02))  # sample std (n-1) of 0.7, 0.9
    table = table1(seed_scores(_rows()).collect())
    assert table.columns == ["model", "IID →", "IID ←", "Longer →", "Longer ←", "seeds"]
    row = table.row(0, named=True)
    assert row["Longer →"] == "0.80 ± 0.14" and row["IID →"] == "0.80 ± 0.28"
    assert row["IID ←"] == "0.30 ± 0.00" and row["seeds"] == 1
    both = side_by_side(table)
    ndr = both.filter(pl.col("model") == "NDR").row(0, named=True)
    assert ndr["Longer → (paper)"] == "1.00 ± 0.00" and ndr["Longer →"] == "0.80 ± 0.14"
    assert both.filter(pl.col("model") == "DNC")["Longer →"][0] == "–"
    assert PAPER_TABLE1["+ abs/rel + gate"][3] == (0.98, 0.03)


def test_studies_cover_every_model_and_direction() -> None:
    paper = get_study("csordas2021.table1")
    assert paper.trial_count() == 14 and paper.seeds == (0, 1, 2, 3, 4)
    cpu = get_study("csordas2021.table1", "cpu")
    assert cpu.trial_count() == 14 and cpu.seeds == (0, 1)
    configs = list(cpu.grid())
    assert configs[0]["model"] == "LSTM"  # the row that learns at this budget runs first
    ndr = next(c for c in configs if c["model"] == "NDR")
    assert ndr["d_model"] == 32 and ndr["learning_rate"] == pytest.approx(1e-3) and ndr["n_steps"] == 1500
    lstm = next(c for c in configs if c["model"] == "LSTM")
    assert lstm["batch_size"] == 256 and lstm["n_steps"] == 4000 and "d_model" not in lstm  # the paper's width
    assert {c["direction"] for c in configs} == {"forward", "backward"}
    tpe = get_study("csordas2021.ndr_tpe")
    assert tpe.sampler == "tpe" and set(tpe.nuisance) == {"learning_rate", "weight_decay", "dropout", "n_layers"}
    assert tpe.metric == "depth_val_accuracy"


def test_the_ablations_study_trains_ndr_and_its_two_variants() -> None:
    """csordas2021.ablations: NDR, NDR without the directional term, NDR with gate bias 0, both directions; the paper
    rows of Table 1 at the paper scale (5 seeds), NDR's cpu settings at the cpu scale; findings at the paper scale."""
    from search_spaces.csordas2021 import CRUCIAL_MARGIN
    from study.trial.trainable import family_of, member_configs, split_config

    paper = get_study("csordas2021.ablations")
    assert paper.trial_count() == 6 and paper.seeds == (0, 1, 2, 3, 4)
    configs = {(c["variant"], c["direction"]): c for c in paper.grid()}
    assert configs["NDR", "forward"] == {"task": "ctl", "eval_every": 1000, "model": "NDR", "variant": "NDR",
                                         "direction": "forward"}  # Table 1's NDR: same hyperparameters
    assert configs["NDR, no directional term", "backward"]["directional"] is False
    assert configs["NDR, gate bias 0", "forward"]["gate_bias"] == 0.0
    for point in configs.values():  # the columns each variant writes: only the field it changes
        hyper, labels = split_config(paper, point)
        r = member_configs(hyper, family_of(hyper))[0].resolved()
        assert labels == {"variant": point["variant"]} and r["d_model"] == 256 and r["n_layers"] == 14
        assert ("directional" in r) == ("directional" in point) and ("gate_bias" in r) == ("gate_bias" in point)
    crucial, gradient_flow = paper.findings
    assert crucial.margin == CRUCIAL_MARGIN == 0.2 and crucial.ahead == {"forward": ("forward",),
                                                                          "backward": ("backward",)}
    assert gradient_flow.faster_than == crucial.ahead and gradient_flow.level == 0.9
    assert all(f.scales == ("paper",) for f in paper.findings)
    cpu = get_study("csordas2021.ablations", "cpu")
    assert cpu.trial_count() == 6 and cpu.seeds == (0, 1)
    assert all(c["d_model"] == 32 and c["n_steps"] == 1500 for c in cpu.grid())


@pytest.mark.slow
def test_smoke_ablations_end_to_end(tmp_path: Path) -> None:
    """The three variants train at the smoke scale; the rows name each by its label and its field."""
    result = run_cli("run", "csordas2021.ablations", "--scale", "smoke", "--storage", "out", timeout=600,
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr + result.stdout
    df = rows(tmp_path / "out" / "csordas2021.ablations.smoke")
    assert df.height == 6 * 2 * 2  # 6 trials x 2 seeds x 2 evaluations
    variant = dict(zip(df["variant"], zip(df["directional"], df["gate_bias"], strict=True), strict=False))
    assert variant == {"NDR": (None, None), "NDR, no directional term": (False, None), "NDR, gate bias 0": (None, 0.0)}
    counts = dict(zip(df["variant"], df["n_params"], strict=False))
    assert counts["NDR, no directional term"] == counts["NDR"] - (2 * 8 + 2 + 1)  # d=8, one head: W, b, beta gone
    assert counts["NDR, gate bias 0"] == counts["NDR"]


@pytest.mark.slow
def test_smoke_table1_end_to_end_with_report(tmp_path: Path) -> None:
    result = run_cli("run", "csordas2021.table1", "--scale", "smoke", "--storage", "out", "--report",
                     timeout=600, cwd=tmp_path)
    assert result.returncode == 0, result.stderr + result.stdout
    study_dir = tmp_path / "out" / "csordas2021.table1.smoke"
    df = rows(study_dir)  # the study's table (the run folded its trial files)
    assert df.height == 14 * 2 * 2  # 14 trials x 2 seeds x 2 evaluations
    assert set(df["model"]) == set(PAPER_TABLE1) - {"DNC"}
    gates = scan_artifacts(study_dir, "gates").collect()  # artifacts_table/gates/ and pending files
    assert gates["trial_key"].n_unique() == 6  # NDR and the two "+ gate" rows, both directions
    summary = next(study_dir.rglob("summary.txt")).read_text()
    assert "Table 1 (ours | paper):" in summary and "| NDR |" in summary
    pngs = {p.name for p in study_dir.rglob("*.png")}
    assert "attention_NDR_forward.png" in pngs and "gates_NDR_backward.png" in pngs


def test_the_inside_findings_read_columns_the_paper_scale_models_write(one_torch_thread: None) -> None:
    """Each model an inside finding names, at the paper's size with the study's probes, trained one step on a tiny
    batch (as preflight does): every column those findings read is in its rows (a step, head or statistic the model does
    not write would leave the finding without data at the paper scale, where it is checked)."""
    import torch

    from search_spaces.csordas2021 import INSIDE_FINDINGS, ROUTE_FINDINGS
    from study.run.preflight import check_finding_metrics
    from study.trial.trainable import family_of, member_configs, split_config

    study = get_study("csordas2021.table1")
    columns: set[str] = set()
    for model in ("NDR", "+ abs/rel + gate", "+ rel"):
        hyper, _ = split_config(study, {"model": model, "direction": "backward"})
        family = family_of(hyper)
        with torch.random.fork_rng(devices=[]):
            result = family.train([family.tiny(member_configs(hyper, family)[0])], [0], device="cpu", on_eval=None,
                                  packed=False)
        columns.update(result.rows[0])
    assert {"probe_gate_open_s14", "probe_nearest_s1_h1", "probe_entropy_s3_h4", "probe_drift_s14_h1",
            "probe_last_op_s14_h1", "probe_gate_early_s8", "probe_gate_ready_s9", "probe_same_peak_s14_h1",
            "probe_blur_s14_h1"} <= columns
    assert not any(c.startswith("probe_") and ("_s15" in c or "_h5" in c) for c in columns)
    inside = study.model_copy(update={"findings": INSIDE_FINDINGS + ROUTE_FINDINGS})
    check_finding_metrics(inside, columns)  # raises StudyError naming a column no model writes
    # #13-#17 and #19-#20 (docs cite findings by number: new ones are appended)
    assert study.findings[12:17] == INSIDE_FINDINGS and study.findings[18:] == ROUTE_FINDINGS
