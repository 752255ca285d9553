"""This project's errors: their one base class, and the one formatter that turns an exception into one line.

:class:`OneLineError` is the base of every error this project raises on purpose (a bad study, unusable storage, a
tracker that cannot be used, Ray that cannot start ...): its message is already the one line that names the field,
the value and what is allowed, and the ``study`` command prints it as ``Error: <message>`` with its
:attr:`~OneLineError.exit_code` (docs/cli.md). Each class keeps the builtin base code relies on
(``StudyError(OneLineError, ValueError)``, ``StorageError(OneLineError, OSError)``).

:func:`one_line` is the one formatter behind every one-line error (the CLI's ``Error: ...``, preflight's refusal, a
failed trial's line, a plugin that cannot be imported, a bad ``--storage``): it gives ``TypeError: weights() takes
3 positional arguments but 4 were given``; with ``at=True`` it names the innermost frame of *your* code first:
``at my_mixers.py:42: TypeError: ...``. Your code is every frame that is not Python's standard library, not a
library this project runs on (torch, numpy, Ray ...: installed packages other than your plugins), not the
orchestration package ``study/``, not ``core/`` and not the floor that imports and registers plugins or checks a
study's schema (:data:`_PLUMBING`): a mixer, a task, a model family (this project's own under ``trainables/`` too),
a study file and the modules it imports. No project import here: every package may use it.
"""
from __future__ import annotations

import os
import re
import sys
import sysconfig
import traceback
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
#: Modules of this project whose frames are never "yours": they run your code, they do not contain it.
_PLUMBING = ("study", "core", "trainables/plugins.py", "trainables/catalog.py",
             "search_spaces/__init__.py", "search_spaces/schema.py", "search_spaces/axes.py",
             "search_spaces/finding.py", "search_spaces/study.py", "search_spaces/record.py")
#: This project's packages that count as your code even where installed as a library (not in editable mode).
_PROJECT_CODE = ("trainables", "search_spaces", "analysis")
#: Top-level packages of your plugins (trainables.plugins adds each one it imports): your code even where installed.
YOUR_PACKAGES: set[str] = set()
_INSTALLED = ("site-packages", "dist-packages")
#: The last line of a message that carries a whole (remote) traceback, e.g. Ray's ``...\nValueError: a bug``.
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)(\([\w.]+\))?(:\s|$)")


class OneLineError(Exception):
    """The base of this project's own errors: the message is one line naming the field, the value and what is
    allowed. The ``study`` command prints ``Error: <message>`` and exits with :attr:`exit_code`."""

    #: 2: bad input (the default: an unknown name, a bad value, unusable storage); 1: not the input's fault.
    exit_code = 2


def one_line(error: BaseException | str, *, at: bool = False, typed: bool = True) -> str:
    """``ValueError: <the message's first line>``: an exception as one line, as Python names it (a type outside the
    builtins by its module: ``study.trial.devices.DeviceError``).

    A message that ends with a traceback's last line (an error raised on a Ray worker carries the remote traceback
    in its message) gives that line, the error itself. ``typed=False``: the message alone (its type's name when it
    has none), for lines that already say what failed (``invalid --storage 'x': <message>``). ``at=True``: prefixed
    by :func:`where` when the traceback passes through your code (``at my_mixers.py:42: ...``).

    A text instead of an exception (a traceback as a failed trial's record or Tune's error file keeps it) gives its
    last line that reads as an exception (``Type: message``; notes printed after it are skipped), else its last line.
    """
    if isinstance(error, str):
        lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
        exceptions = [line for line in lines if _EXCEPTION_LINE.match(line)]
        return exceptions[-1] if exceptions else (lines[-1] if lines else "")
    text, named = _message(error)
    if typed and not named:
        text = f"{_type_name(error)}: {text}" if text else _type_name(error)
    elif not text:
        text = _type_name(error)
    place = where(error) if at else None
    return f"at {place}: {text}" if place else text


def where(error: BaseException) -> str | None:
    """``my_mixers.py:42``: the innermost frame of your code in ``error``'s traceback (module docstring), as a path
    relative to the folder it was imported from; a SyntaxError's own file and line. None: no frame of yours."""
    if isinstance(error, SyntaxError) and error.filename and error.lineno:
        return f"{_short(error.filename)}:{error.lineno}"
    frames = [f for f in traceback.extract_tb(error.__traceback__) if is_yours(f.filename)]
    return f"{_short(frames[-1].filename)}:{frames[-1].lineno}" if frames else None


def is_yours(filename: str) -> bool:
    """Whether a frame's file is your code (module docstring)."""
    if filename.startswith("<"):  # <frozen importlib._bootstrap>, <string>
        return False
    path = Path(filename)
    installed = [i for i, part in enumerate(path.parts) if part in _INSTALLED]
    if installed:  # checked first: a virtual environment may live inside the project's folder
        top = path.parts[installed[-1] + 1].removesuffix(".py") if installed[-1] + 1 < len(path.parts) else ""
        return top in YOUR_PACKAGES or top in _PROJECT_CODE
    if path.is_relative_to(PROJECT_ROOT):
        relative = path.relative_to(PROJECT_ROOT).as_posix()
        return not any(relative == p or relative.startswith(f"{p}/") for p in _PLUMBING)
    return not any(path.is_relative_to(lib) for lib in _standard_library())


def _message(error: BaseException) -> tuple[str, bool]:
    """(the line that says what went wrong, whether it already names the exception's type)."""
    if isinstance(error, SyntaxError) and error.msg:
        return error.msg, False
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    if len(lines) > 1 and _EXCEPTION_LINE.match(lines[-1]):
        return lines[-1], True
    return (lines[0] if lines else ""), False


def _type_name(error: BaseException) -> str:
    kind = type(error)
    builtin = kind.__module__ in ("builtins", "__main__")
    return kind.__qualname__ if builtin else f"{kind.__module__}.{kind.__qualname__}"


def _standard_library() -> tuple[Path, ...]:
    paths = sysconfig.get_paths()
    return tuple(Path(paths[k]) for k in ("stdlib", "platstdlib") if k in paths)


def _short(filename: str) -> str:
    """A frame's file as the path it was imported by: relative to the installed packages' folder, this project's
    root, or the ``sys.path`` folder that holds it (the current directory for ``''``); else as it is."""
    path = Path(filename)
    installed = [i for i, part in enumerate(path.parts) if part in _INSTALLED]
    if installed:
        return Path(*path.parts[installed[-1] + 1:]).as_posix()
    if path.is_relative_to(PROJECT_ROOT):
        return path.relative_to(PROJECT_ROOT).as_posix()
    folders = [Path(entry or os.getcwd()) for entry in sys.path if entry is not None and os.path.isdir(entry or ".")]
    holding = [f for f in folders if path.is_relative_to(f)]
    return path.relative_to(max(holding, key=lambda f: len(f.parts))).as_posix() if holding else str(path)
