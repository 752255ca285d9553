"""tests/forkserver.py: a `study` command forked from the tests' fork server is the command a user runs - the same
output, exit status, working directory and environment as a fresh `python -m study.cli` - and only a caller with the
server's environment gets one."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

import tests.cli as cli
from tests.forkserver import PRELOAD, can_fork

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("args", [("list",), ("run", "nosuch"), ("show", "demo", "--scale", "smoke"),
                                  ("run", "demo", "--cpus-per-trial", "0")])
def test_a_forked_command_prints_and_exits_as_a_fresh_one(args: tuple[str, ...]) -> None:
    forked, plain = cli.run_cli(*args), cli.fresh_cli(*args)
    assert cli._server is not None and cli._server.poll() is None  # it went through the server
    assert (forked.returncode, forked.stdout, forked.stderr) == (plain.returncode, plain.stdout, plain.stderr)
    assert forked.stdout or forked.stderr


def test_a_forked_command_runs_in_the_callers_directory_and_imports_from_it(tmp_path: Path) -> None:
    """A study file beside the caller is found as `python -m` finds it (the working directory first on sys.path);
    the libraries came preloaded, the project's modules did not."""
    (tmp_path / "helper_mod.py").write_text("X = 7\n")
    (tmp_path / "mine.py").write_text(
        "import sys\nimport helper_mod\nfrom search_spaces.study import Study\n"
        "print('cwd', __import__('os').getcwd(), 'x', helper_mod.X, 'path0', sys.path[0], file=sys.stderr)\n"
        "MINE = 3\n")
    command = ("show", "mine.py:MINE")
    forked, plain = cli.run_cli(*command, cwd=tmp_path), cli.fresh_cli(*command, cwd=tmp_path)
    assert f"cwd {tmp_path.resolve()} x 7 path0 {tmp_path.resolve()}" in forked.stderr
    assert (forked.returncode, forked.stderr) == (plain.returncode, plain.stderr)
    assert forked.returncode != 0  # MINE is no study: refused, in one line naming it
    assert "torch" in PRELOAD and not any(m.split(".")[0] in {"study", "search_spaces", "polars"} for m in PRELOAD)


def test_only_settings_read_after_import_may_differ_from_the_servers() -> None:
    server = cli.command_env()
    assert can_fork(dict(server), server)
    assert not can_fork({**server, "RAY_AUTH_MODE": "none"}, server)  # Ray reads it at import
    assert not can_fork({k: v for k, v in server.items() if k != "RAY_AUTH_TOKEN"}, server)
    assert not can_fork({**server, "CUDA_VISIBLE_DEVICES": ""}, server)
    assert not can_fork({**server, "OMP_NUM_THREADS": "7"}, server)
    assert can_fork({**server, "AWS_REGION": "us-east-1", "MY_STUDY_SETTING": "1"}, server)
    assert can_fork({k: v for k, v in server.items() if k != "PYTHONPATH"}, server)  # the child sets sys.path


def test_a_forked_command_imports_from_its_own_pythonpath_and_sees_its_environment(tmp_path: Path) -> None:
    """A command whose PYTHONPATH and variables differ from the server's is forked: its folders come right after the
    working directory, and its variables are its own - what a fresh `python -m study.cli` prints, it prints."""
    lib, work = tmp_path / "lib", tmp_path / "work"
    lib.mkdir()
    work.mkdir()
    (lib / "helper_lib.py").write_text("import os\nX = os.environ['MY_MARKER']\n")
    (work / "mine.py").write_text(
        "import os, sys\nimport helper_lib\nfrom pathlib import Path\n"
        "Path(os.environ['PARENT_FILE']).write_text(str(os.getppid()))\n"
        "print('x', helper_lib.X, 'path', sys.path[:3], file=sys.stderr)\n"
        "MINE = 3\n")
    env = {"PYTHONPATH": f"{lib}{os.pathsep}{cli.ROOT}", "MY_MARKER": "seen"}
    forked = cli.run_cli("show", "mine.py:MINE", cwd=work, env={**env, "PARENT_FILE": str(tmp_path / "forked")})
    plain = subprocess.run([*cli.STUDY, "show", "mine.py:MINE"], capture_output=True, text=True, timeout=120,
                           cwd=work, env={**cli.command_env(), **env, "PARENT_FILE": str(tmp_path / "plain")})
    assert cli._server is not None and (tmp_path / "forked").read_text() == str(cli._server.pid)  # a fork
    assert f"x seen path {[str(work), str(lib), str(cli.ROOT)]}" in forked.stderr, forked.stderr
    assert (forked.returncode, forked.stdout, forked.stderr) == (plain.returncode, plain.stdout, plain.stderr)
    assert forked.returncode != 0  # MINE is no study: refused in one line, after the module ran


def test_a_command_past_its_timeout_is_killed_and_says_so(tmp_path: Path) -> None:
    cli.run_cli("list")  # the server is up
    started = time.time()
    with pytest.raises(subprocess.TimeoutExpired):
        cli.run_cli("run", "demo", "--scale", "smoke", "--storage", str(tmp_path), timeout=1)
    assert time.time() - started < 30
    after = cli.run_cli("list")  # the server serves on
    assert after.returncode == 0 and "demo" in after.stdout
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _is_child_of(int(p), cli._server.pid)]


def _is_child_of(pid: int, parent: int | None) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return parent is not None and int(stat.rsplit(")", 1)[1].split()[1]) == parent
