"""`study`: list, show, run, check and report hyperparameter studies.

The click group lives here; every subcommand is a module of its own in this package (``study run`` is
``study/cli/run.py``), imported when it runs (or when ``--help`` lists them), so a command starts without
importing what the others need. What they share (options, lookups, exit statuses) is ``study/cli/common.py``.

Every error a user can cause (unknown study, bad scale, impossible resources, unusable storage, a study
already running) is one line naming the field, the value and what is allowed, never a trace from Ray.

Exit status (docs/cli.md): 0 done; 1 an error, or `run` left trials failed or unfinished; 2 a usage error
(unknown option, bad choice, a paper-scale study on a machine without GPUs without an explicit
``--scale paper``); 3 a checked claim failed (a finding of `report`, `run`, `findings`; a trial that
`verify` did not reproduce).
"""

from __future__ import annotations

import importlib

import click

from study.cli.common import OneLineErrors

#: Subcommand -> ``module:attribute`` of this package holding its click command.
COMMANDS: dict[str, str] = {
    "list": "list_studies:list_studies",
    "show": "show:show",
    "run": "run:run",
    "status": "status:status",
    "report": "report:report",
    "findings": "findings:findings",
    "compare": "compare:compare",
    "reproduction": "reproduction:reproduction",
    "importance": "importance:importance",
    "verify": "verify:verify",
    "compact": "compact:compact",
    "export": "export:export",
    "json": "dump_json:dump_json",
}


class StudyCommands(OneLineErrors):
    """The `study` group: its subcommands are found in :data:`COMMANDS` and imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute = COMMANDS[name].split(":")
        command: click.Command = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
        return command


@click.group(cls=StudyCommands, context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Hyperparameter studies of attention mechanisms (Ray Tune + Optuna + Parquet + polars)."""


def command_line() -> None:
    """The `study` executable (and ``python -m study.cli``): :func:`main`, then every exit step Python takes (other
    threads joined, atexit handlers: Ray's shutdown, logging's flush, finalizers) except its last, the teardown of
    every module, which takes 2.3 s of each command on a 2-core machine once torch and Ray are loaded and writes
    nothing (every file the commands write is closed before they return)."""
    import atexit
    import os
    import sys
    import threading

    try:
        main()
        status: object = 0
    except SystemExit as done:
        status = done.code
    if status is None or isinstance(status, int):
        code = status or 0
    else:  # sys.exit("message"): Python prints it and exits 1
        print(status, file=sys.stderr)
        code = 1
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
