"""`study export`: a finished study's Parquet rows into trackers, through the same series as `study run --track`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from search_spaces.study import Study
from study.journal import point_from_rows
from study.storage import StudyStorage
from study.tracking import TrackSpec, TrialTracking
from study.trainable import trial_params


def export_study(study: Study, storage: StudyStorage, specs: Sequence[TrackSpec],
                 echo: Callable[[str], None] = print) -> tuple[int, list[str]]:
    """Log every finished trial to each tracker (a trial exported before is replaced); returns (trials exported,
    keys of unreadable trial files left out)."""
    exported, unreadable = 0, []
    keys = sorted(storage.finished_keys())
    for number, key in enumerate(keys, 1):
        table = storage.read_trial(key)
        if table is None or not table.num_rows:
            unreadable.append(key)
            continue
        rows = table.to_pylist()
        point = point_from_rows(study, rows)
        with TrialTracking(specs, study, key, trial_params(study, point), strict=True) as tracking:
            for row in sorted(rows, key=lambda r: (r["step"], r["seed"])):
                tracking.row(row)
        exported += 1
        if number % 50 == 0:
            echo(f"  {number}/{len(keys)} trials")
    return exported, unreadable
