"""Experiment trackers as views of a study: MLflow, TensorBoard, Weights & Biases (docs/tracking.md).

``study run --track KIND[=TARGET]`` logs every trial live, from inside the trial; ``study export`` puts finished
results in a tracker afterwards. Both feed a trial's rows through :class:`TrialTracking` (the series:
study.tracking.series). One tracker run per trial, named by its trial key; a trial trained again (a relaunch
after a killed driver, an export repeated) replaces its earlier run instead of adding a second one (W&B, which
cannot delete a run, resumes the run of that id instead). The Parquet
rows stay the record: a tracker that fails mid-trial is reported and dropped for that trial, never the trial.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from core.errors import one_line
from search_spaces.study import Study
from study.results.storage import StudyStorage
from study.tracking.series import TrialSeries
from study.tracking.targets import TRACKERS, TrackError, TrackSpec, parse_track

__all__ = ["TRACKERS", "TrackError", "TrackSpec", "TrialTracking", "parse_track", "resolve"]


def resolve(spec: TrackSpec, study: Study, storage: StudyStorage, option: str = "--track") -> TrackSpec:
    """The spec with its default target filled in, checked from the driver (before any trial starts)."""
    from study.tracking import sinks

    return sinks.resolve(spec, study, storage, option)


class TrialTracking:
    """One trial's tracker runs: every row goes to each of them as series (study.tracking.series)."""

    def __init__(self, specs: Sequence[TrackSpec], study: Study, key: str, params: dict[str, Any], *,
                 strict: bool = False) -> None:
        from study.tracking import sinks

        self.strict = strict  # raise tracker errors (study export) instead of dropping the tracker (a live trial)
        self.series = TrialSeries(study.seeds, params)
        self.sinks: dict[str, Any] = {}
        for spec in specs:
            sink = self._guard(spec.kind, lambda s=spec: sinks.open_sink(s, study, key, params))
            if sink is not None:
                self.sinks[spec.kind] = sink

    def _guard(self, kind: str, call: Any) -> Any:
        try:
            return call()
        except Exception as error:  # noqa: BLE001 - a view must not cost the record: say it, drop the tracker
            if self.strict:
                raise
            print(f"warning: tracker {kind} dropped for this trial: {one_line(error, at=True)}", file=sys.stderr)
            self.sinks.pop(kind, None)
            return None

    def row(self, row: dict[str, Any]) -> None:
        """Log one evaluation row (as it is produced, or read back from Parquet)."""
        step, values = self.series.add(row)
        for kind, sink in list(self.sinks.items()):
            self._guard(kind, lambda s=sink: s.log(values, step))

    def close(self) -> None:
        for kind, sink in list(self.sinks.items()):
            self._guard(kind, sink.close)
        self.sinks.clear()

    def __enter__(self) -> TrialTracking:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
