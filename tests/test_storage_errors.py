"""`--storage` faults named for what they are (issue 42): a missing root, a file in the way, a root that cannot be
written, a full disk, an invalid URI; each one line, exit status 2, before Ray starts. An OSError that is not about
the storage is not blamed on it."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from tests.cli import run_cli


def _one_line(result) -> str:  # noqa: ANN001 - a CompletedProcess or click's Result
    errors = [line for line in (getattr(result, "stderr", None) or result.output).splitlines()
              if line.startswith("Error:")]
    assert len(errors) == 1, getattr(result, "stderr", None) or result.output
    return errors[0]


def test_a_missing_root_is_named_missing_by_every_reader(tmp_path: Path) -> None:
    result = run_cli("status", "demo", "--scale", "smoke", "--storage", str(tmp_path / "nowhere"), timeout=60)
    assert result.returncode == 2
    assert _one_line(result) == f"Error: invalid --storage '{tmp_path / 'nowhere'}': no such directory: " \
                                f"{tmp_path / 'nowhere'}"


def test_a_root_under_a_regular_file_is_a_file_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "a_file").write_text("not a directory")
    root = tmp_path / "a_file" / "results"
    result = run_cli("run", "demo", "--scale", "smoke", "--storage", str(root), timeout=120, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert _one_line(result) == f"Error: invalid --storage '{root}': not a directory (a file is in the way): {root}"
    assert "ray:" not in result.stdout


def _unwritable_root(tmp_path: Path) -> tuple[Path, str]:
    """A root this process may not create directories in, and the words its error has. Not root: a folder made
    read-only (chmod 0o500). Root (who may write anywhere chmod allows): a folder in /sys, where the kernel refuses
    every mkdir with EPERM even to root."""
    if os.geteuid() != 0:
        folder = tmp_path / "read_only"
        folder.mkdir()
        folder.chmod(0o500)
        return folder, "not writable (permission denied)"
    probe = Path("/sys/attention-studies-probe")
    try:
        probe.mkdir()
    except OSError as error:
        if error.errno in (errno.EPERM, errno.EACCES):
            return Path("/sys/attention-studies-test"), f"not writable ({os.strerror(error.errno).lower()})"
    else:
        probe.rmdir()
    pytest.skip("running as root without a folder that refuses root's writes (/sys allowed a mkdir)")


def test_a_root_that_cannot_be_written_says_so(tmp_path: Path) -> None:
    root, words = _unwritable_root(tmp_path)
    try:
        result = run_cli("run", "demo", "--scale", "smoke", "--storage", str(root), timeout=120, cwd=tmp_path)
    finally:
        if root.parent == tmp_path:
            root.chmod(0o700)
    assert result.returncode == 2, result.stdout + result.stderr
    line = _one_line(result)
    assert line.startswith(f"Error: invalid --storage '{root}': {words}: {root}"), line
    assert "ray:" not in result.stdout


def test_a_full_disk_says_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk cannot be filled here: os.makedirs (the study directory's creation, the run's first write) is made to
    fail with ENOSPC for paths under the test's root only, in-process; everything else runs as it does."""
    from click.testing import CliRunner

    from study.cli import main

    root = tmp_path / "results"
    real = os.makedirs

    def full(path: str | os.PathLike, *args: object, **kwargs: object) -> None:
        if Path(path).is_relative_to(root):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, *args, **kwargs)

    monkeypatch.setattr(os, "makedirs", full)
    for name in ("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "TUNE_GLOBAL_CHECKPOINT_S", "RAY_AIR_NEW_OUTPUT"):
        monkeypatch.delenv(name, raising=False)  # what `study run` sets for Ray goes again after the test
    result = CliRunner().invoke(main, ["run", "demo", "--scale", "smoke", "--storage", str(root)])
    assert result.exit_code == 2, result.output
    assert _one_line(result) == (f"Error: invalid --storage '{root}': full (no space left on device): "
                                 f"{root / 'demo.smoke'}")


@pytest.mark.parametrize("command", [["run", "demo", "--scale", "smoke"], ["status", "demo"]])
def test_an_invalid_uri_is_named_an_invalid_uri(command: list[str], tmp_path: Path) -> None:
    result = run_cli(*command, "--storage", "foo://bucket/x", timeout=60, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert _one_line(result) == ("Error: invalid --storage 'foo://bucket/x': invalid URI (Unrecognized filesystem "
                                 "type in URI: foo://bucket/x)")
    assert "preflight" not in result.stdout  # known before anything trains


def test_an_oserror_about_another_file_is_not_blamed_on_the_storage(tmp_path: Path) -> None:
    from study.results.storage import storage_fault

    elsewhere = OSError(errno.ENOSPC, "No space left on device", "/var/cache/torch/kernels")
    assert storage_fault(str(tmp_path), elsewhere) is None  # `study run` reports it as itself, exit status 1
    mine = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "demo" / "study.json"))
    assert str(storage_fault(str(tmp_path), mine)) == (f"invalid --storage '{tmp_path}': full (no space left on "
                                                       f"device): {tmp_path / 'demo' / 'study.json'}")
    denied = storage_fault("s3://my-bucket/x", OSError("When creating key 'x/' in bucket 'my-bucket': AWS Error "
                                                       "ACCESS_DENIED during PutObject operation: Access Denied"))
    assert str(denied) == "invalid --storage 's3://my-bucket/x': not writable (permission denied): s3://my-bucket/x"
    assert storage_fault("s3://my-bucket/x", OSError("a socket of Ray's")) is None
