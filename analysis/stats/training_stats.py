"""The statistics of a training study's report, computed once from its rows (no drawing, no HTML).

:func:`training_stats` scans the rows once (a few aggregations collected together; a study of more than
:data:`ROWS_PER_PASS` rows in several passes over disjoint configurations, so that memory stays bounded) and
derives every number the report shows from the small per-configuration frames: RGB and case grids, best
configurations, robustness curves and table, learning curves of the best combinations, the paper-style tables and the
per-cell data of the interactive grids. The report's sections (:mod:`analysis.report`) only draw what it returns.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from analysis.data.meta import parse_meta
from analysis.stats.checkpoint import at_checkpoint, read_cells, readable
from analysis.stats.coverage import model_status
from analysis.stats.metric import is_combination, per_row, per_step, time_columns
from analysis.stats.order import in_paper_order
from analysis.stats.paper_tables import paper_table, per_x_table
from analysis.stats.rgb import (
    CASES,
    best_config,
    best_step,
    case_rgb_from_step_stats,
    rgb_from_step_stats,
    robustness_curve,
    seed_best,
    seed_best_stats_from_seed_best,
    step_stats,
)
from analysis.stats.seed_stats import seed_at_best, seed_columns
from search_spaces.axes import show_value
from search_spaces.finding import direction, is_probe, metric_columns
from search_spaces.record import StudyRecord
from search_spaces.schema import StudyError

ACCURACY_METRICS: tuple[str, ...] = ("train_accuracy", "val_accuracy")
#: At most this many facets (values of extra varying hyperparameters) get their own grids.
MAX_FACETS: int = 12
#: Hyperparameter columns never used as facets.
NOT_FACETS = frozenset({"seed", "study", "trial_key", "step", "epoch", "status"})


@dataclass(frozen=True)
class Axes:
    """The grid layout: panel, x, y, the facet candidates and which of them vary; ``by`` = one configuration."""

    panel: str
    x: str
    y: str
    facet_candidates: tuple[str, ...] = ()
    varying: tuple[str, ...] = ()
    #: the panel axis's values as the study declares them (their order is the panels' order; empty: default)
    panel_order: tuple[Any, ...] = ()

    @property
    def by(self) -> list[str]:
        """The columns of one configuration (one grid cell of one facet), each once (x may be y: Fig. 1's curves over
        N)."""
        return list(dict.fromkeys([self.panel, self.x, self.y, *self.facet_candidates]))

    @property
    def keys(self) -> list[str]:
        """One best configuration per value of these (the panel and the varying facets)."""
        return [self.panel, *self.varying]


def plot_axes(meta: StudyRecord | Mapping[str, Any], columns: Sequence[str]) -> tuple[str, str, str]:
    """(panel, x, y): ``study.json["plot"]``, else sensible defaults among ``columns``.

    Raises:
        StudyError (a ValueError, one line): naming the axes that cannot be chosen and the columns there are.
    """
    meta = parse_meta(meta)
    panel = meta.plot.panel or ("architecture" if "architecture" in columns else None)
    y = meta.plot.y or ("learning_rate" if "learning_rate" in columns else None)
    x = meta.plot.x or next((a for a in meta.axes if a not in (panel, y) and a in columns), None)
    missing = [name for name, col in (("panel", panel), ("x", x), ("y", y)) if col is None or col not in columns]
    if missing:
        raise StudyError(f"{meta.source}: cannot choose plot axes {missing}: set study.json 'plot' {{panel, x, y}} "
                         f"(a study's Plot) to columns of {list(columns)}")
    return panel, x, y  # type: ignore[return-value]


@dataclass(frozen=True)
class Metrics:
    """Which metric columns the report aggregates."""

    grids: tuple[str, ...]  # accuracy-like metrics drawn as RGB grids
    select: str  # the metric whose G chooses the best configuration
    cases: tuple[str, ...] = ()  # {train,val}_{argmin,first,argmax}_accuracy present
    extra_max: tuple[str, ...] = ()  # findings' metrics maximised, not drawn
    extra_min: tuple[str, ...] = ()  # findings' loss metrics (minimised)
    combos: tuple[str, ...] = ()  # findings' combinations of columns, taken per evaluation (finding_values.per_step)
    #: findings' probes (columns or combinations of them), read at the evaluation where ``select``'s seed mean is best
    read: tuple[str, ...] = ()


def choose_metrics(meta: StudyRecord, columns: Sequence[str]) -> Metrics:
    """The grid metrics, the selecting metric and the findings' extra metrics present in ``columns``."""
    grids = [m for m in ACCURACY_METRICS if m in columns]
    if meta.mode == "max" and meta.metric in columns and meta.metric not in grids:
        grids.append(meta.metric)  # a family's own accuracy (e.g. depth-validation accuracy)
    if not grids:
        raise ValueError(f"{meta.source}: no accuracy column to draw; expected one of "
                         f"{[*ACCURACY_METRICS, meta.metric]} among {list(columns)}")
    select = meta.metric if meta.metric in grids else ("val_accuracy" if "val_accuracy" in grids else grids[0])
    metrics = {f.metric or select for f in meta.findings}
    read = {m for m in metrics if is_probe(m) and readable(m, columns)}
    wanted = {c for m in metrics - read for c in metric_columns(m)}
    losses = {m for m in columns if direction(m) == "min"}
    cases = tuple(f"{s}_{c}_accuracy" for s in ("train", "val") for c in CASES if f"{s}_{c}_accuracy" in columns)
    combos = {m for m in metrics - read if is_combination(m) and all(c in columns for c in metric_columns(m))}
    return Metrics(
        grids=tuple(grids), select=select, cases=cases,
        extra_max=tuple(sorted(m for m in wanted - set(grids) - losses if m in columns)),
        extra_min=tuple(sorted(wanted & losses)), combos=tuple(sorted(combos)), read=tuple(sorted(read)),
    )


