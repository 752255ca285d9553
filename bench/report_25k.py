"""Benchmark: the study report of a 25,000-trial study (5 seeds x 32 evaluation points each).

Generates a synthetic study in the results schema of docs/results.md (one Parquet file per trial,
25,000 files) under a temporary directory, then times ``analysis.report.write_report`` (median of
``--runs``) and the scan + statistics alone (one collect of the aggregations the report uses).

    .venv/bin/python bench/report_25k.py            # generate, time, print a Markdown summary
    .venv/bin/python bench/report_25k.py --keep DIR # keep (or reuse) the generated study in DIR
    .venv/bin/python bench/report_25k.py --keep DIR --scale 4 --runs 0  # generate 100,000 trials only
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from analysis.dataset import scan_study
from analysis.report import write_report
from analysis.stats import best_config, rgb_from_step_stats, seed_best, step_stats
from analysis.synthetic import write_synthetic_study

GRID = {
    "architecture": ["BERT", "MTE", "NAP", "NON", "sum"],
    "d_model": [8 * (i + 1) for i in range(20)],
    "learning_rate": [float(v) for v in np.geomspace(0.3, 3e-6, 25)],
    "dropout": [i / 20 for i in range(10)],
}  # 5 x 20 x 25 x 10 = 25,000 trials


def grid(scale: int = 1) -> dict[str, list]:
    """:data:`GRID` with ``scale`` times as many dropout values (25,000 x ``scale`` trials; the report draws
    the grids of at most 12 of them, ``analysis.training.MAX_FACETS``)."""
    return {**GRID, "dropout": [i / (20 * scale) for i in range(10 * scale)]}
SEEDS = (0, 1, 2, 3, 4)
N_EVALS = 32
BY = ["architecture", "d_model", "learning_rate", "dropout"]
METRICS = ["train_accuracy", "val_accuracy"]


def generate(study_dir: Path, scale: int = 1) -> float:
    """Write the synthetic study (:func:`grid`); returns seconds taken."""
    start = time.perf_counter()
    write_synthetic_study(study_dir, grid(scale), seeds=SEEDS, n_evals=N_EVALS, name="bench.report_25k")
    return time.perf_counter() - start


def scan_and_stats(study_dir: Path) -> float:
    """Seconds for the scan and the aggregations of the report (one collect), plus best configs."""
    start = time.perf_counter()
    lf = scan_study(study_dir)
    cases = [f"{s}_{c}_accuracy" for s in ("train", "val") for c in ("argmin", "first", "argmax")]
    steps, per_seed = pl.collect_all([step_stats(lf, [*METRICS, *cases], BY), seed_best(lf, METRICS, BY)])
    rgb = rgb_from_step_stats(steps.lazy(), "val_accuracy", BY)
    best_config(rgb, "architecture").collect()
    return time.perf_counter() - start


def main() -> None:
    """Run the benchmark and print a Markdown summary."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keep", type=Path, help="generate into (or reuse) this directory and keep it")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each measurement (median)")
    parser.add_argument("--scale", type=int, default=1, help="x the dropout values: 25,000 x SCALE trials")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="report_25k_"))
    study_dir = root / "bench.report_25k"
    try:
        n_files = len(list((study_dir / "trials").glob("*.parquet"))) if study_dir.exists() else 0
        gen_s = generate(study_dir, args.scale) if n_files != 25_000 * args.scale else float("nan")
        n_files = len(list((study_dir / "trials").glob("*.parquet")))
        size_mb = sum(p.stat().st_size for p in (study_dir / "trials").iterdir()) / 2**20
        if args.runs == 0:  # generate only
            print(f"trials: {n_files} files, {size_mb:.0f} MiB; generated in {gen_s:.0f} s")
            return
        stats_s = [scan_and_stats(study_dir) for _ in range(args.runs)]
        report_s = []
        for i in range(args.runs):
            start = time.perf_counter()
            write_report(study_dir, root / f"report_{i}")
            report_s.append(time.perf_counter() - start)
        n_png = len(list((root / "report_0").glob("*.png")))
        html_mb = (root / "report_0" / "index.html").stat().st_size / 2**20
        print(
            f"machine: {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, polars {pl.__version__}"
        )
        print(
            f"trials: {n_files} files, {n_files * len(SEEDS) * N_EVALS:,} rows, {size_mb:.0f} MiB; "
            f"generated in {gen_s:.0f} s"
        )
        print(
            f"scan + stats: median {statistics.median(stats_s):.1f} s  (runs: {', '.join(f'{t:.1f}' for t in stats_s)})"
        )
        print(
            f"write_report: median {statistics.median(report_s):.1f} s  "
            f"(runs: {', '.join(f'{t:.1f}' for t in report_s)})"
        )
        print(f"report: {n_png} PNGs, index.html {html_mb:.1f} MiB")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
