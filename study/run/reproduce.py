"""`study verify`: train finished trials again in a scratch directory and compare their rows with the record.

Per trial the verdict is one of (docs/reproducibility.md says why these are the right expectations):

* ``identical``: every value bit for bit (NaN where NaN). Expected on the machine that ran it (same CPU model,
  SIMD level, torch, numpy and threads: the rows' ``machine`` column) with the same code.
* ``within rounding``: every float within the precision's rounding tolerance (:data:`ROUNDING`), every other
  value equal. Expected for ``fp64`` trials on another machine.
* ``within seed noise``: (another machine only) floats differ beyond rounding, as float32 training on another
  CPU does, but the trial's statistic (mean over seeds of each seed's best ``metric`` over training) moved by
  less than a two-sample t-test over the seeds of both runs allows at 95% (the seeds' own spread).
* ``different``: anything else: a value that is not a float differs, a row is missing, or the move is beyond
  the noise (or the noise cannot be measured: one seed).

A trial passes when it is identical on its own machine, or within rounding / seed noise on another one.
"""

from __future__ import annotations

import math
import random
import statistics
import tempfile
from dataclasses import dataclass, field
from typing import Any

from analysis.data.meta import recorded_run
from analysis.stats.paired import t_quantile_95
from search_spaces.study import Study
from study.results.storage import StudyStorage
from study.trial.identity import machine_text
from study.trial.resources import Resources
from study.trial.spec import Trial

#: Columns that differ between two runs of the same code on purpose (timings, where and from which checkout).
VOLATILE = ("wall_time_s", "code_version", "hostname", "node_id", "machine", "finished_at")
#: Largest relative difference of a float that counts as rounding, per precision (fp64: measured 2e-10 across
#: SIMD paths after 20 steps, tests/test_rows_unchanged.py; fp32: 1e-4, the last digits of a float32 loss).
ROUNDING = {"fp64": 1e-8, "fp32": 1e-4, "bf16": 1e-2}
IDENTICAL, ROUNDED, NOISE, DIFFERENT, NOT_RUN = ("identical", "within rounding", "within seed noise",
                                                 "different", "not run")


@dataclass
class TrialCheck:
    """The verdict on one re-run trial."""

    key: str
    point: dict[str, Any]
    verdict: str
    same_machine: bool
    recorded_machine: str
    largest: dict[str, float] = field(default_factory=dict)  # column -> largest absolute difference
    why: str = ""
    here: str = ""  # this machine, with the recorded run's threads

    @property
    def passed(self) -> bool:
        """Identical on its own machine; within rounding or seed noise on another one."""
        if self.same_machine:
            return self.verdict == IDENTICAL
        return self.verdict in (IDENTICAL, ROUNDED, NOISE)


def pick_trials(keys: set[str], n: int, seed: int) -> list[str]:
    """``n`` of the finished trial keys, chosen at random with ``seed`` (the same keys for the same arguments)."""
    if n < 1:
        raise ValueError(f"invalid --trials {n}; allowed: an integer >= 1")
    ordered = sorted(keys)
    return sorted(random.Random(seed).sample(ordered, min(n, len(ordered))))


def _row_key(row: dict[str, Any]) -> tuple[Any, ...]:
    return row.get("seed"), row.get("step"), row.get("learning_rate")


def _compare_values(old: object, new: object) -> tuple[float, bool]:
    """(absolute difference of two floats or 0, whether two non-float values differ)."""
    if isinstance(old, float) and isinstance(new, float):
        if math.isnan(old) or math.isnan(new):
            return (0.0, False) if math.isnan(old) and math.isnan(new) else (math.inf, False)
        return abs(old - new), False
    return 0.0, old != new


@dataclass(frozen=True)
class Comparison:
    """Recorded rows against re-run rows: the verdict, the largest absolute difference per float column, why,
    and whether only floats differ (then another machine's float32 drift can be told from a real change)."""

    verdict: str
    largest: dict[str, float]
    why: str = ""
    floats_only: bool = True


def compare_rows(old: list[dict[str, Any]], new: list[dict[str, Any]], precision: str) -> Comparison:
    """The :class:`Comparison` of two runs' rows of one trial, matched by (seed, step, learning rate)."""
    by_key = {_row_key(r): r for r in new}
    if len(by_key) != len(old) or any(_row_key(r) not in by_key for r in old):
        return Comparison(DIFFERENT, {}, f"{len(old)} recorded rows, {len(new)} now, or other (seed, step) pairs",
                          floats_only=False)
    largest: dict[str, float] = {}
    worst_relative, other = 0.0, ""
    for row in old:
        again = by_key[_row_key(row)]
        for column in sorted((row.keys() | again.keys()) - set(VOLATILE)):
            gap, differs = _compare_values(row.get(column), again.get(column))
            if differs and not other:
                other = f"{column} {row.get(column)!r} -> {again.get(column)!r}"
            if gap:
                largest[column] = max(largest.get(column, 0.0), gap)
                scale = max(abs(row[column]), abs(again[column]))
                worst_relative = max(worst_relative, gap / scale if scale and math.isfinite(gap) else math.inf)
    if other:
        return Comparison(DIFFERENT, largest, other, floats_only=False)
    if not largest:
        return Comparison(IDENTICAL, {})
    why = f"largest relative difference {worst_relative:.1e}"
    rounded = worst_relative <= ROUNDING.get(precision, ROUNDING["fp32"])
    return Comparison(ROUNDED if rounded else DIFFERENT, largest, why)