def _facets(steps: pl.DataFrame, candidates: Sequence[str]) -> tuple[tuple[str, ...], list[dict[str, Any]]]:
    """The facet candidates that vary, and the facets to draw (at most :data:`MAX_FACETS`)."""
    varying = tuple(c for c in candidates if steps.get_column(c).n_unique() > 1)
    if not varying:
        return (), [{}]
    combos = steps.select(varying).unique().sort(varying).rows(named=True)
    if len(combos) > MAX_FACETS:
        warnings.warn(f"{len(combos)} facets of {list(varying)}; drawing grids for the first {MAX_FACETS}",
                      stacklevel=3)
        combos = combos[:MAX_FACETS]
    return varying, combos


def facet_filter(frame: pl.DataFrame, facet: dict[str, Any]) -> pl.DataFrame:
    """The rows of ``frame`` in ``facet`` (hyperparameter -> value; None matches null)."""
    for k, v in facet.items():
        frame = frame.filter(pl.col(k) == v) if v is not None else frame.filter(pl.col(k).is_null())
    return frame


def describe(row: dict[str, Any], columns: Sequence[str]) -> str:
    """``d_model=16, learning_rate=0.0081``: values as :func:`search_spaces.axes.show_value` writes them."""
    return ", ".join(f"{c}={show_value(row[c])}" for c in columns)


