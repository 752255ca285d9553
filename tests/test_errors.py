"""One formatter for every one-line error (core.errors.one_line): the error as Python names it, a remote
traceback's last line, and the file and line of *your* code (not torch's, not the standard library's, not the
orchestration's under study/)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from core.errors import is_yours, one_line, where
from tests.cli import ROOT


def _raised(error: BaseException) -> BaseException:
    try:
        raise error
    except BaseException as caught:  # noqa: BLE001 - the test wants the raised object with its traceback
        return caught


def test_an_error_is_its_type_and_its_messages_first_line() -> None:
    assert one_line(_raised(ValueError("bad value\nmore detail"))) == "ValueError: bad value"
    assert one_line(_raised(KeyError("k"))) == "KeyError: 'k'"
    assert one_line(_raised(AssertionError())) == "AssertionError"
    assert one_line(_raised(ValueError("bad value")), typed=False) == "bad value"
    assert one_line(_raised(ValueError()), typed=False) == "ValueError"
    from study.trial.devices import DeviceError

    assert one_line(DeviceError("no GPU")) == "study.trial.devices.DeviceError: no GPU"  # as Python prints it


def test_a_remote_traceback_gives_its_last_line() -> None:
    """A Ray worker's error carries the remote traceback in its message: the error is its last line."""
    from study.trial.devices import DeviceError

    remote = DeviceError("remote traceback, then\nstudy.trial.devices.DeviceError: trial asked for 0.25 GPU ...")
    assert one_line(remote) == "study.trial.devices.DeviceError: trial asked for 0.25 GPU ..."
    cuda = RuntimeError("CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously "
                        "reported at some other API call\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1")
    assert one_line(cuda) == "RuntimeError: CUDA error: device-side assert triggered"  # not a traceback: first line


USER_CODE = '''import json

import torch


def shapes_that_do_not_fit():
    layer = torch.nn.Linear(3, 4)
    return layer(torch.zeros(2, 5))  # line 8: raised inside torch's Python frames


def bad_json():
    return json.loads("{")  # line 12: raised inside the standard library's Python frames


def calls_through(fn):
    return fn()
'''


@pytest.mark.slow  # a Python subprocess
@pytest.mark.parametrize(("function", "line", "error"), [
    ("shapes_that_do_not_fit", 8, "RuntimeError: mat1 and mat2 shapes cannot be multiplied"),
    ("bad_json", 12, "json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes"),
])
def test_the_location_is_the_innermost_frame_of_your_code(function: str, line: int, error: str,
                                                           tmp_path: Path) -> None:
    """Run from outside the tree: the user's file is named by the path it was imported by; torch's frames and the
    standard library's are skipped (the error was raised in them), and so are the orchestration's (study/)."""
    (tmp_path / "my_code.py").write_text(USER_CODE)
    script = ("import my_code\n"
              "from study.trial.trainable import torch_setting\n"
              "from core.errors import one_line\n"
              "try:\n"
              "    with torch_setting(lambda: 0, lambda _: None, 1):  # a frame of study/ around it\n"
              f"        my_code.calls_through(my_code.{function})\n"
              "except Exception as e:\n"
              "    print(one_line(e, at=True))\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().startswith(f"at my_code.py:{line}: {error}"), out.stdout


def test_what_counts_as_your_code() -> None:
    import torch

    assert is_yours(str(ROOT / "trainables" / "richter2020" / "model.py"))  # a family's code is the family's
    assert is_yours(str(ROOT / "examples" / "zoo_recall" / "zoo_recall" / "mqar.py"))
    assert is_yours("/home/me/research/my_mixers.py")
    assert not is_yours(str(ROOT / "study" / "run" / "preflight.py"))  # the orchestration runs your code
    assert not is_yours(str(ROOT / "trainables" / "plugins.py"))  # so does the plugin loader
    assert not is_yours(torch.__file__) and not is_yours(subprocess.__file__) and not is_yours("<frozen os>")


def test_a_syntax_error_is_located_at_its_own_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("x = 1\ny = (\n")
    with pytest.raises(SyntaxError) as info:
        compile(broken.read_text(), str(broken), "exec")
    assert one_line(info.value, at=True).endswith(":2: SyntaxError: '(' was never closed")
    assert where(_raised(ValueError("no traceback of yours here"))) is not None  # this test file is yours


def test_no_location_when_no_frame_is_yours() -> None:
    error = ValueError("made, not raised")  # no traceback at all
    assert one_line(error, at=True) == "ValueError: made, not raised"


def test_a_traceback_text_gives_its_errors_line() -> None:
    """A failed trial's record and Tune's error file keep the traceback as text: its last line that reads as an
    exception, not a note torch prints after it."""
    text = ('Traceback (most recent call last):\n  File "my_mixers.py", line 42, in weights\n    return a[idx]\n'
            "RuntimeError: CUDA error: device-side assert triggered\n"
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")
    assert one_line(text) == "RuntimeError: CUDA error: device-side assert triggered"
    assert one_line("just words\nthe last of them") == "the last of them"
    assert one_line("  \n") == ""


def test_every_error_of_the_project_is_a_one_line_error_with_its_builtin_base_and_exit_status() -> None:
    """One base (core.errors.OneLineError) under the builtin each class had: code that catches ValueError or OSError
    still catches them; the exit status says whose fault it is (docs/cli.md)."""
    from analysis.data.meta import MetaError
    from core.errors import OneLineError
    from core.registry import RegistryError
    from search_spaces import StudyError
    from study.cli.compare import CompareError
    from study.results.storage import StorageError
    from study.results.table import FoldError
    from study.run.cluster import AddressError, ClusterError
    from study.run.lock import StudyLocked
    from study.tracking import TrackError
    from study.trial.devices import DeviceError
    from trainables.plugins import PluginError

    expected = {StudyError: (ValueError, 2), CompareError: (ValueError, 2), StorageError: (OSError, 2),
                FoldError: (RuntimeError, 1), TrackError: (ValueError, 2), ClusterError: (ValueError, 1),
                AddressError: (ValueError, 2), DeviceError: (RuntimeError, 1), MetaError: (ValueError, 1),
                PluginError: (ValueError, 2), StudyLocked: (RuntimeError, 1), RegistryError: (ValueError, 2)}
    for kind, (builtin, status) in expected.items():
        assert issubclass(kind, OneLineError) and issubclass(kind, builtin), kind
        assert kind.exit_code == status, kind


@pytest.mark.parametrize(("error", "status"), [("fold", 1), ("storage", 2)])
def test_the_cli_prints_a_one_line_error_it_was_not_handed_with_its_exit_status(error: str, status: int) -> None:
    import click
    from click.testing import CliRunner

    from study.cli.common import OneLineErrors
    from study.results.storage import StorageError
    from study.results.table import FoldError

    @click.group(cls=OneLineErrors)
    def group() -> None:
        pass

    @group.command()
    def fails() -> None:
        raise FoldError("column x is Int64 in the table, String in 3 files") if error == "fold" else \
            StorageError("invalid --storage 'x': no such directory: x")

    result = CliRunner().invoke(group, ["fails"])
    line = "Error: column x is Int64 in the table, String in 3 files" if error == "fold" else \
        "Error: invalid --storage 'x': no such directory: x"
    assert (result.exit_code, result.output.strip()) == (status, line)
