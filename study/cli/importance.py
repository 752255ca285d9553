"""`study importance NAME`: which hyperparameter matters, per panel value (Optuna's importance evaluators)."""

from __future__ import annotations

import click

from study.cli.common import InputError, load_study, scale_option, storage_option, study_storage


@click.command()
@click.argument("name")
@scale_option
@storage_option
@click.option("--metric", default=None, help="Metric whose G is explained (default: the study's metric).")
@click.option("--evaluator", type=click.Choice(["ped-anova", "fanova", "mean-decrease-impurity"]),
              default="ped-anova", show_default=True,
              help="Optuna importance evaluator (fanova and mean-decrease-impurity need scikit-learn).")
def importance(name: str, scale: str, storage: str, metric: str | None, evaluator: str) -> None:
    """Which hyperparameter matters, per architecture: Optuna's importance over the study's finished trials."""
    from analysis.data.meta import MetaError, read_study_meta
    from analysis.data.rows import open_trials
    from analysis.stats.importance import format_importances, importances
    from analysis.stats.training_stats import plot_axes

    study = load_study(name, scale)
    target = study_storage(study, storage)
    scan = open_trials(target.location)
    if scan.lf is None:
        raise click.ClickException(f"no readable results for study {study.name} (scale {study.scale}) in "
                                   f"{target.uri}; run `study run {study.name} --scale {study.scale}` first")
    try:
        meta = read_study_meta(target.location)
        panel = plot_axes(meta, scan.lf.collect_schema().names())[0]
    except (MetaError, FileNotFoundError) as error:
        raise click.ClickException(str(error)) from None
    try:
        table = importances(scan.lf, meta, panel=panel, metric=metric, evaluator=evaluator)
    except ValueError as error:  # an unknown --metric, an evaluator that needs scikit-learn
        raise InputError(str(error)) from None
    click.echo(f"{study.name} (scale {study.scale}): importance of each hyperparameter for the best G of "
               f"{metric or meta.metric} per {panel} ({evaluator}; sums to 1 per {panel})")
    for line in format_importances(table, panel):
        click.echo(line)
    if scan.unreadable:
        click.echo(f"INCOMPLETE: computed without {len(scan.unreadable)} unreadable trial file(s): "
                   + ", ".join(str(p) for p in scan.unreadable))