@dataclass(frozen=True)
class TrainingStats:
    """Every statistic of a training study's report (pure data; see the module docstring)."""

    axes: Axes
    metrics: Metrics
    per_seed: pl.DataFrame  # seed_best: per configuration and seed, best over training, diverged
    counts: pl.DataFrame  # model_status: one status per (trial, seed)
    step_rows: int = 0  # (configuration, step) pairs with finished rows
    facets: list[dict[str, Any]] = field(default_factory=list)
    rgb: dict[str, pl.DataFrame] = field(default_factory=dict)  # metric -> RGB per configuration
    case_rgb: dict[str, pl.DataFrame] = field(default_factory=dict)  # split -> case RGB per configuration
    best: dict[str, pl.DataFrame] = field(default_factory=dict)  # metric -> best per (panel, varying facets)
    best_steps: dict[str, pl.DataFrame] = field(default_factory=dict)  # grid metric -> step of the best G per config
    #: step_stats rows (per step: worst / mean / best over seeds) of the candidates for the learning curves only:
    #: per-step rows of every configuration would grow with the study (3.2M rows at 100,000 trials)
    curve_steps: pl.DataFrame | None = None
    rgb_min: dict[str, pl.DataFrame] = field(default_factory=dict)  # findings' loss metrics: RGB, minimised
    combo_g: dict[str, pl.DataFrame] = field(default_factory=dict)  # findings' combinations: G per configuration
    seed_stats: pl.DataFrame | None = None
    #: per configuration, metric and each of its best evaluations, every seed's value (:func:`seed_at_best`)
    seed_at_best: pl.DataFrame | None = None
    #: one row per evaluation (configuration, ``seed``, ``step``, ``epoch``, the columns of the findings on the time
    #: axis) when the study has such a finding (:meth:`search_spaces.finding.Finding.timed`), else None
    evaluations: pl.DataFrame | None = None
    #: per configuration and seed, each probe the findings read (:attr:`Metrics.read`) at the cell's checkpoint
    read_seeds: pl.DataFrame | None = None

    @property
    def empty(self) -> bool:
        """No finished (non-failed) rows."""
        return self.step_rows == 0

    @property
    def finding_rgb(self) -> dict[str, pl.DataFrame]:
        """Metric -> RGB per configuration of every metric a finding may read (losses minimised; a combination of
        columns as taken per evaluation, its G only)."""
        return {**self.rgb, **self.rgb_min, **self.combo_g}

    def finding_cells(self) -> dict[str, pl.DataFrame]:
        """Metric -> per configuration what a finding reads (:mod:`analysis.stats.table`): ``r``, ``g``,
        ``b``, ``n_seeds`` and the seeds' own statistics (:func:`analysis.stats.seed_stats.seed_columns`): ``sd``
        (the seed spread at the cell's best evaluations, whose mean G is), ``lift`` (how far G lies above them),
        ``gmd`` and ``gmd_var`` (two seeds' mean absolute difference, the spread statistic's, and its jackknife). A
        seed without a finite value counts as the metric's worst (accuracy 0)."""
        by = self.axes.by
        per_cell = seed_columns(self.per_seed, self.seed_at_best, by)
        found = {}
        for metric, frame in self.finding_rgb.items():
            for name, extra in per_cell.items():
                if metric in extra.columns:
                    frame = frame.join(extra.select(*by, pl.col(metric).alias(name)), on=by, how="left",
                                       nulls_equal=True)
            found[metric] = frame
        read = {} if self.read_seeds is None else read_cells(self.read_seeds, self.metrics.read, by)
        return {**found, **read}

    @property
    def select_rgb(self) -> pl.DataFrame:
        """The RGB frame of the selecting metric."""
        return self.rgb[self.metrics.select]

    def robustness_curve(self) -> pl.DataFrame:
        """Every configuration's G of the selecting metric, best first per panel value."""
        return robustness_curve(self.select_rgb.lazy(), self.axes.panel).collect()

    def robustness_table(self) -> pl.DataFrame:
        """Per panel value: combinations, best and median G, share with G >= 50% and within 5 pp of the best."""
        return robustness_table(self.select_rgb, self.axes.panel, self.axes.panel_order)

    def learning_curves(self) -> pl.DataFrame:
        """Mean / min / max over seeds per step of each grid metric, for the best configuration per panel."""
        a, by = self.axes, self.axes.by
        chosen = best_config(self.select_rgb.lazy(), a.panel).collect().select(by)
        labels = chosen.with_columns(
            pl.Series("label", [f"{row[a.panel]} ({describe(row, [a.x, a.y, *a.varying])})"
                                for row in chosen.iter_rows(named=True)], dtype=pl.String)
        )
        assert self.curve_steps is not None, "learning curves of a study without rows"
        joined = self.curve_steps.join(labels, on=by, how="inner", nulls_equal=True)
        return pl.concat([
            joined.select(a.panel, "label", "step", pl.col(f"{m}__g").alias("mean"), pl.col(f"{m}__r").alias("min"),
                          pl.col(f"{m}__b").alias("max"), pl.lit(m).alias("metric"))
            for m in self.metrics.grids
        ])

    def paper_table(self) -> pl.DataFrame:
        """Per panel value (and varying facet): the best combination with min / mean / max and case accuracies."""
        a, by = self.axes, self.axes.by
        table = paper_table(rgb={m: self.rgb[m] for m in self.metrics.grids}, panel=a.keys, by=by,
                            select_metric=self.metrics.select, case=self.case_rgb)
        if self.seed_stats is not None:
            table = table.join(self.seed_stats.select(*by, "best_mean", "n_seeds", "n_diverged"), on=by, how="left",
                               nulls_equal=True).rename({"best_mean": f"{self.metrics.select}_seed_best_mean"})
        table = table.select([c for c in table.columns if c not in a.facet_candidates or c in a.varying])
        return in_paper_order(table, a.keys, a.panel_order)

    def per_x_table(self, table_by: Sequence[str]) -> pl.DataFrame:
        """The paper's table per ``table_by`` (e.g. vocabulary size): best G over the other axes."""
        return per_x_table(self.select_rgb, [self.axes.panel, *self.axes.varying], table_by)


