"""`--storage s3://...`: trials write to object storage through pyarrow, Ray Tune keeps its state there (and
drops it at the end of each Tuner run).

The object store is moto's S3 server on 127.0.0.1: a stand-in for the cloud provider, which cannot
exist on this machine; everything else (pyarrow's S3 client, Ray Tune's storage, the CLI) is real.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pyarrow.fs as pafs
import pytest

from tests.cli import free_port, run_cli


@pytest.fixture(scope="module")
def s3_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    port = free_port()
    log = tmp_path_factory.mktemp("moto") / "requests.log"  # one line per request the stand-in served
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=log.open("w"))
    env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "test",
           "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
           "MOTO_REQUEST_LOG": str(log)}
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


def _options(env: dict[str, str]) -> dict[str, str]:
    """polars' and deltalake's options for the stand-in (plain HTTP, test credentials)."""
    return {"aws_endpoint_url": env["AWS_ENDPOINT_URL"], "aws_access_key_id": "test", "aws_secret_access_key": "test",
            "aws_region": "us-east-1", "allow_http": "true"}


def _s3(env: dict[str, str]) -> pafs.S3FileSystem:
    return pafs.S3FileSystem(endpoint_override=env["AWS_ENDPOINT_URL"], region="us-east-1", access_key="test",
                             secret_key="test")


def _cli(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``study ARGS`` with the stand-in's settings (a run: on a local Ray of its own, whose workers see them)."""
    return run_cli(*args, cwd=cwd, env=env)


@pytest.mark.slow
def test_a_study_on_s3_storage_runs_resumes_and_reports(s3_env: dict[str, str], tmp_path: Path) -> None:
    uri = "s3://studies-bucket/attention"
    result = _cli(s3_env, "run", "demo", "--scale", "smoke", "--storage", uri)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "9/9 trials finished, 0 failed" in result.stdout

    s3 = _s3(s3_env)
    trials = s3.get_file_info(pafs.FileSelector("studies-bucket/attention/demo.smoke/trials", allow_not_found=True))
    assert [f.path for f in trials if f.path.endswith(".parquet")] == []  # every trial file folded into the table
    rows = pl.scan_delta(f"{uri}/demo.smoke/table", storage_options=_options(s3_env)).collect()  # read in place
    assert rows.height == 9 * 2 and rows["trial_key"].n_unique() == 9  # 9 trials x 1 seed x 2 evaluations
    assert rows["study"].unique().to_list() == ["demo"]
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
    assert result.returncode == 2
    assert "Error: invalid --storage 's3://no-such-bucket/x': no such bucket: s3://no-such-bucket/x" in result.stderr
    assert "Traceback" not in result.stderr


def _requests(env: dict[str, str]) -> int:
    """Requests the stand-in has served so far (its log has one line per request)."""
    text = Path(env["MOTO_REQUEST_LOG"]).read_text()
    return len(re.findall(r'"(?:GET|HEAD|PUT|POST|DELETE) ', text))


@pytest.mark.slow
def test_a_report_reads_a_compacted_study_in_place_with_requests_that_do_not_grow_with_trials(
        s3_env: dict[str, str], tmp_path: Path) -> None:
    from analysis.data.synthetic import write_synthetic_study
    from tests.test_study_cli import STUDIES

    name, requests = f"{STUDIES}:INTERRUPTIBLE", {}
    for n in (20, 200):
        local = tmp_path / f"n{n}" / "test.interruptible"
        rates = [10.0 ** -(1 + i / 10) for i in range(n // 4)]
        write_synthetic_study(local, {"architecture": ["BERT", "NAP"], "d_model": [8, 16], "learning_rate": rates},
                              seeds=(0, 1), n_evals=3, name="test.interruptible")
        uri = f"s3://studies-bucket/requests-{n}"
        pafs.copy_files(str(local), f"studies-bucket/requests-{n}/test.interruptible",
                        source_filesystem=pafs.LocalFileSystem(), destination_filesystem=_s3(s3_env))
        compact = _cli(s3_env, "compact", name, "--storage", uri)
        assert compact.returncode == 0, compact.stderr
        assert f"table: {n} trial file(s) folded in 1 commit(s)" in compact.stdout

        out = tmp_path / f"cwd{n}"
        out.mkdir()
        start = _requests(s3_env)
        report = _cli(s3_env, "report", name, "--storage", uri, cwd=out)
        requests[n] = _requests(s3_env) - start
        assert report.returncode == 0, report.stderr
        assert f"{n} of {n} trials" in (out / "reports" / "test.interruptible" / "index.html").read_text()
        assert [p.name for p in (out / "reports" / "test.interruptible").iterdir() if p.is_dir()] == []  # no copy
    print(f"requests of `study report` on S3: {requests}")
    assert requests[200] == requests[20] < 60
