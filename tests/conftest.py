"""Fixtures shared by the test modules."""

from collections.abc import Iterator

import pytest


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
