"""`study run NAME`: run or resume a study on a local Ray or a cluster (study/run/runner.py), then print its
findings' verdicts (with ``--report``: write its report, whose summary holds them).

Exits 1 when trials failed or did not finish, 2 on bad input (before Ray starts), 3 when a checked finding fails
(docs/cli.md).
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from core.errors import one_line
from search_spaces import SCALES, Study, StudyError
from study.cli.common import (
    FINDING_FAILED_EXIT,
    MAX_IMPLICIT_CPU_MODELS,
    InputError,
    load_study,
    run_scale_option,
    storage_option,
    study_storage,
)
from study.cli.report import report_and_count_failed
from study.results.storage import StudyStorage, storage_fault

if TYPE_CHECKING:
    from study.trial.resources import Resources


def _models(study: Study) -> str:
    """``480 trials x 5 seeds = 2400 models`` (what a scale costs, said before anything starts; an adaptive budget
    adds what it starts with)."""
    trials = study.trial_count()
    text = f"{trials} trials x {len(study.seeds)} seeds = {trials * len(study.seeds)} models"
    if study.budget == "adaptive" and study.sampler == "grid":
        start = len(study.starting_seeds)
        text += f" at most (adaptive budget: {trials * start} to start, {start} seed(s) per cell)"
    return text


def _local_gpus() -> int:
    """GPUs torch sees on this machine (0 when torch cannot tell)."""
    try:
        import torch

        return int(torch.cuda.device_count())
    except Exception:  # noqa: BLE001 - no usable CUDA runtime means no GPU here
        return 0


def _guard_paper_scale(study: Study, name: str, address: str | None, gpus_per_trial: float) -> None:
    """Refuse a defaulted paper scale that would train many models on a machine without GPUs."""
    models = study.trial_count() * len(study.seeds)
    if (study.scale != "paper" or address or gpus_per_trial > 0
            or models <= MAX_IMPLICIT_CPU_MODELS or _local_gpus() > 0):
        return
    cheaper = ", ".join(f"--scale {s} ({_models(study.at_scale(s)).rsplit('= ', 1)[1]})" for s in SCALES[1:])
    raise click.UsageError(
        f"{name} at the paper scale trains {models} models and this machine has no GPU; "
        f"run it anyway with an explicit --scale paper, or choose {cheaper}")


def _with_budget(study: Study, budget: str | None) -> Study:
    """The study with ``--budget`` (None: its own); an adaptive budget it cannot have is one line, exit 2."""
    if budget is None:
        return study
    try:
        return study.replace(budget=budget)
    except StudyError as error:
        raise InputError(str(error)) from None


#: The options of what each trial asks for and how it trains: one Resources (study.trial.resources) from here on.
_RESOURCE_OPTIONS = (
    click.option("--max-concurrent", type=int, default=None, help="Trials at once (default: what fits)."),
    click.option("--cpus-per-trial", type=float, default=1.0, show_default=True,
                 help="CPUs Ray reserves per trial (also torch's thread count)."),
    click.option("--gpus-per-trial", type=float, default=0.0, show_default=True,
                 help="GPUs per trial; fractions share a GPU (0.25: four trials per GPU)."),
    click.option("--packing", type=click.Choice(["auto", "on", "off"]), default="auto", show_default=True,
                 help="Train a configuration's seeds as one stacked model (auto: each family's default, e.g. on "
                      "GPUs where it pays); a request a family cannot honour is refused or warned about "
                      "(docs/cli.md)."),
    click.option("--precision", type=click.Choice(["fp32", "bf16", "fp64"]), default="fp32", show_default=True,
                 help="bf16: train and evaluate under bf16 autocast (for GPUs); fp64: float64 throughout (the same "
                      "numbers on any CPU, docs/reproducibility.md); recorded in every row."),
    click.option("--compile", "compile_step", type=click.Choice(["auto", "on", "off"]), default="auto",
                 show_default=True,
                 help="Compile each training step (torch.compile; auto: on GPUs, where it pays; off: eager); the "
                      "rows agree within float rounding (docs/gpu.md)."),
    click.option("--simulated-gpus", is_flag=True,
                 help="The cluster's GPUs are simulated (a local test cluster): GPU trials train on the CPU "
                      "where CUDA is missing instead of failing; rows record device cpu."),
)


def resource_options(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with the resource options, which it receives as one ``resources`` (a bad value: one line, exit
    2, before anything starts)."""

    @functools.wraps(command)
    def with_resources(*args: Any, max_concurrent: int | None, cpus_per_trial: float, gpus_per_trial: float,
                       packing: str, precision: str, compile_step: str, simulated_gpus: bool,
                       **kwargs: Any) -> None:
        from study.trial.resources import Resources

        try:
            resources = Resources(cpus_per_trial=cpus_per_trial, gpus_per_trial=gpus_per_trial,
                                  max_concurrent=max_concurrent, packing=packing, precision=precision,
                                  compile=compile_step, simulated_gpus=simulated_gpus)
        except StudyError as error:
            raise InputError(str(error)) from None
        command(*args, resources=resources, **kwargs)

    for option in reversed(_RESOURCE_OPTIONS):
        with_resources = option(with_resources)
    return with_resources


