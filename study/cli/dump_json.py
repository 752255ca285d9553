"""`study json NAME` (hidden): the study definition as study.json records it."""

from __future__ import annotations

import json

import click

from study.cli.common import load_study, scale_option


@click.command("json", hidden=True)
@click.argument("name")
@scale_option
def dump_json(name: str, scale: str) -> None:
    """The study definition as study.json would record it."""
    click.echo(json.dumps(load_study(name, scale).to_json(), indent=1, default=str))
