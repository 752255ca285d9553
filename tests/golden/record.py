"""Run the golden studies and collect their rows: ``python -m tests.golden.record`` rewrites the stored file.

Rewrite it only for a change that is MEANT to change results, and say so in the commit.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import polars as pl

#: Columns that differ between runs of the same code (timings, the machine, the checkout).
VOLATILE = ("wall_time_s", "code_version", "hostname", "node_id", "machine", "finished_at")
STORED = Path(__file__).with_name("rows.parquet")
#: float64: the same computation on another CPU or SIMD path agrees to ~1e-12 (float32 drifts apart).
PRECISION = "fp64"


def collect() -> pl.DataFrame:
    """Every golden run's rows and artifact rows (volatile columns dropped), one frame, in a stable order."""
    import torch

    from study.results.storage import StudyStorage
    from study.trial.resources import Resources
    from study.trial.trainable import run_trial
    from tests.golden.studies import RUNS
    from trainables.families import packing_request

    torch.set_num_threads(1)
    frames = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (study, packing) in enumerate(RUNS):
            storage = StudyStorage(storage=tmp, directory=f"run{i}")
            names = list(study.axes)
            for config in study.grid():
                resources = Resources(packing=packing_request(packing), precision=PRECISION)
                run_trial(study, storage, {n: config[n] for n in names}, resources=resources)
            root = Path(storage.root)
            for path in sorted(root.rglob("*.parquet")):
                kind = path.parent.name if path.parent.parent.name == "artifacts" else "rows"
                frame = pl.read_parquet(path).drop(VOLATILE, strict=False)
                # One JSON text per row: families differ in columns, and the text keeps every bit of a float.
                frames.append(pl.DataFrame({
                    "run": [f"{study.name}/{packing}"] * frame.height, "table": [kind] * frame.height,
                    "row": [json.dumps(r, sort_keys=True, default=repr) for r in frame.to_dicts()],
                }))
    return pl.concat(frames).sort("run", "table", "row")


def main() -> None:
    """Rewrite the stored golden rows (with the machine they were recorded on)."""
    from study.trial.identity import machine

    rows = collect()  # sets torch's threads to 1: the machine is read after
    rows.write_parquet(STORED)
    STORED.with_suffix(".json").write_text(json.dumps({**machine(), "rows": rows.height}, indent=1) + "\n")
    print(f"{rows.height} rows -> {STORED}")


if __name__ == "__main__":
    main()