def robustness_table(rgb: pl.DataFrame, panel: str, panel_order: Sequence[Any] = ()) -> pl.DataFrame:
    """Per panel value: how many combinations, best and median G, and the share of combinations with
    G >= 50% and within 5 percentage points of the panel's best (all G values fractions)."""
    g = pl.col("g")
    out = (
        rgb.filter(g.is_not_null())
        .group_by(panel)
        .agg(
            pl.len().alias("combinations"),
            g.max().alias("best_g"),
            g.median().alias("median_g"),
            (g >= 0.5).mean().alias("share_g_at_least_50"),
            (g >= g.max() - 0.05).mean().alias("share_within_5pp_of_best"),
        )
    )
    return in_paper_order(out, [panel], panel_order)


#: Rows aggregated in one pass. The per-(configuration, step) aggregation holds state for every group it sees,
#: so its memory grows with the study; a study of more rows is aggregated in passes over disjoint sets of
#: configurations (hash-partitioned), which bounds the memory at the cost of one more scan per pass
#: (bench/README.md: 100,000 trials in 4 passes).
ROWS_PER_PASS: int = 4_000_000


@dataclass
class _Aggregates:
    """What the passes keep (per-configuration frames; per-step rows only for each pass's best configurations)."""

    rgb: dict[str, list[pl.DataFrame]] = field(default_factory=dict)
    rgb_min: dict[str, list[pl.DataFrame]] = field(default_factory=dict)
    combo_g: dict[str, list[pl.DataFrame]] = field(default_factory=dict)
    case_rgb: dict[str, list[pl.DataFrame]] = field(default_factory=dict)
    best_steps: dict[str, list[pl.DataFrame]] = field(default_factory=dict)
    per_seed: list[pl.DataFrame] = field(default_factory=list)
    seed_at_best: list[pl.DataFrame] = field(default_factory=list)
    counts: list[pl.DataFrame] = field(default_factory=list)
    curve_steps: list[pl.DataFrame] = field(default_factory=list)
    read_seeds: list[pl.DataFrame] = field(default_factory=list)
    cases_with_data: set[str] = field(default_factory=set)
    step_rows: int = 0

    def add(self, into: dict[str, list[pl.DataFrame]], key: str, frame: pl.DataFrame) -> None:
        into.setdefault(key, []).append(frame)


