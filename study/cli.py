"""`study`: list, show, run, check and report hyperparameter studies.

Every error a user can cause (unknown study, bad scale, impossible resources, a study already
running) is one line naming the field, the value and what is allowed, never a trace from Ray.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import click

from search_spaces import SCALES, Study, StudyError, all_studies, get_study
from study.storage import StudyStorage

DEFAULT_STORAGE = "results"


def _study(name: str, scale: str) -> Study:
    try:
        return get_study(name, scale)
    except StudyError as error:
        raise click.ClickException(str(error)) from None


def _storage(study: Study, storage: str) -> StudyStorage:
    return StudyStorage(storage=storage, directory=study.directory)


def _axis_text(axis: object) -> str:
    from search_spaces.study import Linked

    if isinstance(axis, Linked):
        return "linked: " + "; ".join(f"{k} -> {dict(v)}" for k, v in axis.options.items())
    if isinstance(axis, tuple):
        return ", ".join(f"{v:.3g}" if isinstance(v, float) else str(v) for v in axis)
    return repr(axis)


scale_option = click.option("--scale", type=click.Choice(SCALES), default="paper", show_default=True,
                            help="paper: the published scale; cpu: a laptop hour; smoke: seconds.")
storage_option = click.option("--storage", default=DEFAULT_STORAGE, show_default=True,
                              help="Results root: a directory or a URI pyarrow and Ray Tune reach.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Hyperparameter studies of attention mechanisms (Ray Tune + Optuna + Parquet + polars)."""


@main.command("list")
def list_studies() -> None:
    """Every study with its task and trial count at each scale."""
    studies = all_studies()
    click.echo(f"{'study':<22} {'task':<18} {'paper':>7} {'cpu':>5} {'smoke':>5}  goal")
    for name, study in sorted(studies.items()):
        alias = f" (same trials as {study.name})" if name != study.name else ""
        counts = [study.at_scale(s).trial_count() for s in SCALES]
        goal = study.goal if len(study.goal) < 70 else study.goal[:67] + "..."
        click.echo(f"{name:<22} {study.task:<18} {counts[0]:>7} {counts[1]:>5} {counts[2]:>5}  {goal}{alias}")


