"""`study report NAME`: PNG grids, curves, tables and index.html from the study's results, read where they live;
:func:`report_and_count_failed` is also what `study run --report` calls."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from search_spaces import Study
from study.cli.common import (
    FINDING_FAILED_EXIT,
    current_meta,
    load_study,
    require_results,
    scale_option,
    storage_option,
    study_storage,
)
from study.results.storage import StudyStorage


def _report_dir(study: Study, target: StudyStorage) -> Path:
    """Where the report goes by default: beside the results when local, else ``reports/<study dir>`` here."""
    return target.local_path() / "report" if target.is_local else Path("reports") / study.directory


def report_and_count_failed(study: Study, target: StudyStorage, out: str | None) -> int:
    """The CLI's side of a report: write it (analysis.report.build, reading the results where they live), echo where
    it went and its summary, and return the number of findings checked and failed (the caller's exit status 3)."""
    from analysis.data.meta import MetaError
    from analysis.report.build import build_report
    from analysis.stats.verdicts.evaluate import failed

    require_results(study, target)
    default_out = _report_dir(study, target)
    out_dir = Path(out) if out else default_out
    started = time.time()
    try:
        result = build_report(target.location, out_dir, meta=current_meta(study, target))
    except (MetaError, FileNotFoundError) as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"report: {result.index_html} ({time.time() - started:.1f} s)")
    click.echo(result.summary)
    bad = failed(result.verdicts)
    if bad:
        click.echo(f"{len(bad)} finding(s) checked and failed: exit status {FINDING_FAILED_EXIT}")
    return len(bad)


@click.command()
@click.argument("name")
@scale_option
@storage_option
@click.option("--out", default=None,
              help="Report directory (default: <study dir>/report; for remote storage reports/<study dir>).")
def report(name: str, scale: str, storage: str, out: str | None) -> None:
    """Write the report (PNG grids, curves, tables, index.html) from the results table, read where it lives.

    Exits 3 when a finding that was checked fails (1 on errors).
    """
    study = load_study(name, scale)
    if report_and_count_failed(study, study_storage(study, storage), out):
        sys.exit(FINDING_FAILED_EXIT)
