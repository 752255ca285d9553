"""`study`: list, show, run, check and report hyperparameter studies.

Every error a user can cause (unknown study, bad scale, impossible resources, unusable storage, a study
already running) is one line naming the field, the value and what is allowed, never a trace from Ray.

Exit status (docs/cli.md): 0 done; 1 an error, or `run` left trials failed or unfinished; 2 a usage error
(unknown option, bad choice, a paper-scale study on a machine without GPUs without an explicit
``--scale paper``); 3 a finding that was checked failed (`report`, `run --report`).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import click

from search_spaces import SCALES, Study, StudyError, all_studies, get_study
from study.cli_common import (
    FINDING_FAILED_EXIT,
    MAX_IMPLICIT_CPU_MODELS,
    InputError,
    OneLineErrors,
    current_meta,
    load_study,
    require_results,
    run_scale_option,
    scale_option,
    storage_option,
    study_storage,
)
from study.commands.compact import compact
from study.commands.export import export
from study.commands.findings import findings
from study.commands.verify import verify
from study.storage import StudyStorage, first_line


def _models(study: Study) -> str:
    """``480 trials x 5 seeds = 2400 models`` (what a scale costs, said before anything starts)."""
    trials = study.trial_count()
    return f"{trials} trials x {len(study.seeds)} seeds = {trials * len(study.seeds)} models"


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


def _axis_text(axis: object) -> str:
    from search_spaces.study import Linked
    from study.points import show_value

    if isinstance(axis, Linked):
        return "linked: " + "; ".join(f"{k} -> {dict(v)}" for k, v in axis.options.items())
    if isinstance(axis, tuple):
        return ", ".join(map(show_value, axis))
    return repr(axis)


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Hyperparameter studies of attention mechanisms (Ray Tune + Optuna + Parquet + polars)."""


@main.command("list")
def list_studies() -> None:
    """Every study with its tasks and trial count at each scale."""
    studies = all_studies()
    click.echo(f"{'study':<22} {'tasks':<18} {'paper':>7} {'cpu':>5} {'smoke':>5}  goal")
    for name, study in sorted(studies.items()):
        alias = f" (same trials as {study.name})" if name != study.name else ""
        counts = [study.at_scale(s).trial_count() for s in SCALES]
        goal = study.goal if len(study.goal) < 70 else study.goal[:67] + "..."
        tasks = ",".join(study.tasks) if len(study.tasks) <= 2 else f"{len(study.tasks)} tasks"
        click.echo(f"{name:<22} {tasks:<18} {counts[0]:>7} {counts[1]:>5} {counts[2]:>5}  {goal}{alias}")


@main.command()
@click.argument("name")
@scale_option
def show(name: str, scale: str) -> None:
    """The search space of a study and its trial count per scale (after checking every configuration)."""
    from study.preflight import validate

    study = load_study(name, scale)
    try:
        validate(study)  # an unknown hyperparameter name is an error here too, not only at run time
    except StudyError as error:
        raise InputError(str(error)) from None
    click.echo(f"{study.name}  (scale {study.scale}; results directory {study.directory})")
    click.echo(f"goal: {study.goal}")
    click.echo(f"tasks: {', '.join(study.tasks)}   sampler: {study.sampler}   "
               f"metric: {study.metric} ({study.mode})")
    for title, axes in (("scientific", study.scientific), ("nuisance", study.nuisance)):
        for key, axis in axes.items():
            click.echo(f"  {title:<10} {key}: {_axis_text(axis)}")
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


@main.command()
@click.argument("name")
@run_scale_option
@storage_option
@click.option("--max-concurrent", type=int, default=None, help="Trials at once (default: what fits).")
@click.option("--cpus-per-trial", type=float, default=1.0, show_default=True,
              help="CPUs Ray reserves per trial (also torch's thread count).")
@click.option("--gpus-per-trial", type=float, default=0.0, show_default=True,
              help="GPUs per trial; fractions share a GPU (0.25: four trials per GPU).")
@click.option("--address", default=None, help="Ray cluster address (e.g. auto); default: a local Ray.")
@click.option("--packing", type=click.Choice(["auto", "on", "off"]), default="auto", show_default=True,
              help="Train a configuration's seeds as one packed model (auto: on GPUs, where it pays).")