@main.command()
@click.argument("name")
@scale_option
def show(name: str, scale: str) -> None:
    """The search space of a study and its trial count per scale (after checking every configuration)."""
    from study.validate import validate

    study = _study(name, scale)
    try:
        validate(study)  # an unknown hyperparameter name is an error here too, not only at run time
    except StudyError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"{study.name}  (scale {study.scale}; results directory {study.directory})")
    click.echo(f"goal: {study.goal}")
    click.echo(f"task: {study.task}   kind: {study.kind}   sampler: {study.sampler}   "
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
@scale_option
@storage_option
@click.option("--max-concurrent", type=int, default=None, help="Trials at once (default: what fits).")
@click.option("--cpus-per-trial", type=float, default=1.0, show_default=True,
              help="CPUs Ray reserves per trial (also torch's thread count).")
@click.option("--gpus-per-trial", type=float, default=0.0, show_default=True,
              help="GPUs per trial; fractions share a GPU (0.25: four trials per GPU).")
@click.option("--address", default=None, help="Ray cluster address (e.g. auto); default: a local Ray.")
@click.option("--packing", type=click.Choice(["auto", "on", "off"]), default="auto", show_default=True,
              help="Train a configuration's seeds as one packed model (auto: on GPUs, where it pays).")
@click.option("--precision", type=click.Choice(["fp32", "bf16"]), default="fp32", show_default=True,
              help="bf16: train and evaluate under bf16 autocast (for GPUs); recorded in every row.")
@click.option("--simulated-gpus", is_flag=True,
              help="The cluster's GPUs are simulated (a local test cluster): GPU trials train on the CPU "
                   "where CUDA is missing instead of failing; rows record device cpu.")
@click.option("--report/--no-report", default=False, help="Write the report when the study ends.")
def run(name: str, scale: str, storage: str, max_concurrent: int | None, cpus_per_trial: float,
        gpus_per_trial: float, address: str | None, packing: str, precision: str, simulated_gpus: bool,
        report: bool) -> None:
    """Run (or resume) a study: trials already on disk are not run again."""
    from study.ray_env import ray_environment

    ray_environment(address)  # before Ray is imported
    from study.lock import StudyLock, StudyLocked
    from study.runner import Resources, run_study
    from study.validate import validate

    study = _study(name, scale)
    target = _storage(study, storage)
    started = time.time()
    try:
        validate(study)  # before the lock creates the study's directory: a rejected study leaves nothing behind
        resources = Resources(cpus_per_trial=cpus_per_trial, gpus_per_trial=gpus_per_trial,
                              max_concurrent=max_concurrent, packed={"auto": None, "on": True, "off": False}[packing],
                              precision=precision, simulated_gpus=simulated_gpus)
        with StudyLock(target):
            counts = run_study(study, target, resources, address=address, echo=click.echo)
    except (StudyError, StudyLocked) as error:
        raise click.ClickException(str(error)) from None
    except OSError as error:  # storage that cannot be reached or written (missing bucket, permissions)
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise click.ClickException(f"invalid --storage {storage!r}: {message}") from None
    click.echo(f"{counts['finished']}/{counts['total']} trials finished, {counts['failed']} failed "
               f"({time.time() - started:.0f} s)")
    if report:
        _write_report(study, target, None)
    if counts["failed"] or counts["finished"] < counts["total"]:
        sys.exit(1)


@main.command()
@click.argument("name")
@scale_option
@storage_option
def status(name: str, scale: str, storage: str) -> None:
    """Trials done / running / failed / pending of a study."""
    from study.progress import PROGRESS_FILE
    from study.runner import trial_points

    study = _study(name, scale)
    target = _storage(study, storage)
    total = study.trial_count()
    finished = target.finished_keys()
    if study.sampler == "grid":
        finished &= set(trial_points(study))
    failed = target.failed_keys()
    corrupt = target.corrupt_keys() & finished
    finished -= corrupt
    progress = target.read_json(PROGRESS_FILE) or {}
    running: list[str] = []
    if progress.get("running") and _alive(progress):
        running = [k for k in progress["running"] if k not in finished]
    pending = max(0, total - len(finished) - len(failed) - len(running) - len(corrupt))
    click.echo(f"{study.name} (scale {study.scale}) in {target.uri}")
    click.echo(f"  done {len(finished)} | running {len(running)} | failed {len(failed)} | "
               f"corrupt {len(corrupt)} | pending {pending} | total {total}")
    for key in sorted(corrupt):
        click.echo(f"  corrupt {target.trial_path(key)} (unreadable; `study run` moves it aside and reruns it)")
    if running and progress.get("line"):
        click.echo(f"  {progress['line']}")
    for key in sorted(failed):
        info = target.read_json(f"failed/{key}.json") or {}
        last = (info.get("error") or "").strip().splitlines()[-1:] or ["unknown error"]
        click.echo(f"  failed {key}: {last[0]}")


def _alive(progress: dict) -> bool:
    import socket

    if progress.get("host") != socket.gethostname():
        return time.time() - float(progress.get("updated", 0)) < 600
    try:
        os.kill(int(progress["pid"]), 0)
    except (OSError, ValueError, KeyError):
        return False
    return True


def _write_report(study: Study, target: StudyStorage, out: str | None) -> Path:
    from analysis.report import write_report

    if target.is_local:
        study_dir = target.local_path()
        default_out = study_dir / "report"
    else:  # remote storage: analyse a local copy of the (small) result files
        default_out = Path("reports") / study.directory
        study_dir = target.download(default_out / "data")
    if not any((study_dir / "trials").glob("*.parquet")):
        raise click.ClickException(f"no results for study {study.name} (scale {study.scale}) in "
                                   f"{target.uri}; run `study run {study.name} --scale {study.scale}` first")
    out_dir = Path(out) if out else default_out
    started = time.time()
    index = write_report(study_dir, out_dir)
    click.echo(f"report: {index} ({time.time() - started:.1f} s)")
    summary = out_dir / "summary.txt"
    if summary.exists():
        click.echo(summary.read_text().rstrip())
    return index


@main.command()
@click.argument("name")
@scale_option
@storage_option
@click.option("--out", default=None, help="Report directory (default: <study dir>/report).")
def report(name: str, scale: str, storage: str, out: str | None) -> None:
    """Write the report (PNG grids, curves, tables, index.html) from the Parquet results."""
    study = _study(name, scale)
    _write_report(study, _storage(study, storage), out)


@main.command("json", hidden=True)
@click.argument("name")
@scale_option
def dump_json(name: str, scale: str) -> None:
    """The study definition as study.json would record it."""
    click.echo(json.dumps(_study(name, scale).to_json(), indent=1, default=str))


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
    except CompareError as error:
        raise click.ClickException(str(error)) from None


if __name__ == "__main__":
    main()
