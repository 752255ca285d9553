"""`study status NAME`: how many trials are done, running, failed, unreadable and pending."""

from __future__ import annotations

import os
import time
from typing import Any

import click

from core.errors import one_line
from study.cli.common import as_recorded, load_study, scale_option, storage_option, study_storage


@click.command()
@click.argument("name")
@scale_option
@storage_option
def status(name: str, scale: str, storage: str) -> None:
    """Trials done / running / failed / pending of a study."""
    from analysis.data.machines import run_settings_text
    from analysis.data.meta import recorded_run
    from study.run.adaptive import budget_trials
    from study.run.points import trial_points
    from study.run.progress import PROGRESS_FILE
    from study.run.strategies import GridStrategy, read_record
    from study.trial.spec import Trial

    study = load_study(name, scale)
    target = study_storage(study, storage)
    study = as_recorded(study, target)
    total = study.trial_count()
    finished = target.finished_keys()
    record = read_record(target)
    looks = record.looks_taken if record is not None else ()
    # the budget the study last ran with (`study run --budget adaptive` on a fixed study records it), else its own
    budget = record.budget if record is not None else study.budget
    if study.sampler == "grid" and budget == "adaptive":  # the trials the budget has given so far
        given = {k for cell in budget_trials(study, record).values() for k in cell}
        total, finished = len(given), finished & given
    elif study.sampler == "grid":  # a point with every seed, in one trial or (after an adaptive budget) in several
        plan = GridStrategy().plan(study, target, record)
        done = set(trial_points(study)) - {Trial.every_seed(study, t.point).key(study) for t in plan.todo}
        finished = done if looks else finished & done
    failed = target.failed_keys()
    unreadable = target.corrupt_keys() & finished
    finished -= unreadable
    progress = target.read_json(PROGRESS_FILE) or {}
    running: list[str] = []
    if progress.get("running") and _alive(progress):
        running = [k for k in progress["running"] if k not in finished]
    pending = max(0, total - len(finished) - len(failed) - len(running) - len(unreadable))
    click.echo(f"{study.name} (scale {study.scale}) in {target.uri}")
    click.echo(f"  done {len(finished)} | running {len(running)} | failed {len(failed)} | "
               f"unreadable {len(unreadable)} | pending {pending} | total {total}")
    click.echo(f"  {run_settings_text(recorded_run(target.location))}")
    if looks:
        last = looks[-1]
        open_ = sum(s == "UNDECIDED" for s in last.statuses)
        every = len(list(study.points())) * len(study.seeds)
        click.echo(f"  adaptive budget: {len(looks)} of {study.replace(budget='adaptive').looks} looks taken, "
                   f"{last.models} models given of the full grid's {every:,}; {open_} of "
                   f"{len(last.statuses)} finding(s) undecided at the last look")
    for key in sorted(unreadable):
        click.echo(f"  unreadable {target.trial_path(key)} (`study run` moves it aside and reruns it)")
    if running and progress.get("line"):
        click.echo(f"  {progress['line']}")
    for key in sorted(failed):
        info = target.read_json(f"failed/{key}.json") or {}
        click.echo(f"  failed {key}: {one_line(info.get('error') or '') or 'unknown error'}")
    if unreadable or failed:
        click.echo(f"  INCOMPLETE: a report now would leave out {len(unreadable) + len(failed)} of {total} trials "
                   "and say so beside every number")


def _alive(progress: dict[str, Any]) -> bool:
    import socket

    if progress.get("host") != socket.gethostname():
        return time.time() - float(progress.get("updated", 0)) < 600
    try:
        os.kill(int(progress["pid"]), 0)
    except (OSError, ValueError, KeyError):
        return False
    return True
