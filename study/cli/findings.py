"""`study findings NAME`: each finding's verdict, on the study's results or on the paper's published data.

``--data published`` checks the findings on the study's shipped reference (``published:PATH``: a shipped name
such as ``richter2020/mode__var_dim``, or a ``.parquet`` file of the release's schema), restricted to the grid
of ``--scale`` (the paper scale: the whole published grid). That is how an encoding is checked against the
authors' own numbers before it judges a run. Panel values the published data lacks (the release ships BERT
alone for Fig. 3) are left out and named. Exit status 3 when a checked finding FAILs (docs/cli.md).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click
import polars as pl

from search_spaces import Study
from search_spaces.record import StudyRecord
from study.cli.common import (
    FINDING_FAILED_EXIT,
    InputError,
    current_meta,
    load_study,
    scale_option,
    storage_option,
    study_storage,
)
from study.results.storage import StudyStorage

if TYPE_CHECKING:
    from analysis.stats.training_stats import TrainingStats
    from analysis.stats.verdicts.evaluate import Verdict

PUBLISHED = "published"


def published_name(study: Study, data: str) -> str:
    """The reference ``--data`` names: ``published`` -> the study's own, ``published:X`` -> X."""
    if data != PUBLISHED and not data.startswith(f"{PUBLISHED}:"):
        raise InputError(f"invalid --data {data!r}; allowed: published, published:<paper>/<file>, "
                         "published:<path>.parquet")
    name = data.partition(":")[2]
    if name:
        return name
    if not study.reference:
        raise InputError(f"invalid --data {data!r}: study {study.name} ships no published results; allowed: "
                         "published:<path>.parquet (a file of the release's schema, docs/richter2020.md)")
    return study.reference


def published_rows(study: Study, data: str) -> tuple[str, pl.LazyFrame, StudyRecord, TrainingStats]:
    """The published rows of ``data`` on the study's grid at its scale, the study's record over them (its seeds the
    data's, in their order) and their statistics; InputError when they cannot be read or share no cell."""
    from analysis.data.reference import open_reference
    from analysis.stats.region import approx_in
    from analysis.stats.training_stats import training_stats

    name = published_name(study, data)
    try:
        lf, _ = open_reference(name)
    except (FileNotFoundError, ValueError, OSError) as error:
        raise InputError(f"invalid --data {data!r}: {error}") from None
    columns = lf.collect_schema().names()
    grid = {c: values for c in study.axes if c in columns and (values := study.axis_values(c))}
    lf = lf.filter(*(approx_in(c, v) for c, v in grid.items())) if grid else lf
    seeds = tuple(sorted(lf.select(pl.col("seed").unique()).collect().get_column("seed").to_list()))
    meta = StudyRecord.of(study.replace(seeds=seeds or study.seeds, initial_seeds=None))
    try:
        stats = training_stats(lf, meta)
    except ValueError as error:
        raise InputError(f"invalid --data {data!r}: {error}") from None
    if stats.empty:
        raise InputError(f"invalid --data {data!r}: it shares no cell with the grid of {study.name} at scale "
                         f"{study.scale}")
    return name, lf, meta, stats


def published_verdicts(study: Study, data: str) -> tuple[str, list[Verdict]]:
    """(a header line, the verdicts) of the study's findings on published data restricted to its grid."""
    from analysis.data.published_cells import is_cells
    from analysis.stats.verdicts.data import published_data
    from analysis.stats.verdicts.evaluate import evaluate_findings

    if is_cells(published_name(study, data)):
        return _cells_verdicts(study, data)
    name, _, meta, stats = published_rows(study, data)
    panel = stats.axes.panel
    present = {str(v) for v in stats.select_rgb.get_column(panel).unique().to_list()}
    head = (f"{study.name} (scale {study.scale}): findings on the published data {name}, {stats.select_rgb.height} "
            f"cells of {panel} {', '.join(sorted(present))} x {len(meta.seeds)} seeds")
    return head, evaluate_findings(meta.replace(budget="fixed"), published_data(stats, len(meta.seeds)))


def _cells_verdicts(study: Study, data: str) -> tuple[str, list[Verdict]]:
    """The findings on a paper's table of cells (analysis.data.published_cells): its printed means, spreads, seeds."""
    from analysis.data.published_cells import published_cells
    from analysis.stats.verdicts.data import FindingData
    from analysis.stats.verdicts.evaluate import evaluate_findings

    name = published_name(study, data)
    try:
        cells, frame = published_cells(name)
    except (FileNotFoundError, ValueError) as error:
        raise InputError(f"invalid --data {data!r}: {error}") from None
    meta = StudyRecord.of(study.replace(budget="fixed"))
    panel = meta.plot.panel or ""
    present = {str(v) for v in frame.get_column(panel).unique().to_list()} if panel in frame.columns else None
    seeds = int(frame.get_column("n_seeds").cast(pl.Int64).max() or 1) if "n_seeds" in frame.columns else 1  # type: ignore[arg-type]
    head = (f"{study.name} (scale {study.scale}): findings on the published table {name}, {frame.height} numbers "
            f"of {panel} {', '.join(sorted(present or ()))}")
    data_ = FindingData(cells=cells, panel=panel, select_metric=study.metric, max_seeds=seeds, present=present)
    return head, evaluate_findings(meta, data_)


