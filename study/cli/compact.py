"""`study compact NAME`: fold a study's trial files on disk into its results table (study/results/table.py).

What `study run` does as it goes, for a study on disk: an old study of one file per trial, or one whose driver
was killed in the middle of a fold. Safe to run again at any time; it holds the study's lock (local storage), so
it never folds beside a running `study run` of the same study.
"""

from __future__ import annotations

import click

from study.cli.common import load_study, require_results, scale_option, storage_option, study_storage


@click.command()
@click.argument("name")
@scale_option
@storage_option
def compact(name: str, scale: str, storage: str) -> None:
    """Fold the study's finished trial files into its results table (table/), then delete them."""
    from study.results.table import FoldError, fold
    from study.run.lock import StudyLock, StudyLocked

    study = load_study(name, scale)
    target = study_storage(study, storage)
    require_results(study, target)
    try:
        with StudyLock(target):
            result = fold(target.location)
    except (StudyLocked, FoldError) as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"{study.name} (scale {study.scale}) in {target.uri}")
    click.echo(result.line())
    for path in result.unreadable:
        click.echo(f"  unreadable {path} (left in place; `study run` moves it aside and reruns the trial)")
