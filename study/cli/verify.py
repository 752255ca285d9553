"""`study verify NAME [--trials N] [--seed S]`: are a study's numbers reproducible here? (study/run/reproduce.py)"""

from __future__ import annotations

import sys
import time

import click

from study.cli.common import (
    FINDING_FAILED_EXIT,
    InputError,
    as_recorded,
    load_study,
    scale_option,
    storage_option,
    study_storage,
)
from study.run.points import point_text

#: Exit status when a re-run trial does not reproduce (the same as a finding that failed: a checked claim).
NOT_REPRODUCED_EXIT = FINDING_FAILED_EXIT


def _largest_text(largest: dict[str, float]) -> str:
    top = sorted(largest.items(), key=lambda kv: -kv[1])[:4]
    return "; largest differences: " + ", ".join(f"{c} {d:.2g}" for c, d in top) if top else ""


@click.command()
@click.argument("name")
@scale_option
@storage_option
@click.option("--trials", type=int, default=3, show_default=True, help="How many finished trials to train again.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random choice of trials.")
def verify(name: str, scale: str, storage: str, trials: int, seed: int) -> None:
    """Train N finished trials again (in a scratch directory) and compare their rows with the recorded ones.

    Per trial: identical, within rounding, within seed noise (another machine) or different, with the largest
    difference per metric and whether this machine is the one that ran it. Exits 3 unless every trial is
    identical (same machine) or within rounding / seed noise (another machine); docs/reproducibility.md.
    """
    from study.run.reproduce import verify_study

    if trials < 1:
        raise InputError(f"invalid --trials {trials}; allowed: an integer >= 1")
    study = load_study(name, scale)
    target = study_storage(study, storage)
    study = as_recorded(study, target)
    click.echo(f"verify {study.name} (scale {study.scale}) in {target.uri}: {trials} trial(s) chosen with seed "
               f"{seed}")
    started = time.time()
    try:
        checks = verify_study(study, target, trials=trials, seed=seed)
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    for check in checks:
        where = ("same machine" if check.same_machine
                 else f"other machine: ran on {check.recorded_machine}; here {check.here}")
        mark = "ok  " if check.passed else "FAIL"
        why = f"; {check.why}" if check.why else ""
        click.echo(f"  {mark} {check.key} {point_text(check.point)}: {check.verdict} ({where}){why}"
                   f"{_largest_text(check.largest)}")
    bad = [c for c in checks if not c.passed]
    click.echo(f"{len(checks) - len(bad)} of {len(checks)} trial(s) reproduced ({time.time() - started:.0f} s)")
    if bad:
        click.echo(f"{len(bad)} trial(s) not reproduced: exit status {NOT_REPRODUCED_EXIT}")
        sys.exit(NOT_REPRODUCED_EXIT)