@click.command()
@click.argument("name")
@run_scale_option
@storage_option
@click.option("--address", default=None, help="Ray cluster address (e.g. auto); default: a local Ray.")
@click.option("--report/--no-report", default=False, help="Write the report when the study ends.")
@click.option("--track", "track", multiple=True, metavar="KIND[=TARGET]",
              help="Log every trial live to mlflow[=URI], tensorboard[=DIR] or wandb[=PROJECT] (repeatable; "
                   "docs/tracking.md).")
@click.option("--budget", type=click.Choice(["fixed", "adaptive"]), default=None,
              help="fixed: every cell trains every seed; adaptive: every cell starts with a few seeds, more go only "
                   "where a finding is undecided (docs/budget.md). Default: the study's own.")
@click.option("--where", "where", multiple=True, metavar="AXIS=VALUE[,VALUE...]",
              help="Run only the grid points whose AXIS takes one of the values (repeatable: all must hold); "
                   "the trials land in the study's directory (docs/cli.md).")
@click.option("--learning-rates-per-trial", "rates_per_trial", default="auto", show_default=True,
              metavar="auto|all|N",
              help="Learning rates one trial trains as one stacked model (auto: the grouping of the trials on disk; "
                   "for a new study on GPUs all of a configuration's where its families can, else the study's own); "
                   "kept for the study's life (docs/gpu.md).")
@click.option("--order-by", "order_by", default=None, metavar="AXIS",
              help="Start each round's trials in ascending order of AXIS, a grid axis of numbers (e.g. d_model: the "
                   "smallest models first, so a run cut short has finished whole sizes).")
@resource_options
def run(name: str, scale: str | None, storage: str, address: str | None, report: bool, track: tuple[str, ...],
        budget: str | None, where: tuple[str, ...], rates_per_trial: str, order_by: str | None,
        resources: Resources) -> None:
    """Run (or resume) a study: trials already on disk are not run again.

    Ends with the study's verdicts (its findings checked on the results). Exits 1 when trials failed or did not
    finish, 3 when a checked finding fails.
    """
    study = _with_budget(load_study(name, scale or "paper"), budget)
    click.echo(f"{study.name} at scale {study.scale}: {_models(study)}")  # before anything starts
    if scale is None:
        _guard_paper_scale(study, name, address, resources.gpus_per_trial)
    from study.run.ray_env import ray_environment

    ray_environment(address)  # before Ray is imported
    from study.run.cluster import ClusterError
    from study.run.lock import StudyLock, StudyLocked
    from study.run.packing import check_packing
    from study.run.points import parse_where
    from study.run.rate_grouping import group_rates, parse_rates_per_trial
    from study.run.runner import check_order_by, prepare, run_study
    from study.tracking import TrackError, parse_track, resolve

    target = study_storage(study, storage, must_exist=False)
    started = time.time()
    try:
        specs = [parse_track(t) for t in track]
        subset = parse_where(study, where)
        study = group_rates(study, parse_rates_per_trial(rates_per_trial), resources, target, click.echo, subset)
        # Before the lock creates the study's directory: a rejected study leaves nothing behind.
        strategy = prepare(study, subset, click.echo)
        check_order_by(study, order_by)
        check_packing(study, resources.packing, gpus_per_trial=resources.gpus_per_trial,
                      simulated_gpus=resources.simulated_gpus, where=subset, echo=click.echo)
        with StudyLock(target):
            specs = [resolve(spec, study, target) for spec in specs]
            for spec in specs:
                click.echo(f"tracking every trial in {spec.kind}: {spec.target} (docs/tracking.md)")
            counts = run_study(study, target, resources, address=address, echo=click.echo, track=tuple(specs),
                               where=subset, strategy=strategy, order_by=order_by)
    except (ClusterError, StudyLocked) as error:  # not the input's fault: exit status 1
        raise click.ClickException(str(error)) from None
    except (StudyError, TrackError) as error:  # a bad study, value, resource request or tracker target
        raise InputError(str(error)) from None
    except OSError as error:  # storage that cannot be made, written or reached: says which; else not the input's
        fault = storage_fault(storage, error)
        if fault is None:
            raise click.ClickException(one_line(error)) from None
        raise InputError(str(fault)) from None
    click.echo(f"{counts['finished']}/{counts['total']} trials finished, {counts['failed']} failed "
               f"({time.time() - started:.0f} s)")
    failed_findings = _verdicts(study, target, report, counts["finished"])
    if counts["failed"] or counts["finished"] < counts["total"]:
        sys.exit(1)
    if failed_findings:
        sys.exit(FINDING_FAILED_EXIT)


def _verdicts(study: Study, target: StudyStorage, report: bool, counts_finished: int) -> int:
    """The study's verdicts at the end of every run (in its report's summary with ``--report``); returns how many
    checked findings failed (none when no trial has finished)."""
    if report:
        return report_and_count_failed(study, target, None)
    if not study.findings or not counts_finished:
        return 0
    from study.cli.findings import echo_verdicts, run_verdicts

    return echo_verdicts(*run_verdicts(study, target))
