"""The rows of fixed-seed tiny studies of every family are bit-identical to the recorded ones.

Recorded before the trainables were restructured (tests/golden/record.py); any change to a model, a loop, a
random stream, the row writer or a column shows up here. float32 on one CPU thread is deterministic, so on
the machine kind the file was recorded on the comparison is exact. On another SIMD level or torch version the
rounding of the same computation may differ: there the rows are compared within 1e-4 and a warning says so.
"""

from __future__ import annotations

import json
import math
import warnings

import polars as pl
import pytest

from tests.golden.record import STORED, collect, machine

pytestmark = pytest.mark.slow  # ~15 s: every family trains


def _close(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-4, abs=1e-6)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return a == b


def test_rows_of_every_family_are_unchanged(one_torch_thread: None) -> None:
    recorded = json.loads(STORED.with_suffix(".json").read_text())
    stored = pl.read_parquet(STORED)
    rows = collect()
    assert rows.height == stored.height == recorded["rows"]
    assert rows["run"].to_list() == stored["run"].to_list()
    here = machine()
    if all(here[k] == recorded[k] for k in ("torch", "cpu_capability", "threads")):
        differing = [(run, new) for run, new, old in zip(rows["run"], rows["row"], stored["row"], strict=True)
                     if new != old]
        assert not differing, f"{len(differing)} rows changed; first: {differing[0]}"
        return
    warnings.warn(f"golden rows recorded on {recorded}, compared on {here}: within 1e-4, not bit for bit",
                  stacklevel=1)
    pairs = zip(rows["row"], stored["row"], strict=True)
    differing = [new for new, old in pairs if not _close(json.loads(new), json.loads(old))]
    assert not differing, f"{len(differing)} rows changed beyond rounding; first: {differing[0]}"
