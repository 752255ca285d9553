"""What a study's findings are checked on (:class:`FindingData`): the same at each look of an adaptive budget, at the
end of `study run`, in `study findings` and in the report."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

from analysis.stats.noise import NoiseModel
from analysis.stats.table import CellTable
from search_spaces.record import StudyRecord

if TYPE_CHECKING:
    from analysis.stats.training_stats import TrainingStats


@dataclass(frozen=True)
class FindingData:
    """What findings are checked on.

    Attributes:
        cells: metric column (or combination) -> per grid cell its configuration columns, ``g`` (G) and, where
            known, the other columns of :class:`analysis.stats.table.Column` (``n`` or ``n_seeds``: seeds).
        panel: the panel column the findings name values of.
        select_metric: the metric of a finding that names none.
        expected: every cell the grid will have (configuration columns); None: the cells there are are all.
        max_seeds: the most seeds a cell gets (the study's).
        missing_note: what is missing (e.g. ``1 unreadable``), quoted where cells not run leave a verdict open.
        present: the panel values the data has at all (published results of some architectures only): bounds on
            others are left out and named; None: every panel value counts (a missing one has no data).
    """

    cells: Mapping[str, pl.DataFrame]
    panel: str
    select_metric: str
    expected: pl.DataFrame | None = None
    max_seeds: int = 1
    missing_note: str = ""
    present: set[str] | None = None
    #: the seed-noise model fitted to a metric's cells (None: :meth:`NoiseModel.fit`; the calibration's negative
    #: controls put a wrong one here)
    noise: Callable[[CellTable], NoiseModel] | None = field(default=None, compare=False)
    #: one row per evaluation (configuration columns, ``seed``, ``step``, ``epoch``, the metrics' columns) for the
    #: time-axis bounds; None: the data has none (a finding with such a bound is NOT CHECKED)
    evaluations: pl.DataFrame | None = field(default=None, compare=False)


def finding_data(meta: StudyRecord, stats: TrainingStats | None, missing_note: str = "") -> FindingData:
    """What a study's findings are checked on: its cells (``stats`` None or empty: none yet), every cell its grid
    will have (a cell not run leaves a bound on it open), its seeds; ``missing_note`` names what is missing."""
    from analysis.stats.coverage import expected_cells

    if stats is None:
        return FindingData(cells={}, panel=meta.plot.panel or "", select_metric=meta.metric,
                           expected=expected_cells(meta, list(meta.axes)), max_seeds=len(meta.seeds),
                           missing_note=missing_note)
    return FindingData(cells={} if stats.empty else stats.finding_cells(), panel=stats.axes.panel,
                       select_metric=stats.metrics.select, expected=expected_cells(meta, stats.axes.by),
                       max_seeds=len(meta.seeds), missing_note=missing_note, evaluations=stats.evaluations)


def published_data(stats: TrainingStats, max_seeds: int) -> FindingData:
    """What findings are checked on in rows that are all there is (published results): their cells, and only the
    panel values they have (bounds on others are left out and named)."""
    present = {str(v) for v in stats.select_rgb.get_column(stats.axes.panel).unique().to_list()}
    return FindingData(cells=stats.finding_cells(), panel=stats.axes.panel, select_metric=stats.metrics.select,
                       max_seeds=max_seeds, present=present, evaluations=stats.evaluations)
