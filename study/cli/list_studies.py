"""`study list`: every study with its tasks and trial count at each scale."""

from __future__ import annotations

import click

from search_spaces import SCALES, all_studies


@click.command("list")
def list_studies() -> None:
    """Every study with its tasks and trial count at each scale."""
    studies = all_studies()
    tasks = {name: ",".join(s.tasks) if len(s.tasks) <= 2 else f"{len(s.tasks)} tasks" for name, s in studies.items()}
    width = max(22, *(len(name) for name in studies))  # the longest name and tasks keep the columns straight
    wide = max(18, *(len(t) for t in tasks.values()))
    click.echo(f"{'study':<{width}} {'tasks':<{wide}} {'paper':>7} {'cpu':>5} {'smoke':>5}  goal")
    for name, study in sorted(studies.items()):
        alias = f" (same trials as {study.name})" if name != study.name else ""
        counts = [study.at_scale(s).trial_count() for s in SCALES]
        goal = study.goal if len(study.goal) < 70 else study.goal[:67] + "..."
        click.echo(f"{name:<{width}} {tasks[name]:<{wide}} {counts[0]:>7} {counts[1]:>5} {counts[2]:>5}  {goal}{alias}")
