"""What every `study` command shares: the options, the study and storage lookups, the exit statuses.

Every subcommand (one module each in this package, found by name in ``study/cli/__init__.py``) imports these.
"""

from __future__ import annotations

from typing import Any

import click

from core.errors import OneLineError
from search_spaces import SCALES, Study, StudyError, get_study
from search_spaces.record import StudyRecord
from study.results.storage import StorageError, StudyStorage

DEFAULT_STORAGE = "results"
#: Exit status when a finding that was checked fails (1 is an error, 2 bad input).
FINDING_FAILED_EXIT = 3
#: Without GPUs, a study whose paper scale trains more models than this needs an explicit --scale paper.
MAX_IMPLICIT_CPU_MODELS = 100


class InputError(click.ClickException):
    """Bad input (an unknown name, a bad value, unusable storage): one line naming the field, the value and what
    is allowed, exit status 2 (docs/cli.md). Errors that are not the input's fault stay ClickException (1)."""

    exit_code = 2


def load_study(name: str, scale: str) -> Study:
    """The study `name` at `scale`; an unknown name or a study file that cannot be imported is an InputError."""
    try:
        return get_study(name, scale)
    except StudyError as error:
        raise InputError(str(error)) from None


def study_storage(study: Study, storage: str, *, must_exist: bool = True) -> StudyStorage:
    """The study's storage; unless ``must_exist`` is False (run creates it), unusable storage is an error (an
    invalid URI always is: bad input, one line, exit status 2)."""
    target = StudyStorage(storage=storage, directory=study.directory)
    try:
        target.check_readable() if must_exist else target.check_uri()
    except StorageError as error:
        raise InputError(str(error)) from None
    return target


def as_recorded(study: Study, target: StudyStorage) -> Study:
    """The study with the learning-rate grouping its results were trained with (study.json: `study run
    --learning-rates-per-trial`, e.g. all rates of a configuration in one trial on GPUs): the trial keys on disk are
    that grouping's."""
    from study.run.strategies import read_record

    record = read_record(target)
    if record is None or record.learning_rates_per_trial == study.learning_rates_per_trial:
        return study
    return study.replace(learning_rates_per_trial=record.learning_rates_per_trial)


def current_meta(study: Study, target: StudyStorage) -> StudyRecord:
    """The results' recorded study.json with the study's findings as its definition states them now: a finding
    added or re-argued after the run is checked on the rows already there (`study report` and `study findings`
    alike; a report built from a bare directory keeps what study.json recorded)."""
    from analysis.data.meta import MetaError, read_study_meta

    try:
        recorded = read_study_meta(target.location)
        return recorded.replace(findings=study.findings)
    except (MetaError, FileNotFoundError) as error:
        raise click.ClickException(str(error)) from None
    except StudyError as error:  # today's findings name something the recorded study does not have
        raise InputError(f"study {study.name}'s findings do not fit its results' record: {error}") from None


class OneLineErrors(click.Group):
    """The `study` group: every error is one line (``Error: ...``, no usage block) with its exit status: 2 for
    bad input (click's own checks of options and arguments included), 1 for other errors (docs/cli.md). One of
    this project's own errors (:class:`core.errors.OneLineError`) that a command lets through is printed the same
    way, with the exit status its class gives."""

    def main(self, *args: Any, **kwargs: Any) -> Any:  # click's signature
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.ClickException as error:
            usage = error.ctx if isinstance(error, click.UsageError) else None
            hint = f" (see `{usage.command_path} --help`)" if usage is not None else ""
            click.echo(f"Error: {error.format_message()}{hint}", err=True)
            raise SystemExit(error.exit_code) from None
        except OneLineError as error:
            click.echo(f"Error: {error}", err=True)
            raise SystemExit(error.exit_code) from None
        except click.Abort:
            click.echo("Aborted!", err=True)
            raise SystemExit(1) from None


def require_results(study: Study, target: StudyStorage) -> None:
    """Fail with the command to run when the study has neither a results table nor a trial file."""
    location = target.location
    if not location.exists("table/_delta_log") and not location.list_files("trials", ".parquet"):
        raise click.ClickException(f"no results for study {study.name} (scale {study.scale}) in "
                                   f"{target.uri}; run `study run {study.name} --scale {study.scale}` first")


scale_option = click.option("--scale", type=click.Choice(SCALES), default="paper", show_default=True,
                            help="paper: the published scale; cpu: laptop hours; smoke: seconds.")
run_scale_option = click.option(
    "--scale", type=click.Choice(SCALES), default=None,
    help="paper (the default): the published scale; cpu: laptop hours; smoke: seconds. Without GPUs a paper "
         f"scale over {MAX_IMPLICIT_CPU_MODELS} models must be asked for explicitly.")
storage_option = click.option("--storage", default=DEFAULT_STORAGE, show_default=True,
                              help="Results root: a directory or a URI pyarrow and Ray Tune reach.")