@click.option("--precision", type=click.Choice(["fp32", "bf16", "fp64"]), default="fp32", show_default=True,
              help="bf16: train and evaluate under bf16 autocast (for GPUs); fp64: float64 throughout (the same "
                   "numbers on any CPU, docs/reproducibility.md); recorded in every row.")
@click.option("--simulated-gpus", is_flag=True,
              help="The cluster's GPUs are simulated (a local test cluster): GPU trials train on the CPU "
                   "where CUDA is missing instead of failing; rows record device cpu.")
@click.option("--report/--no-report", default=False, help="Write the report when the study ends.")
@click.option("--track", "track", multiple=True, metavar="KIND[=TARGET]",
              help="Log every trial live to mlflow[=URI], tensorboard[=DIR] or wandb[=PROJECT] (repeatable; "
                   "docs/tracking.md).")
@click.option("--where", "where", multiple=True, metavar="AXIS=VALUE[,VALUE...]",
              help="Run only the grid points whose AXIS takes one of the values (repeatable: all must hold); "
                   "the trials land in the study's directory (docs/cli.md).")
def run(name: str, scale: str | None, storage: str, max_concurrent: int | None, cpus_per_trial: float,
        gpus_per_trial: float, address: str | None, packing: str, precision: str, simulated_gpus: bool,
        report: bool, track: tuple[str, ...], where: tuple[str, ...]) -> None:
    """Run (or resume) a study: trials already on disk are not run again.

    Exits 1 when trials failed or did not finish, 3 when --report checks a finding that fails.
    """
    study = load_study(name, scale or "paper")
    click.echo(f"{study.name} at scale {study.scale}: {_models(study)}")  # before anything starts
    if scale is None:
        _guard_paper_scale(study, name, address, gpus_per_trial)
    from study.ray_env import ray_environment

    ray_environment(address)  # before Ray is imported
    from study.lock import StudyLock, StudyLocked
    from study.points import parse_where
    from study.preflight import validate
    from study.runner import ClusterError, Resources, run_study
    from study.tracking import TrackError, parse_track, resolve

    target = study_storage(study, storage, must_exist=False)
    try:
        specs = [parse_track(t) for t in track]
        subset = parse_where(study, where)
    except (TrackError, StudyError) as error:
        raise InputError(str(error)) from None
    started = time.time()
    try:
        validate(study)  # before the lock creates the study's directory: a rejected study leaves nothing behind
        resources = Resources(cpus_per_trial=cpus_per_trial, gpus_per_trial=gpus_per_trial,
                              max_concurrent=max_concurrent, packed={"auto": None, "on": True, "off": False}[packing],
                              precision=precision, simulated_gpus=simulated_gpus)
        with StudyLock(target):
            specs = [resolve(spec, study, target) for spec in specs]
            for spec in specs:
                click.echo(f"tracking every trial in {spec.kind}: {spec.target} (docs/tracking.md)")
            counts = run_study(study, target, resources, address=address, echo=click.echo, track=tuple(specs),
                               where=subset)
    except (ClusterError, StudyLocked) as error:  # not the input's fault: exit status 1
        raise click.ClickException(str(error)) from None
    except (StudyError, TrackError) as error:  # a bad study, value, resource request or tracker target
        raise InputError(str(error)) from None
    except OSError as error:  # storage that cannot be reached or written (missing bucket, permissions)
        raise InputError(f"invalid --storage {storage!r}: {first_line(error)}") from None
    click.echo(f"{counts['finished']}/{counts['total']} trials finished, {counts['failed']} failed "
               f"({time.time() - started:.0f} s)")
    failed_findings = _write_report(study, target, None) if report else 0
    if counts["failed"] or counts["finished"] < counts["total"]:
        sys.exit(1)
    if failed_findings:
        sys.exit(FINDING_FAILED_EXIT)