def _seed_bests(rows: list[dict[str, Any]], metric: str, mode: str) -> list[float]:
    best: dict[Any, float] = {}
    pick = max if mode == "max" else min
    for row in rows:
        value = row.get(metric)
        if isinstance(value, int | float) and not math.isnan(value):
            seed = (row.get("seed"), row.get("learning_rate"))
            best[seed] = pick(best.get(seed, value), float(value))
    return list(best.values())


def within_seed_noise(old: list[dict[str, Any]], new: list[dict[str, Any]], metric: str, mode: str
                      ) -> tuple[bool, str]:
    """Whether the mean over seeds of each seed's best ``metric`` moved within a two-sided 95% two-sample t-test
    (pooled variance, 2n - 2 degrees of freedom): about 1 in 20 honest trials of another machine still fails."""
    a, b = _seed_bests(old, metric, mode), _seed_bests(new, metric, mode)
    if len(a) < 2 or len(a) != len(b):
        return False, f"seed noise unknown ({len(a)} seed(s) with a {metric})"
    move = abs(statistics.fmean(b) - statistics.fmean(a))
    bound = t_quantile_95(2 * len(a) - 2) * math.sqrt((statistics.variance(a) + statistics.variance(b)) / len(a))
    text = f"{metric} seed-mean of bests moved {move:.4f}, the seeds' 95% bound is {bound:.4f}"
    return move <= bound, text


@dataclass(frozen=True)
class RunSettings:
    """How the recorded trials ran (study.json's ``run``; older studies: the defaults of `study run`)."""

    threads: int = 1
    packing: str = "auto"  # the run's request, as study.json's run.packing records it (auto, on, off)
    plugins: tuple[dict[str, Any], ...] = ()  # the plugins of yours the run recorded (its rows name them)

    @classmethod
    def of(cls, storage: StudyStorage) -> RunSettings:
        run = recorded_run(storage.location)
        if run is None:
            return cls()
        return cls(threads=run.threads_per_trial, packing=run.packing, plugins=run.plugins)


def verify_trial(study: Study, storage: StudyStorage, key: str, trial: Trial, settings: RunSettings,
                 scratch: StudyStorage) -> TrialCheck:
    """Train trial ``key`` again into ``scratch`` and compare its rows with the recorded ones."""
    point = dict(trial.point)
    import torch

    from study.trial.trainable import run_trial, torch_setting

    table = storage.read_trial(key)
    old = table.to_pylist() if table is not None else []
    recorded = str(old[0].get("machine") or "not recorded") if old else "not recorded"
    if not old:
        return TrialCheck(key, point, NOT_RUN, False, recorded, why="its rows cannot be read")
    device = str(old[0].get("device", "cpu"))
    if not device.startswith("cpu"):
        why = f"it trained on {device}; this check runs on the CPU"
        return TrialCheck(key, point, NOT_RUN, False, recorded, why=why)
    precision = str(old[0].get("precision", "fp32"))
    with torch_setting(torch.get_num_threads, torch.set_num_threads, settings.threads):
        here = machine_text()
        run_trial(study, scratch, Trial(trial.point, trial.seeds),
                  resources=Resources(packing=settings.packing, precision=precision), plugins=settings.plugins)
    again = scratch.read_trial(key)
    new = again.to_pylist() if again is not None else []
    result, same = compare_rows(old, new, precision), recorded == here
    verdict, why = result.verdict, result.why
    if verdict == DIFFERENT and result.floats_only and not same:
        noise, text = within_seed_noise(old, new, study.metric, study.mode)
        verdict, why = (NOISE if noise else DIFFERENT), f"{why}; {text}"
    return TrialCheck(key, point, verdict, same, recorded, result.largest, why, here)


def verify_study(study: Study, storage: StudyStorage, *, trials: int, seed: int = 0) -> list[TrialCheck]:
    """Re-run ``trials`` finished trials of ``study`` (chosen with ``seed``) in a scratch directory.

    Raises:
        ValueError: ``trials`` below 1, or no finished trial to verify.
    """
    from study.run.adaptive import budget_trials
    from study.run.points import trial_points
    from study.run.strategies import read_record

    finished = storage.finished_keys() - storage.corrupt_keys()
    grid: dict[str, Trial] | None = None
    if study.sampler == "grid":  # every seed of a point, and the trials an adaptive budget gave its cells
        grid = {k: Trial.every_seed(study, p) for k, p in trial_points(study).items()}
        for cell in budget_trials(study, read_record(storage)).values():
            grid.update(cell)
        finished &= set(grid)
    if not finished:
        raise ValueError(f"no finished trials of {study.name} (scale {study.scale}) in {storage.uri} to verify")
    keys = pick_trials(finished, trials, seed)  # chosen first: only their rows are read
    points = {k: grid[k] for k in keys} if grid is not None else _points_from_rows(study, storage, keys)
    settings = RunSettings.of(storage)
    with tempfile.TemporaryDirectory(prefix="study-verify-") as tmp:
        scratch = StudyStorage(storage=tmp, directory=study.directory)
        return [verify_trial(study, storage, key, points[key], settings, scratch) for key in keys]


def _points_from_rows(study: Study, storage: StudyStorage, keys: list[str]) -> dict[str, Trial]:
    """A sampled study's trials (every seed), their points read back from each one's first row (empty when its rows
    cannot be read)."""
    points: dict[str, Trial] = {}
    for key in keys:
        table = storage.read_trial(key)
        first = table.slice(0, 1).to_pylist()[0] if table is not None and table.num_rows else None
        points[key] = Trial.every_seed(study, {n: first[n] for n in study.axes} if first else {})
    return points
