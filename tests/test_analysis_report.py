"""write_report, scan_study and the import boundary of analysis/ on small synthetic studies."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from matplotlib.image import imread

from analysis.data.meta import read_study_meta
from analysis.data.reference import load_reference, load_reference_file
from analysis.data.rows import scan_study
from analysis.data.synthetic import synthetic_record, write_synthetic_study
from analysis.report.build import build_report, write_report
from analysis.stats.rgb import epochwise_rgb
from search_spaces.axes import show_value

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
GRID = {
    "architecture": ["BERT", "NAP"],
    "d_model": [8, 16, 32],
    "learning_rate": [0.09, 0.0081, 0.000729],
}
FINDINGS = [
    {"description": "NAP learns", "metric": "val_accuracy", "above": {"NAP": 0.4}},
    {"description": "BERT cannot learn", "metric": "val_accuracy", "below": {"BERT": 0.2}},
]


@pytest.fixture
def study(tmp_path: Path) -> Path:
    study_dir = tmp_path / "synthetic.study"
    write_synthetic_study(
        study_dir,
        GRID,
        seeds=(0, 1),
        n_evals=4,
        meta={
            "findings": FINDINGS,
            "reference": "richter2020/cases__var_dim",
            "deviations": ["fewer seeds than the paper"],
        },
    )
    return study_dir


def _assert_real_png(path: Path) -> None:
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    img = imread(path)
    assert img.shape[0] > 100 and img.shape[1] > 100
    assert np.unique(img.reshape(-1, img.shape[-1]), axis=0).shape[0] > 10  # not a single colour


def test_scan_study_reads_every_trial(study: Path) -> None:
    df = scan_study(study).collect()
    assert df.height == 2 * 3 * 3 * 2 * 4
    assert df.get_column("trial_key").n_unique() == 18
    assert read_study_meta(study).trial_count() == 18


def test_write_report(study: Path, tmp_path: Path) -> None:
    (study / "failed").mkdir()
    (study / "failed" / "0123456789abcdef.json").write_text(json.dumps({"error": "boom"}))
    out = tmp_path / "report"
    report = build_report(study, out)
    assert report.index_html == out / "index.html"
    text = report.index_html.read_text()
    names = {p.name for p in report.figures}
    assert {
        "grid_val_accuracy.png",
        "grid_train_accuracy.png",
        "published_val_accuracy.png",
        "cases_val.png",
        "cases_train.png",
        "robustness.png",
        "learning_curves.png",
    } <= names
    for path in report.figures:
        _assert_real_png(path)
    assert text.count("data:image/png;base64,") == len(report.figures)
    assert "http" not in text.replace("http-equiv", "")  # self-contained: no network
    # findings with numbers: NAP learns (PASS: 72% with an interval from 2 seeds over 40%), BERT cannot learn (FAIL)
    assert "<span class='pass'>PASS</span> NAP learns" in text
    assert "<span class='fail'>FAIL</span> BERT cannot learn" in text
    assert "fewer seeds than the paper" in text
    assert "trials failed for good (failed/*.json)</td><td>1<" in text
    # the published BERT grid restricted to d in {8,16,32} and the 3 learning rates; its best number
    lf = load_reference("richter2020/cases__var_dim").filter(
        pl.col("d_model") <= 32, pl.col("learning_rate").round_sig_figs(6).is_in(GRID["learning_rate"])
    )
    published = epochwise_rgb(lf, "val_accuracy", ["architecture", "d_model", "learning_rate"]).collect()
    assert published.height == 9
    # the comparison table holds the published best G of that restricted grid (in %)
    assert f"<td>{100 * published.get_column('g').max():.1f}</td>" in text
    # the failed/*.json record is a trial without data: the summary says what the numbers lack first
    assert report.summary.splitlines()[0] == "synthetic.study: INCOMPLETE, computed from 18 of 19 trials (1 failed)"
    assert report.summary.splitlines()[1] == "  failed trial: 0123456789abcdef (failed/0123456789abcdef.json)"
    assert report.summary.splitlines()[2].startswith("synthetic.study: best val_accuracy G")
    assert "NAP" in report.summary and (out / "summary.txt").read_text().strip() == report.summary


def test_extra_varying_hyperparameter_becomes_facets(tmp_path: Path) -> None:
    study_dir = tmp_path / "facets"
    write_synthetic_study(study_dir, {**GRID, "dropout": [0.0, 0.5]}, cases=False)
    index = write_report(study_dir, tmp_path / "out")
    assert index == tmp_path / "out" / "index.html"
    names = {p.name for p in (tmp_path / "out").glob("*.png")}
    assert {"grid_val_accuracy_dropout-0.0.png", "grid_val_accuracy_dropout-0.5.png"} <= names
    assert not any(n.startswith("cases_") for n in names)  # case columns are null


def test_measurement_study_gets_pooling_scale_figure(tmp_path: Path) -> None:
    study_dir = tmp_path / "fig1"
    (study_dir / "trials").mkdir(parents=True)
    for arch, scale in (("BERT", 0.5), ("sum", 1.0), ("max", 0.1)):
        rows = {
            "study": [],
            "trial_key": [],
            "architecture": [],
            "seq_len": [],
            "seed": [],
            "step": [],
            "epoch": [],
            "output_std": [],
            "output_norm": [],
            "status": [],
        }
        for n in (4, 16, 64, 256):
            for seed in range(3):
                rows["study"].append("fig1")
                rows["trial_key"].append(f"{arch:0>16}"[-16:])
                rows["architecture"].append(arch)
                rows["seq_len"].append(n)
                rows["seed"].append(seed)
                rows["step"].append(0)
                rows["epoch"].append(0)
                rows["output_std"].append(scale * n**0.5 * (1 + 0.01 * seed))
                rows["output_norm"].append(scale * n * (1 + 0.01 * seed))
                rows["status"].append("ok")
        pl.DataFrame(rows).write_parquet(study_dir / "trials" / f"{arch}.parquet")
    meta = synthetic_record("fig1", {"architecture": ("BERT", "sum", "max"), "seq_len": (4, 16, 64, 256)},
                            tasks=("pooling_scale",), metric="output_std",
                            plot={"panel": "architecture", "x": "seq_len", "y": None})  # the rows say what to draw
    report = build_report(study_dir, tmp_path / "out", meta=meta)
    assert [p.name for p in report.figures] == ["pooling_scale.png"]
    _assert_real_png(report.figures[0])
    assert "sum: 2.02 (seq_len=4) -> 16.2 (seq_len=256)" in report.summary


def test_corrupt_trial_file_is_skipped_with_a_warning_naming_it(study: Path) -> None:
    (study / "trials" / "deadbeefdeadbeef.parquet").write_bytes(b"not a parquet file at all")
    with pytest.warns(RuntimeWarning, match="deadbeefdeadbeef.parquet"):
        lf = scan_study(study)
    assert lf.collect().get_column("trial_key").n_unique() == 18


def test_empty_study_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "empty" / "trials").mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match="no trial results"):
        scan_study(tmp_path / "empty")


@pytest.mark.slow  # a Python subprocess
def test_analysis_never_imports_torch_ray_or_the_training_code() -> None:
    code = (
        "import sys, analysis, analysis.report.build, analysis.stats.rgb, analysis.render.plots, "
        "analysis.stats.paper_tables, analysis.data.rows, analysis.data.reference, analysis.data.synthetic; "
        "print(','.join(m for m in ('torch', 'ray', 'trainables', 'study', 'optuna') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def _best_g_per(df: pl.DataFrame, metric: str, keys: list[str], rest: list[str]) -> dict[tuple, float]:
    """Independent numpy recomputation: per (keys, rest) mean over seeds per step, max over steps; max over rest."""
    out: dict[tuple, float] = {}
    for cfg, d in df.group_by([*keys, *rest]):
        steps = sorted(set(d["step"].to_list()))
        values = np.array([[v for v in d.filter(pl.col("step") == s)[metric].to_list()] for s in steps])
        g = float(np.max(values.mean(axis=1)))
        key = tuple(cfg[: len(keys)])
        out[key] = max(out.get(key, -1.0), g)
    return out


def test_paper_table_in_the_papers_shape_per_vocabulary_size(tmp_path: Path) -> None:
    from tests.test_analysis_reference import write_release_file

    sizes = [2, 4, 8]
    release = write_release_file(tmp_path / "mode__var_vocab.parquet", "vocabulary_size", [2, 4, 8, 16])
    study_dir = tmp_path / "richter2020.fig16"
    write_synthetic_study(
        study_dir, {"architecture": ["NAP", "max"], "vocab_size": sizes, "learning_rate": [0.09, 0.0081, 0.000729]},
        seeds=(0, 1, 2), n_evals=4, cases=False, name="richter2020.fig16",
        meta={"plot": {"panel": "architecture", "x": "vocab_size", "y": "learning_rate"}, "table_by": ["vocab_size"],
              "metric": "train_accuracy", "reference": str(release), "tasks": ["mode"]},
    )
    report = build_report(study_dir, tmp_path / "out")
    text = report.index_html.read_text()
    assert "The paper&#x27;s table: best train_accuracy G per vocab_size" in text
    ours = _best_g_per(pl.read_parquet(study_dir / "trials"), "train_accuracy", ["architecture", "vocab_size"],
                       ["learning_rate"])
    lines = report.summary.splitlines()
    for arch in ("NAP", "max"):
        expected = " / ".join(f"{100 * ours[(arch, s)]:.1f}" for s in sizes)
        assert f"    architecture={arch}: {expected}" in lines, (arch, lines)
    # the published table in the same shape, over the release's whole grid (S = 2 ... 16)
    published = load_reference_file(release).collect()
    pub = _best_g_per(published, "train_accuracy", ["architecture", "vocab_size"], ["learning_rate"])
    table = text.split("The same statistic of the published results")[1].split("</table>")[0]
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", table)
    assert cells[:5] == ["NAP", *(f"{100 * pub[('NAP', s)]:.1f}" for s in [2, 4, 8, 16])]
    assert "vocabulary S = 16" in table  # human headers, one column per vocabulary size


def test_an_unreadable_trial_file_is_shown_as_such_and_every_number_says_so(study: Path, tmp_path: Path) -> None:
    victim = sorted((study / "trials").glob("*.parquet"))[0]
    lost = pl.read_parquet(victim).row(0, named=True)
    victim.write_bytes(victim.read_bytes()[:100])  # a disk that lost the end of the file
    report = build_report(study, tmp_path / "out")
    text = report.index_html.read_text()
    assert "<b>17 of 18 trials done</b> (readable), 1 unreadable, 0 failed, 0 pending" in text
    assert f"unreadable: <code>{victim}</code>" in text
    assert "Every number in this report is computed from 17 of 18 trials (1 unreadable)" in text
    assert "class='bar-bad' style='width:5.56%'" in text and "class='bar-ok' style='width:100.00%'" not in text
    lines = report.summary.splitlines()
    assert lines[0] == "synthetic.study: INCOMPLETE, computed from 17 of 18 trials (1 unreadable)"
    assert lines[1] == f"  unreadable trial file: {victim}"
    # the lost trial's panel is incomplete: "BERT cannot learn (<= 20%)" already fails (certain), and
    # "NAP learns (>= 40%)" already holds (certain) -- neither can be changed by a missing cell
    assert "  PASS: NAP learns" in lines and "  FAIL: BERT cannot learn" in lines
    assert lost["architecture"] in ("BERT", "NAP")


@pytest.mark.parametrize(("value", "text"), [
    (0.3**3, "0.027"), (0.3**4, "0.0081"), (0.3**5, "0.00243"), (0.3**7, "0.0002187"),  # float noise dropped
    (0.1 + 0.2, "0.3"), (np.float64(0.3**3), "0.027"), (-(0.3**3), "-0.027"),
    (1e-05, "1e-05"), (0.3**8, "6.561e-05"), (0.0001, "0.0001"),  # below 1e-4: an exponent
    (1024.0, "1024"), (32, "32"), (3.14159, "3.142"), (1234.5, "1234.5"), (2e6, "2e+06"),
    ("NAP", "NAP"), (True, "True"), (float("nan"), "nan"),
])
def test_axis_values_are_written_as_a_person_writes_them(value: object, text: str) -> None:
    assert show_value(value) == text
