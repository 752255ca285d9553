"""Fixtures shared by the test modules."""

import os
from collections.abc import Iterator
from pathlib import Path
from types import CodeType

import pytest

# What makes a test `slow` wherever it appears (pyproject.toml's marker says what slow is): these fixtures start a
# local Ray cluster, a moto S3 server or a whole study run; run_cli runs the `study` command in a subprocess.
SLOW_FIXTURES = {"cluster", "s3_env", "fig7_smoke"}
#: Session fixtures of finished studies that tests of several modules read: their tests run on one xdist worker, so
#: that the study runs once.
SHARED_STUDIES = {"fig7_smoke"}
SLOW_CALLS = {"run_cli"}


def _names_called(code: CodeType) -> set[str]:
    """The names (globals, attributes) a test's code reads, its nested functions and comprehensions included."""
    nested = (c for c in code.co_consts if isinstance(c, CodeType))
    return set(code.co_names).union(*map(_names_called, nested))


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook, which reads the xdist_group marks added here
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark slow every test that uses a slow fixture or calls run_cli, so that a new one cannot forget the mark; and
    keep each module's slow tests together under pytest-xdist (`make test` runs ``pytest -n 2 --dist loadgroup``):
    they share module-scoped fixtures (a cluster, a simulation), and at most two Rays run at once, one a worker.
    Without tryfirst xdist's hook ran first and saw no group: each worker built its own copy of a module fixture."""
    for item in items:
        code = getattr(getattr(item, "function", None), "__code__", None)
        calls = _names_called(code) if code else set()
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())) or SLOW_CALLS & calls:
            item.add_marker(pytest.mark.slow)
        shared = SHARED_STUDIES & set(getattr(item, "fixturenames", ()))
        if shared:
            item.add_marker(pytest.mark.xdist_group(min(shared)))
        elif item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    # Slow tests first: xdist's loadgroup queues groups by their test count, ties in collection order, so a slow
    # module of one test among the fast ones would start last and run alone at the end; the fast tests fill the tail.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say where the device-parametrized tests ran (also under -q), so a run without CUDA says so."""
    from tests.tiny import DEVICES

    if "cuda" in DEVICES:
        import torch

        line = f"devices: cpu, cuda ({torch.cuda.get_device_name()})"
    else:
        line = "devices: cpu only (no CUDA here: the device-parametrized tests ran their cpu case alone)"
    terminalreporter.write_line(line)


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """Tiny models run fastest on one thread (and do not fight other processes for cores)."""
    import torch  # only the modules that ask for this fixture pay for importing torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def float64(one_torch_thread: None) -> Iterator[None]:
    """torch's default dtype float64 for one test, on one thread (packed == separate checks agree to rounding)."""
    import torch

    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


@pytest.fixture(scope="session")
def fig7_smoke(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished ``study run richter2020.fig7 --scale smoke`` (its study directory), made once per session by the
    real CLI; tests read it and write nothing into it. NOTEBOOK_STUDY_DIR: a study directory you already have."""
    from tests.cli import ROOT, run_cli

    given = os.environ.get("NOTEBOOK_STUDY_DIR")
    if given:
        return Path(given).resolve()
    storage = tmp_path_factory.mktemp("fig7_smoke").resolve()
    result = run_cli("run", "richter2020.fig7", "--scale", "smoke", "--storage", str(storage), timeout=540, cwd=ROOT)
    assert result.returncode == 0, "the shared fig7 smoke study failed:\n" + result.stdout + result.stderr
    study_dir = storage / "richter2020.fig7.smoke"
    assert (study_dir / "study.json").is_file()
    return study_dir