def published_replay(study: Study, data: str) -> tuple[str, list[Verdict], list[str]]:
    """(a header line, the adaptive budget's verdicts, its looks and the ``budget:`` line) replayed over the published
    per-seed rows (analysis.stats.budget.replay)."""
    from analysis.data.published_cells import is_cells
    from analysis.stats.budget.replay import replay

    if is_cells(published_name(study, data)):
        raise InputError(f"invalid --budget 'adaptive' with --data {data!r}: a table of means has no per-seed rows to "
                         "replay; allowed: published data of per-seed rows (the NAP release)")
    name, lf, meta, stats = published_rows(study, data)
    result = replay(meta, lf)
    adaptive = meta.replace(budget="adaptive")
    head = (f"{study.name} (scale {study.scale}): the adaptive budget replayed on the published data {name}, "
            f"{stats.select_rgb.height} cells x {len(meta.seeds)} seeds (seeds in their order; every cell starts with "
            f"{len(adaptive.starting_seeds)}, {adaptive.looks} looks)")
    looks = [f"look {look.index}: {sum(v.status == 'UNDECIDED' for v in look.verdicts)} finding(s) undecided, "
             f"{len(look.requests)} cell(s) get one more seed" for look in result.outcome.looks]
    decided = [f"decided at look {at}" if at else "never decided" for at in result.outcome.decided_at()]
    summary = [f"  {v.finding.description[:70]}: {at}" for v, at in zip(result.adaptive, decided, strict=True)]
    return head, result.adaptive, [*looks, *summary, result.line()]


def run_verdicts(study: Study, target: StudyStorage) -> tuple[str, list[Verdict]]:
    """(a header line, the verdicts) of the study's current findings on its results in ``target``."""
    from analysis.report.sections import ReportContext
    from analysis.report.summary import verdicts_of

    study_dir = target.location
    ctx = ReportContext.open(study_dir, current_meta(study, target))
    if ctx.scan.lf is None:
        raise click.ClickException(f"no readable results for study {study.name} (scale {study.scale}) in "
                                   f"{study_dir.uri}; run `study run {study.name} --scale {study.scale}` first")
    note = ctx.coverage.note()
    return f"{study.name} (scale {study.scale}): findings on {study_dir.uri}{f' ({note})' if note else ''}", \
        verdicts_of(ctx)


def echo_verdicts(head: str, verdicts: list[Verdict], tail: Sequence[str] = ()) -> int:
    """Print the verdicts under ``head`` (and ``tail`` after them); returns how many checked findings failed."""
    from analysis.stats.verdicts.evaluate import failed

    click.echo(head)
    for verdict in verdicts:
        for line in verdict.lines():
            click.echo(line)
    for line in tail:
        click.echo(line)
    bad = failed(verdicts)
    if bad:
        click.echo(f"{len(bad)} finding(s) checked and failed: exit status {FINDING_FAILED_EXIT}")
    return len(bad)


@click.command("findings")
@click.argument("name")
@scale_option
@storage_option
@click.option("--data", default=None, metavar="published[:PATH]",
              help="Check on published data instead of the study's results: its shipped reference, or "
                   "published:<paper>/<file> / published:<path>.parquet.")
@click.option("--budget", type=click.Choice(["fixed", "adaptive"]), default=None,
              help="With --data: replay the adaptive budget over the published per-seed rows (which models it would "
                   "train, which verdicts it would reach), ending with a 'budget:' line.")
def findings(name: str, scale: str, storage: str, data: str | None, budget: str | None) -> None:
    """Each finding's verdict (PASS / FAIL / UNDECIDED / PARTIAL / NOT CHECKED) with the numbers it tested, their
    intervals from seed variation, the confidence and the seeds behind them.

    Exits 3 when a checked finding fails.
    """
    study = load_study(name, scale)
    if not study.findings:
        click.echo(f"{study.name} states no findings")
        return
    if budget == "adaptive" and data is None:
        raise InputError("invalid --budget 'adaptive' without --data; allowed: --budget adaptive with --data "
                         "published[:PATH] (a study run adaptively shows its budget in `study findings NAME`)")
    tail: list[str] = []
    if data is not None and budget == "adaptive":
        head, verdicts, tail = published_replay(study, data)
    elif data is not None:
        head, verdicts = published_verdicts(study, data)
    else:
        head, verdicts = run_verdicts(study, study_storage(study, storage))  # read in place, local or object storage
    if echo_verdicts(head, verdicts, tail):
        sys.exit(FINDING_FAILED_EXIT)
