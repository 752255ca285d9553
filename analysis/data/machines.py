"""Which machines produced a study's numbers (docs/reproducibility.md).

Every row records the machine that trained it (``machine``: CPU model, the SIMD level torch used, torch and
numpy versions, threads); study.json's ``run`` records the driver of the latest run and its settings. Numbers
from one machine repeat bit for bit there; float32 numbers from two machines agree in distribution only.
"""

from __future__ import annotations

import polars as pl

from search_spaces.record import RunRecord

NOT_RECORDED = "not recorded (results written before rows recorded their machine)"
PUBLISHED = "the authors' runs (TensorFlow; machine not recorded)"


def machine_counts(lf: pl.LazyFrame) -> dict[str, int]:
    """Trials per machine text, most first (one entry, NOT_RECORDED, for rows without the column)."""
    if "machine" not in lf.collect_schema().names():
        n = lf.select(pl.col("trial_key").n_unique()).collect().item() if "trial_key" in lf.collect_schema() else 0
        return {NOT_RECORDED: int(n)}
    counts = (lf.group_by(pl.col("machine").fill_null(NOT_RECORDED)).agg(pl.col("trial_key").n_unique().alias("n"))
              .sort(["n", "machine"], descending=[True, False]).collect())
    return dict(zip(counts["machine"].to_list(), counts["n"].to_list(), strict=True))


def run_settings_text(run: RunRecord | None) -> str:
    """study.json's ``run`` in one line (its driver machine and the settings that decide the numbers)."""
    if run is None:
        return "latest run: not recorded"
    settings = (f"threads per trial {run.threads_per_trial}, precision {run.precision}, "
                f"GPUs per trial {run.gpus_per_trial:g}, packing {run.packing}")
    return f"latest run: driver on {run.machine_text or '?'}; {settings}"


def machines_line(label_a: str, a: list[str], label_b: str, b: list[str]) -> str:
    """What `study compare` says of where the two sides ran."""
    if a == b and len(a) == 1 and a[0] not in (NOT_RECORDED, PUBLISHED):
        return f"machines: both sides ran on {a[0]} (the same code there repeats bit for bit)"
    return (f"machines: DIFFERENT or unknown: A ({label_a}) ran on {'; '.join(a) or '?'}, B ({label_b}) on "
            f"{'; '.join(b) or '?'}: float32 results of two machines agree in distribution, not bit for bit "
            "(docs/reproducibility.md); tell a real difference from that with the paired differences above")
