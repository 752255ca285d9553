"""Benchmark: a 25,000-trial study (5 seeds x 32 evaluation points each) as trial files and as one table.

Generates a synthetic study in the results schema of docs/results.md (one Parquet file per trial, as trials
write them) under a temporary directory, then measures on that same study, in order:

* ``scan_files_s``: scan + statistics over the per-trial files (median of ``--runs``);
* ``compact_s``: folding every file into the study's Delta table (``study.results.table.fold``: what ``study compact``
  and the driver do);
* ``scan_table_s``: scan + statistics over the table (median of ``--runs``);
* ``report_s``: the whole report (``analysis.report.build.write_report``) from the table, once;
* ``files_mib`` / ``table_mib``: bytes on disk both ways (``table_mib``: the files of the table's current version,
  not those a compaction replaced and keeps until a vacuum);
* ``fold_rss_mib`` / ``report_rss_mib``: the peak memory (``VmHWM``) of the fold and of the report, each run in a
  fresh process as the study's driver runs them (the scans of the files run in this process).

The last line printed is one JSON object with those numbers.

    .venv/bin/python bench/report_25k.py                  # 25,000 trials in a temporary directory
    .venv/bin/python bench/report_25k.py --trials 100000  # any multiple of 1,000
    .venv/bin/python bench/report_25k.py --keep DIR       # keep the generated study (reused if not compacted)
    .venv/bin/python bench/report_25k.py --keep DIR --table-only  # again: only the table's scan and the report
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl

from analysis.data.lake import TABLE, open_table
from analysis.data.location import Location
from analysis.data.rows import scan_study
from analysis.data.synthetic import write_synthetic_study
from analysis.report.build import write_report
from analysis.stats.rgb import best_config, rgb_from_step_stats, seed_best, step_stats
from study.results.table import fold

ARCHITECTURES = ["BERT", "MTE", "NAP", "NON", "sum"]
D_MODELS = [8 * (i + 1) for i in range(20)]
DROPOUTS = [i / 20 for i in range(10)]
PER_RATE = len(ARCHITECTURES) * len(D_MODELS) * len(DROPOUTS)  # 1,000 trials per learning rate
SEEDS = (0, 1, 2, 3, 4)
N_EVALS = 32
BY = ["architecture", "d_model", "learning_rate", "dropout"]
METRICS = ["train_accuracy", "val_accuracy"]


def grid(trials: int) -> dict[str, list]:
    """5 architectures x 20 d_model x (trials / 1,000) learning rates x 10 dropout values."""
    rates = [float(v) for v in np.geomspace(0.3, 3e-6, trials // PER_RATE)]
    return {"architecture": ARCHITECTURES, "d_model": D_MODELS, "learning_rate": rates, "dropout": DROPOUTS}


def generate(study_dir: Path, trials: int) -> float:
    """Write the synthetic study; returns seconds taken."""
    start = time.perf_counter()
    write_synthetic_study(study_dir, grid(trials), seeds=SEEDS, n_evals=N_EVALS, name="bench.report_25k")
    return time.perf_counter() - start


def mib(path: Path) -> float:
    """Bytes of every file under ``path``, in MiB."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def table_mib(study_dir: Path) -> float:
    """Bytes of the table's current version (its data files and its log), in MiB."""
    table = open_table(Location.of(study_dir), TABLE)
    data = sum(Path(uri.removeprefix("file://")).stat().st_size for uri in table.file_uris())
    log = sum(p.stat().st_size for p in (study_dir / TABLE / "_delta_log").rglob("*") if p.is_file())
    return (data + log) / 2**20


def peak_rss_mib() -> float:
    """This process's peak resident memory in MiB: ``VmHWM``, the high-water mark of its own address space.
    (``ru_maxrss`` is no use in a child: Linux carries the parent's peak over fork and exec into it.)"""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


def _with_peak(fn: Callable, *args: object) -> tuple[object, float]:
    """``fn(*args)`` and this process's peak RSS in MiB (run in a fresh child by :func:`in_child`)."""
    result = fn(*args)
    return result, peak_rss_mib()


