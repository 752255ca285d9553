"""``python -m study.cli``: the `study` command."""

from study.cli import command_line

command_line()