@main.command()
@click.argument("name")
@scale_option
@storage_option
def status(name: str, scale: str, storage: str) -> None:
    """Trials done / running / failed / pending of a study."""
    from analysis.data.machines import run_settings_text
    from analysis.data.meta import recorded_run
    from study.points import trial_points
    from study.progress import PROGRESS_FILE

    study = load_study(name, scale)
    target = study_storage(study, storage)
    total = study.trial_count()
    finished = target.finished_keys()
    if study.sampler == "grid":
        finished &= set(trial_points(study))
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
    for key in sorted(unreadable):
        click.echo(f"  unreadable {target.trial_path(key)} (`study run` moves it aside and reruns it)")
    if running and progress.get("line"):
        click.echo(f"  {progress['line']}")
    for key in sorted(failed):
        info = target.read_json(f"failed/{key}.json") or {}
        last = (info.get("error") or "").strip().splitlines()[-1:] or ["unknown error"]
        click.echo(f"  failed {key}: {last[0]}")
    if unreadable or failed:
        click.echo(f"  INCOMPLETE: a report now would leave out {len(unreadable) + len(failed)} of {total} trials "
                   "and say so beside every number")


def _alive(progress: dict) -> bool:
    import socket

    if progress.get("host") != socket.gethostname():
        return time.time() - float(progress.get("updated", 0)) < 600
    try:
        os.kill(int(progress["pid"]), 0)
    except (OSError, ValueError, KeyError):
        return False
    return True


def _report_dir(study: Study, target: StudyStorage) -> Path:
    """Where the report goes by default: beside the results when local, else ``reports/<study dir>`` here."""
    return target.local_path() / "report" if target.is_local else Path("reports") / study.directory


def _write_report(study: Study, target: StudyStorage, out: str | None) -> int:
    """Write the report (reading the results where they live), echo its summary; return the number of findings
    checked and failed."""
    from analysis.data.meta import MetaError
    from analysis.report.build import build_report
    from analysis.stats.findings import failed

    require_results(study, target)
    default_out = _report_dir(study, target)
    out_dir = Path(out) if out else default_out
    started = time.time()
    try:
        result = build_report(target.location, out_dir, meta=current_meta(study, target))
    except (MetaError, FileNotFoundError) as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"report: {result.index_html} ({time.time() - started:.1f} s)")
    click.echo(result.summary)
    bad = failed(result.verdicts)
    if bad:
        click.echo(f"{len(bad)} finding(s) checked and failed: exit status {FINDING_FAILED_EXIT}")
    return len(bad)


@main.command()
@click.argument("name")
@scale_option
@storage_option
@click.option("--out", default=None,
              help="Report directory (default: <study dir>/report; for remote storage reports/<study dir>).")
def report(name: str, scale: str, storage: str, out: str | None) -> None:
    """Write the report (PNG grids, curves, tables, index.html) from the results table, read where it lives.

    Exits 3 when a finding that was checked fails (1 on errors).
    """
    study = load_study(name, scale)
    if _write_report(study, study_storage(study, storage), out):
        sys.exit(FINDING_FAILED_EXIT)


@main.command("json", hidden=True)
@click.argument("name")
@scale_option
def dump_json(name: str, scale: str) -> None:
    """The study definition as study.json would record it."""
    click.echo(json.dumps(load_study(name, scale).to_json(), indent=1, default=str))


@main.command()
@click.argument("a")
@click.argument("b")
@scale_option
@storage_option
@click.option("--metric", "metrics", multiple=True,
              help="Metric to compare (repeatable; default: val_accuracy and train_accuracy).")
@click.option("--threshold", type=float, default=0.5, show_default=True,
              help="G a configuration must reach to count towards the robustness share.")
@click.option("--all-configs", is_flag=True,
              help="Use each side's whole grid instead of the values both ran.")
@click.option("--out", default=None, help="Also write OUT/index.html, PNG bars and compare.csv.")
def compare(a: str, b: str, scale: str, storage: str, metrics: tuple[str, ...], threshold: float,
            all_configs: bool, out: str | None) -> None:
    """Two studies side by side (A, B: NAME[@SCALE], a study directory, or published[:PAPER/FILE]).

    Per architecture: best G, where, robustness share, and A - B. NAME without @SCALE uses --scale.
    """
    from study.compare import CompareError
    from study.compare import compare as run_compare

    try:
        click.echo(run_compare(a, b, storage=storage, scale=scale, metrics=metrics, threshold=threshold,
                               common=not all_configs, out=out))
    except CompareError as error:  # a side, scale, storage, metric or reference that cannot be used
        raise InputError(str(error)) from None


@main.command()
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


main.add_command(verify)
main.add_command(findings)
main.add_command(compact)
main.add_command(export)

if __name__ == "__main__":
    main()
