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
    from study.results.table import fold
    from study.run.lock import StudyLock

    study = load_study(name, scale)
    target = study_storage(study, storage)
    require_results(study, target)
    with StudyLock(target):  # StudyLocked, FoldError: one line, exit status 1 (the CLI's OneLineError)
        result = fold(target.location)
    click.echo(f"{study.name} (scale {study.scale}) in {target.uri}")
    click.echo(result.line())
    for path in result.unreadable:
        click.echo(f"  unreadable {path} (left in place; `study run` moves it aside and reruns the trial)")
