"""`study show NAME`: a study's search space, trial counts per scale and deviations, after checking every
configuration (study/run/preflight.py)."""

from __future__ import annotations

import click

from search_spaces import SCALES, get_study
from study.cli.common import load_study, scale_option
from trainables.plugins import user_plugins


@click.command()
@click.argument("name")
@scale_option
def show(name: str, scale: str) -> None:
    """The search space of a study and its trial count per scale (after checking every configuration)."""
    from study.run.preflight import validate

    study = load_study(name, scale)
    validate(study)  # an unknown hyperparameter name is a StudyError here too (exit 2), not only at run time
    click.echo(f"{study.name}  (scale {study.scale}; results directory {study.directory})")
    click.echo(f"goal: {study.goal}")
    click.echo(f"tasks: {', '.join(study.tasks)}   sampler: {study.sampler}   "
               f"metric: {study.metric} ({study.mode})")
    for plugin in user_plugins():  # the study file, its plugins, installed packages' entry points
        click.echo(f"  plugin {plugin.label} ({plugin.origin}, {plugin.path}): "
                   f"{', '.join(plugin.registered) or 'registers nothing'}")
    for title, axes in (("scientific", study.scientific), ("nuisance", study.nuisance)):
        for key, axis in axes.items():
            click.echo(f"  {title:<10} {key}: {axis.describe()}")
    for key, value in study.fixed.items():
        click.echo(f"  {'fixed':<10} {key}: {value}")
    if study.label_names:
        click.echo(f"  labels: {', '.join(study.label_names)} (columns of the study's own, not model hyperparameters)")
    click.echo(f"  seeds: {', '.join(map(str, study.seeds))}")
    for s in SCALES:
        scaled = study.at_scale(s) if study.scale == "paper" else get_study(name, s)
        click.echo(f"  trials at {s:<5}: {scaled.trial_count():>6} ({scaled.trial_count() * len(scaled.seeds)} "
                   f"models)")
    if study.aliases:
        click.echo(f"also reproduces: {', '.join(study.aliases)}")
    for deviation in study.deviations:
        click.echo(f"  deviation: {deviation}")
