"""`study export NAME --to KIND[=TARGET]`: a finished study's results into MLflow, TensorBoard or W&B."""

from __future__ import annotations

import time

import click

from study.cli_common import InputError, load_study, scale_option, storage_option, study_storage


@click.command()
@click.argument("name")
@scale_option
@storage_option
@click.option("--to", "targets", multiple=True, required=True, metavar="KIND[=TARGET]",
              help="mlflow[=URI], tensorboard[=DIR] or wandb[=PROJECT] (repeatable); defaults as `study run --track` "
                   "(docs/tracking.md).")
def export(name: str, scale: str, storage: str, targets: tuple[str, ...]) -> None:
    """Put a study's finished trials (its Parquet rows) into experiment trackers: one run per trial, the same
    series as `study run --track`. Exporting again replaces each trial's earlier run."""
    from study.tracking import TrackError, parse_track, resolve
    from study.tracking.export import export_study

    study = load_study(name, scale)
    target = study_storage(study, storage)
    try:
        specs = [resolve(parse_track(t, "--to"), study, target, "--to") for t in targets]
    except TrackError as error:
        raise InputError(str(error)) from None
    if not target.finished_keys():
        raise click.ClickException(f"no results for study {study.name} (scale {study.scale}) in {target.uri}; "
                                   f"run `study run {study.name} --scale {study.scale}` first")
    started = time.time()
    exported, unreadable = export_study(study, target, specs, echo=click.echo)
    where = ", ".join(f"{s.kind} {s.target}" for s in specs)
    click.echo(f"exported {exported} trials of {study.name} (scale {study.scale}) to {where} "
               f"({time.time() - started:.0f} s)")
    if unreadable:
        click.echo(f"INCOMPLETE: {len(unreadable)} unreadable trial file(s) left out: {', '.join(unreadable)}")
