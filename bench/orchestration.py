"""Orchestration cost at scale: N trivial trials through the real runner (Ray Tune grid, Parquet sink).

Each trial is a Fig. 1-style measurement on 64 random vectors (about a millisecond of work), so the
wall time is the orchestrator's own cost: Tune's scheduling, actor reuse, reporting, the progress
callback, one atomic Parquet write per trial. Records wall time, trials/s per block of 1,000 (is it
flat?), peak driver memory and the size of Tune's experiment state.

    .venv/bin/python bench/orchestration.py --trials 10000 --chunk-size 1000
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from study.run.ray_env import ray_environment

ray_environment(None)  # before Ray is imported

import polars as pl  # noqa: E402
import psutil  # noqa: E402  (a Ray dependency)

from analysis.data.rows import scan_study  # noqa: E402
from search_spaces import Plot, Study  # noqa: E402
from study.results.storage import StudyStorage  # noqa: E402
from study.run.runner import run_study  # noqa: E402
from study.trial.resources import Resources  # noqa: E402


def trivial_study(n_trials: int) -> Study:
    """n_trials measurement trials: 5 poolings x n_trials/5 replicas of one tiny measurement."""
    return Study(
        name=f"bench.orchestration{n_trials}", goal="orchestration overhead", tasks=("pooling_scale",),
        scientific={"pooling": ("softmax", "mean", "sum", "max", "normalized"),
                    "replica": tuple(range(n_trials // 5))},
        fixed={"seq_len": 8, "d_head": 8, "n_vectors": 64}, seeds=(0,), metric="output_std", labels=("replica",),
        plot=Plot(panel="pooling", x="replica", y="replica"),
    )


class PeakMemory:
    """Samples this process's resident memory (the Tune driver) in a background thread."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        process = psutil.Process()
        while not self._stop.wait(0.5):
            self.peak = max(self.peak, process.memory_info().rss)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def directory_size(path: Path) -> tuple[int, int]:
    """(bytes, files) under path."""
    files = [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--chunk-size", type=int, default=1000, help="trials per Tuner run")
    parser.add_argument("--keep", type=Path, default=None, help="results directory to keep")
    args = parser.parse_args()

    root = args.keep or Path(tempfile.mkdtemp(prefix="orchestration-"))
    study = trivial_study(args.trials)
    storage = StudyStorage(storage=str(root), directory=study.directory)
    lines: list[tuple[float, str]] = []

    def echo(line: str) -> None:
        lines.append((time.time(), line))
        print(line, flush=True)

    started = time.time()
    with PeakMemory() as memory:
        counts = run_study(study, storage, Resources(), echo=echo, chunk_size=args.chunk_size)
    wall = time.time() - started
    # when each trial wrote its rows (the run folded its files into the study's table)
    finished = scan_study(storage.location).group_by("trial_key").agg(pl.col("finished_at").first()).collect()
    finish_times = sorted(finished["finished_at"].to_list())
    first_start = next(t for t, line in lines if line.startswith("running "))
    blocks = []
    for start in range(0, len(finish_times), 1000):
        block = finish_times[start:start + 1000]
        begin = first_start if start == 0 else finish_times[start - 1]
        blocks.append(round(len(block) / max(block[-1] - begin, 1e-9), 1))
    tune_bytes, tune_files = directory_size(root / study.directory / "_tune")
    result = {
        "trials": args.trials, "chunk_size": args.chunk_size, "finished": counts["finished"],
        "wall_s": round(wall, 1), "ms_per_trial": round(1000 * (finish_times[-1] - first_start) / len(finish_times), 1),
        "trials_per_s_per_1000_block": blocks, "driver_peak_rss_mb": round(memory.peak / 2**20),
        "tune_state_mb": round(tune_bytes / 2**20, 1), "tune_state_files": tune_files,
        "cpus": psutil.cpu_count(),
    }
    print(json.dumps(result), flush=True)
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)
    sys.exit(0 if counts["finished"] == args.trials else 1)


if __name__ == "__main__":
    main()