def in_child(fn: Callable, *args: object) -> tuple[object, float]:
    """Run ``fn(*args)`` in a fresh spawned process: its result and that process's peak RSS (MiB)."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_with_peak, fn, *args).result()


def _fold(study_dir: Path):
    return fold(Location.of(study_dir))


def _report(study_dir: Path, out_dir: Path) -> float:
    start = time.perf_counter()
    write_report(study_dir, out_dir)
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


def _median(fn, runs: int) -> tuple[float, list[float]]:
    times = [fn() for _ in range(runs)]
    return statistics.median(times), times


def _runs(times: list[float]) -> str:
    return ", ".join(f"{t:.2f}" for t in times)


def measure(study_dir: Path, root: Path, trials: int, runs: int) -> dict[str, float]:
    """Generate (unless a kept study of ``trials`` files is there), then every measurement of the module doc."""
    trials_dir = study_dir / "trials"
    n_files = len(list(trials_dir.glob("*.parquet"))) if trials_dir.exists() else 0
    if n_files != trials or (study_dir / "table").exists():
        shutil.rmtree(study_dir, ignore_errors=True)
        print(f"generated {trials} trial files in {generate(study_dir, trials):.0f} s", flush=True)
    files_mib = mib(trials_dir)
    scan_files_s, files_runs = _median(lambda: scan_and_stats(study_dir), runs)
    print(f"scan + stats over {trials} files: median {scan_files_s:.2f} s ({_runs(files_runs)})", flush=True)
    folded, fold_rss = in_child(_fold, study_dir)
    print(f"{folded.line()}, peak memory {fold_rss:.0f} MiB", flush=True)
    assert folded.trials == trials and not folded.unreadable, folded.line()
    live_mib, all_mib = table_mib(study_dir), mib(study_dir / "table")
    print(f"table: {live_mib:.0f} MiB in its current version ({all_mib:.0f} MiB with replaced files)", flush=True)
    scan_table_s, table_runs = _median(lambda: scan_and_stats(study_dir), runs)
    print(f"scan + stats over the table: median {scan_table_s:.2f} s ({_runs(table_runs)})", flush=True)
    report_s, report_rss = in_child(_report, study_dir, root / "report")
    print(f"write_report from the table: {report_s:.1f} s, peak memory {report_rss:.0f} MiB", flush=True)
    return {"trials": trials, "scan_files_s": round(scan_files_s, 2), "scan_table_s": round(scan_table_s, 2),
            "compact_s": round(folded.seconds, 1), "report_s": round(report_s, 1), "files_mib": round(files_mib),
            "table_mib": round(live_mib), "commits": folded.commits, "fold_rss_mib": round(fold_rss),
            "report_rss_mib": round(report_rss)}


def measure_table(study_dir: Path, root: Path, runs: int) -> dict[str, float]:
    """``--table-only``: the table's scan + statistics and the report of a kept, already folded study."""
    if not (study_dir / "table").exists() or any((study_dir / "trials").glob("*.parquet")):
        sys.exit(f"invalid --table-only: {study_dir} holds no folded study (run once with --keep first)")
    scan_table_s, table_runs = _median(lambda: scan_and_stats(study_dir), runs)
    print(f"scan + stats over the table: median {scan_table_s:.2f} s ({_runs(table_runs)})", flush=True)
    report_s, report_rss = in_child(_report, study_dir, root / "report")
    print(f"write_report from the table: {report_s:.1f} s, peak memory {report_rss:.0f} MiB", flush=True)
    return {"scan_table_s": round(scan_table_s, 2), "report_s": round(report_s, 1),
            "table_mib": round(table_mib(study_dir)), "report_rss_mib": round(report_rss)}


def main() -> None:
    """Run the benchmark; the last line is the JSON summary."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=25_000, help="trials to generate (a multiple of 1,000)")
    parser.add_argument("--keep", type=Path, help="generate into (or reuse) this directory and keep it")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each scan (median)")
    parser.add_argument("--table-only", action="store_true",
                        help="with --keep: only the table's scan and the report of the study kept there")
    args = parser.parse_args()
    if args.trials < PER_RATE or args.trials % PER_RATE:
        sys.exit(f"invalid --trials {args.trials}; allowed: a multiple of {PER_RATE} (5 architectures x 20 d_model "
                 "x 10 dropout values per learning rate)")
    root = args.keep or Path(tempfile.mkdtemp(prefix="report_25k_"))
    try:
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
              f"polars {pl.__version__}, {args.trials} trials x {len(SEEDS)} seeds x {N_EVALS} evaluations")
        if args.table_only and args.keep is None:
            sys.exit("invalid --table-only without --keep; allowed: --keep DIR of an earlier run")
        study_dir = root / "bench.report_25k"
        result = (measure_table(study_dir, root, args.runs) if args.table_only
                  else measure(study_dir, root, args.trials, args.runs))
        print(json.dumps(result))
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
