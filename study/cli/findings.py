"""`study findings NAME`: each finding's verdict, on the study's results or on the paper's published data.

``--data published`` checks the findings on the study's shipped reference (``published:PATH``: a shipped name
such as ``richter2020/mode__var_dim``, or a ``.parquet`` file of the release's schema), restricted to the grid
of ``--scale`` (the paper scale: the whole published grid). That is how an encoding is checked against the
authors' own numbers before it judges a run. Panel values the published data lacks (the release ships BERT
alone for Fig. 3) are left out and named. Exit status 3 when a checked finding FAILs (docs/cli.md).
"""

from __future__ import annotations

import sys

import click

from search_spaces import Linked, Study
from search_spaces.study import axis_values
from study.cli.common import (
    FINDING_FAILED_EXIT,
    InputError,
    current_meta,
    load_study,
    scale_option,
    storage_option,
    study_storage,
)

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


def swept_values(study: Study, column: str) -> list | None:
    """The values axis ``column`` takes in the study's grid (a Linked axis: its labels, typed); None if continuous."""
    axis = study.axes.get(column)
    return list(axis_values(axis)) if isinstance(axis, Linked | tuple) else None


def published_verdicts(study: Study, data: str) -> tuple[str, list]:
    """(a header line, the verdicts) of the study's findings on published data restricted to its grid."""
    from analysis.data.meta import parse_meta
    from analysis.data.reference import open_reference
    from analysis.stats.compare import approx_in
    from analysis.stats.findings import evaluate_findings
    from analysis.stats.training_stats import training_stats

    name = published_name(study, data)
    try:
        lf, _ = open_reference(name)
    except (FileNotFoundError, ValueError, OSError) as error:
        raise InputError(f"invalid --data {data!r}: {error}") from None
    meta = parse_meta(study.to_json(), f"study {study.name}")
    columns = lf.collect_schema().names()
    grid = {c: swept_values(study, c) for c in study.axes if c in columns and swept_values(study, c)}
    lf = lf.filter(*(approx_in(c, v) for c, v in grid.items())) if grid else lf
    try:
        stats = training_stats(lf, meta)
    except ValueError as error:
        raise InputError(f"invalid --data {data!r}: {error}") from None
    if stats.empty:
        raise InputError(f"invalid --data {data!r}: it shares no cell with the grid of {study.name} at scale "
                         f"{study.scale}")
    panel = stats.axes.panel
    present = {str(v) for v in stats.select_rgb.get_column(panel).unique().to_list()}
    cells = stats.select_rgb.height
    head = (f"{study.name} (scale {study.scale}): findings on the published data {name}, {cells} cells of "
            f"{panel} {', '.join(sorted(present))}")
    return head, evaluate_findings(meta, stats.finding_rgb, panel, stats.metrics.select, None, "", present,
                                   noise=stats.seed_noise())


def run_verdicts(study: Study, storage: str) -> tuple[str, list]:
    """(a header line, the verdicts) of the study's current findings on its results in ``storage``."""
    from analysis.report.sections import ReportContext
    from analysis.report.summary import verdicts_of

    target = study_storage(study, storage)  # read in place, local or object storage
    study_dir = target.location
    ctx = ReportContext.open(study_dir, current_meta(study, target))
    if ctx.scan.lf is None:
        raise click.ClickException(f"no readable results for study {study.name} (scale {study.scale}) in "
                                   f"{study_dir.uri}; run `study run {study.name} --scale {study.scale}` first")
    note = ctx.coverage.note()
    return f"{study.name} (scale {study.scale}): findings on {study_dir.uri}{f' ({note})' if note else ''}", \
        verdicts_of(ctx)


@click.command("findings")
@click.argument("name")
@scale_option
@storage_option
@click.option("--data", default=None, metavar="published[:PATH]",
              help="Check on published data instead of the study's results: its shipped reference, or "
                   "published:<paper>/<file> / published:<path>.parquet.")
def findings(name: str, scale: str, storage: str, data: str | None) -> None:
    """Each finding's verdict (PASS / FAIL / UNDECIDED / NOT CHECKED) with the numbers it tested.

    Exits 3 when a checked finding fails.
    """
    from analysis.stats.findings import failed

    study = load_study(name, scale)
    if not study.findings:
        click.echo(f"{study.name} states no findings")
        return
    head, verdicts = published_verdicts(study, data) if data is not None else run_verdicts(study, storage)
    click.echo(head)
    for verdict in verdicts:
        for line in verdict.lines():
            click.echo(line)
    bad = failed(verdicts)
    if bad:
        click.echo(f"{len(bad)} finding(s) checked and failed: exit status {FINDING_FAILED_EXIT}")
        sys.exit(FINDING_FAILED_EXIT)
