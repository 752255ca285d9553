"""`study export NAME --to KIND[=TARGET]`: a finished study's Parquet rows into MLflow, TensorBoard or W&B, through the
same series as `study run --track` (study/tracking/)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import click

from search_spaces.study import Study
from study.cli.common import load_study, scale_option, storage_option, study_storage
from study.results.storage import StudyStorage
from study.run.journal import point_from_rows
from study.tracking import TrackSpec, TrialTracking
from study.trial.trainable import trial_params


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
    from study.tracking import parse_track, resolve

    study = load_study(name, scale)
    target = study_storage(study, storage)
    specs = [resolve(parse_track(t, "--to"), study, target, "--to") for t in targets]  # a TrackError: exit 2
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
