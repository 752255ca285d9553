"""The published grid beside a reproduction: the reference results restricted to what the study ran.

Pure statistics (no drawing): :func:`published_grid` maps the study's ``reference`` (``study.json``) onto the
study's axes, restricts it to the panel / x / y values the study ran and computes the same RGB statistic,
the best G of the full published grid, and the table "reproduced vs published". A reference that lacks one
of the study's axes is an error naming the reference and the axis, never a silently missing figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl

from analysis.data.reference import open_reference
from analysis.stats.order import in_paper_order
from analysis.stats.region import approx_in
from analysis.stats.rgb import best_config, rgb_from_step_stats, step_stats
from analysis.stats.training_stats import Axes, describe


@dataclass(frozen=True)
class PublishedGrid:
    """The reference's RGB frames on the study's cells, its full-grid best, and what was restricted."""

    name: str
    columns: tuple[str, ...]
    rgb: dict[str, pl.DataFrame] = field(default_factory=dict)  # metric -> restricted RGB
    full_rgb: dict[str, pl.DataFrame] = field(default_factory=dict)  # metric -> RGB of the whole published grid
    full_best: dict[str, pl.DataFrame] = field(default_factory=dict)  # metric -> best per panel, full grid
    note: str = ""  # e.g. that no axis value was shared and the full grid is drawn

    def restricts(self, facet: Mapping[str, object]) -> bool:
        """Whether a facet fixes a hyperparameter the published grid does not have (then no side-by-side)."""
        return any(k not in self.columns for k in facet)

    def compare(self, best: Mapping[str, pl.DataFrame], axes: Axes) -> pl.DataFrame:
        """Per panel value and metric: published best (full grid, where), published on the study's cells,
        and the reproduced best (where)."""
        panel, frames = axes.panel, []
        for m, full in self.full_best.items():
            pub = best_config(self.rgb[m].lazy(), panel).collect()
            frame = full.select(
                panel, pl.lit(m).alias("metric"), pl.col("g").alias("published_full_grid_value"),
                _at(full, [axes.x, axes.y], "published_full_grid_at"),
            ).join(pub.select(panel, pl.col("g").alias("published_same_grid_value")), on=panel, how="left")
            if m in best:
                ours = best_config(best[m].lazy(), panel).collect()
                frame = frame.join(
                    ours.select(panel, pl.col("g").alias("reproduced_value"), _at(ours, [axes.x, axes.y],
                                                                                  "reproduced_at")),
                    on=panel, how="left")
            frames.append(frame)
        out = pl.concat(frames, how="diagonal")
        return in_paper_order(out, [panel, "metric"], axes.panel_order)


def _at(frame: pl.DataFrame, columns: Sequence[str], name: str) -> pl.Series:
    """A string column describing each row's ``columns`` with tick-label formatting."""
    return pl.Series(name, [describe(row, columns) for row in frame.iter_rows(named=True)], dtype=pl.String)


def published_grid(reference: str, cells: pl.DataFrame, axes: Axes, metrics: Sequence[str]) -> PublishedGrid:
    """The published results ``reference`` on the study's grid (see the module docstring).

    ``reference`` is a shipped name (``richter2020/mode__var_dim``) or the path of a ``.parquet`` file in the
    release's schema (more of the release than the package ships).
    ``cells`` holds the study's configurations (any frame with the panel, x and y columns): the published grid is
    restricted to their values.

    Raises:
        FileNotFoundError: the reference is not shipped (the message lists the shipped ones).
        ValueError: the reference lacks the study's panel, x or y column (naming each).
    """
    ref, _ = open_reference(reference)
    ref_cols = ref.collect_schema().names()
    missing = [c for c in (axes.panel, axes.x, axes.y) if c not in ref_cols]
    if missing:
        raise ValueError(f"published results {reference} have no column {missing} of the study's plot axes "
                         f"(panel {axes.panel}, x {axes.x}, y {axes.y}); its columns: {ref_cols}")
    ref_metrics = [m for m in metrics if m in ref_cols]
    by = [axes.panel, axes.x, axes.y]
    restricted = ref.filter(
        pl.col(axes.panel).is_in(cells.get_column(axes.panel).unique().to_list()),
        approx_in(axes.x, cells.get_column(axes.x).unique().to_list()),
        approx_in(axes.y, cells.get_column(axes.y).unique().to_list()),
    )
    full_steps, sub_steps = pl.collect_all([step_stats(ref, ref_metrics, by), step_stats(restricted, ref_metrics, by)])
    note = ""
    if sub_steps.is_empty():
        note = (f"The published grid shares none of this study's {axes.panel} / {axes.x} / {axes.y} values; "
                "it is drawn whole.")
        sub_steps = full_steps
    full_rgb = {m: rgb_from_step_stats(full_steps.lazy(), m, by).collect() for m in ref_metrics}
    return PublishedGrid(
        name=reference,
        columns=tuple(ref_cols),
        rgb={m: rgb_from_step_stats(sub_steps.lazy(), m, by).collect() for m in ref_metrics},
        full_rgb=full_rgb,
        full_best={m: best_config(frame.lazy(), axes.panel).collect() for m, frame in full_rgb.items()},
        note=note,
    )