def n_passes(lf: pl.LazyFrame) -> int:
    """Passes over the rows that keep each pass's aggregation under :data:`ROWS_PER_PASS` rows."""
    rows = int(lf.select(pl.len()).collect().item())
    return max(1, -(-rows // ROWS_PER_PASS))


def _pass_rows(lf: pl.LazyFrame, by: Sequence[str], index: int, passes: int) -> pl.LazyFrame:
    """The rows of the configurations of pass ``index``: every row of one configuration lands in one pass."""
    return lf if passes == 1 else lf.filter(pl.struct(list(by)).hash(seed=0) % passes == index)


def _one_pass(rows: pl.LazyFrame, axes: Axes, metrics: Metrics, out: _Aggregates, report: bool = True) -> None:
    """Aggregate one pass's rows (one collect_all) and keep what the report (else the findings) reads of them."""
    by, base = axes.by, rows.filter(pl.col("status") != "failed")
    maxed = [*metrics.grids, *metrics.extra_max]
    seeds = base.with_columns(per_row(m) for m in metrics.combos)  # each seed's combination, for its noise
    queries = [step_stats(base, list(dict.fromkeys([*maxed, *metrics.cases])), by, "max"),
               seed_best(seeds, [*maxed, *metrics.combos], by, "max"), model_status(rows)]
    queries += [step_stats(base, list(metrics.extra_min), by, "min")] if metrics.extra_min else []
    steps, per_seed, counts, *minimised = pl.collect_all(queries, engine="streaming")
    out.per_seed.append(per_seed)
    if metrics.read:
        out.read_seeds.append(at_checkpoint(base, steps, metrics.read, metrics.select, by))
    picks = [(steps, m, pl.col(f"{m}__g"), "max") for m in maxed] + [(steps, m, per_step(m), "max")
                                                                      for m in metrics.combos]
    picks += [(minimised[0], m, pl.col(f"{m}__g"), "min") for m in metrics.extra_min]
    out.seed_at_best.append(seed_at_best(seeds, picks, by).collect(engine="streaming"))
    out.counts.append(counts)
    out.step_rows += steps.height
    for m in maxed:
        out.add(out.rgb, m, rgb_from_step_stats(steps.lazy(), m, by).collect())
    for m in metrics.extra_min:
        out.add(out.rgb_min, m, rgb_from_step_stats(minimised[0].lazy(), m, by, "min").collect())
    for m in metrics.combos:  # at each evaluation, then the best over training
        out.add(out.combo_g, m, steps.group_by(by).agg(per_step(m).max().alias("g"), pl.col("n_seeds").max()))
    for split in ("train", "val"):
        cols = [f"{split}_{c}_accuracy" for c in CASES]
        if all(c in metrics.cases for c in cols):
            out.add(out.case_rgb, split, case_rgb_from_step_stats(steps.lazy(), split, by).collect())
            if steps.select(pl.col(f"{cols[0]}__g").is_not_null().any()).item():
                out.cases_with_data.add(split)
    if not report:
        return
    for m in metrics.grids:
        out.add(out.best_steps, m, best_step(steps.lazy(), m, by).collect())
    # the learning curves' configuration (best per panel value) is the best of some pass's best ones
    chosen = best_config(out.rgb[metrics.select][-1].lazy(), axes.panel).collect().select(by)
    out.curve_steps.append(steps.join(chosen, on=by, how="semi", nulls_equal=True))


def _aggregate(lf: pl.LazyFrame, axes: Axes, metrics: Metrics, report: bool = True) -> _Aggregates:
    """Every pass over the rows (see :data:`ROWS_PER_PASS`)."""
    with_status = lf if "status" in lf.collect_schema().names() else lf.with_columns(status=pl.lit("ok"))
    out, passes = _Aggregates(), n_passes(with_status)
    for index in range(passes):
        _one_pass(_pass_rows(with_status, axes.by, index, passes), axes, metrics, out, report)
    return out


def _joined(frames: dict[str, list[pl.DataFrame]], sort_by: Sequence[str]) -> dict[str, pl.DataFrame]:
    return {k: pl.concat(parts).sort(list(sort_by), nulls_last=False) for k, parts in frames.items()}


def training_stats(lf: pl.LazyFrame, meta: StudyRecord, report: bool = True) -> TrainingStats:
    """Every statistic of the report of a training study (see :class:`TrainingStats`); ``report`` False: what the
    findings read only, ``best``, ``best_steps``, ``curve_steps`` and ``seed_stats`` empty (replays, budget looks)."""
    columns = lf.collect_schema().names()
    panel, x, y = plot_axes(meta, columns)
    candidates = tuple(n for n in dict.fromkeys(meta.axes)
                       if n in columns and n not in (panel, x, y) and n not in NOT_FACETS)
    metrics = choose_metrics(meta, columns)
    declared = tuple(meta.axis_values(panel) or ())
    axes = Axes(panel, x, y, candidates, panel_order=declared)
    agg = _aggregate(lf, axes, metrics, report)
    by = axes.by
    per_seed, counts = pl.concat(agg.per_seed).sort([*by, "seed"]), pl.concat(agg.counts)
    if agg.step_rows == 0:
        return TrainingStats(axes=axes, metrics=metrics, per_seed=per_seed, counts=counts)
    rgb = _joined(agg.rgb, by)
    varying, facets = _facets(rgb[metrics.select], candidates)
    axes = Axes(panel, x, y, candidates, varying, declared)
    return TrainingStats(
        axes=axes, metrics=metrics, per_seed=per_seed, counts=counts, step_rows=agg.step_rows, facets=facets,
        rgb=rgb, case_rgb={k: v for k, v in _joined(agg.case_rgb, by).items() if k in agg.cases_with_data},
        best={m: best_config(frame.lazy(), axes.keys).collect() for m, frame in rgb.items()} if report else {},
        best_steps=_joined(agg.best_steps, by), curve_steps=pl.concat(agg.curve_steps) if report else None,
        rgb_min=_joined(agg.rgb_min, by), combo_g=_joined(agg.combo_g, by),
        seed_stats=seed_best_stats_from_seed_best(per_seed.lazy(), metrics.select, by).collect() if report else None,
        seed_at_best=pl.concat(agg.seed_at_best), evaluations=_evaluations(lf, meta, by),
        read_seeds=pl.concat(agg.read_seeds) if agg.read_seeds else None,
    )


def _evaluations(lf: pl.LazyFrame, meta: StudyRecord, by: Sequence[str]) -> pl.DataFrame | None:
    """The rows the study's findings on the time axis read (None: it has none): every evaluation of every model that
    did not fail, its configuration, seed, step, epoch and those findings' columns (:func:`time_columns`)."""
    names = lf.collect_schema().names()
    read = time_columns(meta.findings, meta.metric, names, (*by, "seed", "step", "epoch"))
    if read is None:
        return None
    kept = lf.filter(pl.col("status") != "failed") if "status" in names else lf
    return kept.select(*by, *(c for c in ("seed", "step", "epoch") if c in names), *read).collect()
