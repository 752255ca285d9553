"""`--storage s3://...`: trials write to object storage through pyarrow, Ray Tune keeps its state there (and
drops it at the end of each Tuner run).

The object store is moto's S3 server on 127.0.0.1: a stand-in for the cloud provider, which cannot
exist on this machine; everything else (pyarrow's S3 client, Ray Tune's storage, the CLI) is real.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from tests.cli import STUDY
from tests.test_reliability import _free_port


@pytest.fixture(scope="module")
def s3_env() -> Iterator[dict[str, str]]:
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = {**os.environ, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "test",
           "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1"}
    try:
        s3 = pafs.S3FileSystem(endpoint_override=env["AWS_ENDPOINT_URL"], allow_bucket_creation=True,
                               region="us-east-1", access_key="test", secret_key="test")
        deadline = time.time() + 30
        while True:
            try:
                s3.create_dir("studies-bucket")
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.3)
        yield env
    finally:
        server.kill()
        server.wait()


def _cli(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*STUDY, *args], capture_output=True, text=True, timeout=240, env=env, cwd=cwd)


@pytest.mark.slow
def test_a_study_on_s3_storage_runs_resumes_and_reports(s3_env: dict[str, str], tmp_path: Path) -> None:
    uri = "s3://studies-bucket/attention"
    result = _cli(s3_env, "run", "demo", "--scale", "smoke", "--storage", uri)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "9/9 trials finished, 0 failed" in result.stdout

    s3 = pafs.S3FileSystem(endpoint_override=s3_env["AWS_ENDPOINT_URL"], region="us-east-1",
                           access_key="test", secret_key="test")
    files = [f.path for f in s3.get_file_info(pafs.FileSelector("studies-bucket/attention/demo.smoke/trials"))]
    assert len(files) == 9 and all(f.endswith(".parquet") for f in files)
    rows = pl.from_arrow(pq.read_table(files[0], filesystem=s3))
    assert rows.height == 2 and rows["study"].unique().to_list() == ["demo"]
    tune_state = s3.get_file_info(pafs.FileSelector("studies-bucket/attention/demo.smoke/_tune", recursive=True,
                                                    allow_not_found=True))
    assert [f.path for f in tune_state if f.type == pafs.FileType.File] == []  # Ray Tune's state: dropped there too

    again = _cli(s3_env, "run", "demo", "--scale", "smoke", "--storage", uri)
    assert "9 finished before, 0 to run" in again.stdout
    status = _cli(s3_env, "status", "demo", "--scale", "smoke", "--storage", uri)
    assert "done 9 | running 0 | failed 0 | unreadable 0 | pending 0 | total 9" in status.stdout
    report = _cli(s3_env, "report", "demo", "--scale", "smoke", "--storage", uri, cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "reports" / "demo.smoke" / "index.html").stat().st_size > 1000


@pytest.mark.slow
def test_a_missing_bucket_is_a_one_line_error(s3_env: dict[str, str]) -> None:
    result = _cli(s3_env, "run", "demo", "--scale", "smoke", "--storage", "s3://no-such-bucket/x")
    assert result.returncode == 1
    assert "Error: invalid --storage 's3://no-such-bucket/x': " in result.stderr
    assert "Traceback" not in result.stderr
