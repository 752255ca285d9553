"""Fixtures shared by the test modules."""

from collections.abc import Iterator

import pytest


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """Tiny models run fastest on one thread (and do not fight other processes for cores)."""
    import torch  # only the modules that ask for this fixture pay for importing torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
