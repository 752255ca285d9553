"""`study list`: every study with its tasks and trial count at each scale."""

from __future__ import annotations

import click

from search_spaces import SCALES, all_studies


@click.command("list")
def list_studies() -> None:
    """Every study with its tasks and trial count at each scale."""
    studies = all_studies()
    width = max(22, *(len(name) for name in studies))  # the longest name keeps the columns straight
    click.echo(f"{'study':<{width}} {'tasks':<18} {'paper':>7} {'cpu':>5} {'smoke':>5}  goal")
    for name, study in sorted(studies.items()):
        alias = f" (same trials as {study.name})" if name != study.name else ""
        counts = [study.at_scale(s).trial_count() for s in SCALES]
        goal = study.goal if len(study.goal) < 70 else study.goal[:67] + "..."
        tasks = ",".join(study.tasks) if len(study.tasks) <= 2 else f"{len(study.tasks)} tasks"
        click.echo(f"{name:<{width}} {tasks:<18} {counts[0]:>7} {counts[1]:>5} {counts[2]:>5}  {goal}{alias}")
