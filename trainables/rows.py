"""The row writer: how every model family turns (seed, step, metrics, status) into Parquet rows.

``docs/results.md`` is the contract this module implements. A family's training loop owns one
:class:`SeedRows` per seed (per packed member) and calls :meth:`SeedRows.emit` at every evaluation; the
bookkeeping columns (seed, step, epoch, status, wall time, parameter count, device) and the handling of a
divergence are written here once:

* a seed whose training loss becomes NaN/inf is *diverged*: :meth:`SeedRows.diverge` records it, every
  evaluation point it does not reach gets the family's "no model" metrics (accuracy 0, NaN losses), and
  :meth:`SeedRows.finish` marks every row of that seed ``diverged``, the rows before the divergence included;
* rows reach the caller's ``on_eval`` as they are produced (so a row produced before the divergence still
  says ``ok`` there); the finished rows are the record;
* ``on_eval`` may answer True: nothing the study reads of this model can change any more (its cell's numbers are
  final, study.trial.stopping). A loop that honours it stops the model there, and :meth:`SeedRows.finish` writes
  the step it stopped at into every row of it (``stopped_at``; a loop that ignores it just trains on).

The Tune adapter (``study/trial/trainable.py``) adds the hyperparameter and label columns and the trial's
identity (study, trial key, code version, node, precision).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Row = dict[str, Any]
#: Called with every row as it is produced; True asks the loop to stop the model there (None or False: train on).
OnEval = Callable[[Row], bool | None]


@dataclass
class TrialResult:
    """What training one trial (a configuration and the seeds it was given) produced.

    Attributes:
        rows: one dict per (seed, evaluation step) (the hyperparameter columns are added by the caller).
        artifacts: named extra tables (lists of row dicts), each stored as
            ``<study>/artifacts/<name>/<trial_key>.parquet``.
    """

    rows: list[Row]
    artifacts: dict[str, list[Row]] = field(default_factory=dict)


def stream_seed(seed: int, stream: int, salt: int) -> int:
    """Seed of data stream ``stream`` for model seed ``seed``: distinct from the init seed and between streams.

    ``salt`` is the family's own constant (part of its results' identity: changing it changes every run).
    """
    return (seed * 1_000_003 + stream * 7_919 + salt) % (2**63)


class SeedRows:
    """The rows of one seed (one packed member), in the order they are produced.

    Args:
        seed: the model seed.
        n_params: trainable parameters of the model.
        device: where it trains (recorded as given, e.g. ``cpu``, ``cuda:0``).
        on_eval: called with every row as it is produced.
        start: ``time.perf_counter()`` at which this seed's training started (wall_time_s counts from it).
        extra: columns appended to every row after the bookkeeping ones (e.g. a packed member's learning rate).
    """

    def __init__(self, seed: int, *, n_params: int, device: object, on_eval: OnEval | None = None,
                 start: float | None = None, extra: Mapping[str, Any] | None = None) -> None:
        self.seed = seed
        self.n_params = n_params
        self.device = str(device)
        self.on_eval = on_eval
        self.start = time.perf_counter() if start is None else start
        self.extra = dict(extra or {})
        self.rows: list[Row] = []
        self.diverged = False
        self.stopped_at: int | None = None

    def emit(self, step: int, epoch: int, metrics: Mapping[str, Any]) -> bool:
        """Record the evaluation after ``step`` optimiser steps (``epoch`` in the family's unit); whether the caller's
        ``on_eval`` asks to stop the model here."""
        row: Row = {"seed": self.seed, "step": step, "epoch": epoch, **metrics,
                    "status": "diverged" if self.diverged else "ok",
                    "wall_time_s": time.perf_counter() - self.start, "n_params": self.n_params,
                    "device": self.device, **self.extra}
        self.rows.append(row)
        return bool(self.on_eval(row)) if self.on_eval is not None else False

    def diverge(self) -> None:
        """The training loss is no longer finite: from now on this seed's rows are ``diverged``."""
        self.diverged = True

    def stop(self, done: int, eval_every: int, last: int, empty: Mapping[str, Any]) -> None:
        """The seed diverged after ``done`` completed steps: rows with the "no model" metrics ``empty`` at the
        evaluation points it skips (multiples of ``eval_every`` up to ``last``; epoch = step / eval_every)."""
        self.diverge()
        for step in range((done // eval_every + 1) * eval_every, last + 1, eval_every):
            self.emit(step, step // eval_every, empty)

    def stop_here(self) -> None:
        """The model stops at its latest row (on_eval asked for it): every row records that step."""
        self.stopped_at = self.rows[-1]["step"] if self.rows else 0

    def finish(self) -> list[Row]:
        """The seed's rows; a diverged seed's are all marked ``diverged``; a stopped one's carry ``stopped_at``."""
        for row in self.rows:
            if self.diverged:
                row["status"] = "diverged"
            if self.stopped_at is not None:
                row["stopped_at"] = self.stopped_at
        return self.rows
