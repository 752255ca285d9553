"""The suite's own scheduling holds: tests/conftest.py marks a module's slow tests as one pytest-xdist group, and under
`make test` (``-n 2 --dist loadgroup``) xdist really keeps the group on one worker. Twice it silently did not: xdist's
hook ran before conftest's and saw no group, and pytest 9.2 ignores the id xdist rewrites (pyproject.toml pins
pytest below it); each time every worker built its own copy of a module's fixtures and no test noticed."""

from __future__ import annotations

import pytest


@pytest.mark.slow  # one of this module's slow tests: conftest puts them in this module's group
def test_a_slow_test_is_in_its_modules_group_and_xdist_schedules_it_so(request: pytest.FixtureRequest) -> None:
    groups = [mark.args[0] for mark in request.node.iter_markers("xdist_group")]
    assert groups == ["tests/test_suite_grouping.py"]
    if request.config.getoption("loadgroup", False):
        # an xdist worker of --dist loadgroup (xdist sets this option there only): the scheduler sees the group only
        # as the id's suffix
        assert request.node.nodeid.endswith("@tests/test_suite_grouping.py"), request.node.nodeid


def test_a_fast_test_is_in_no_group(request: pytest.FixtureRequest) -> None:
    """Fast tests balance one by one over the workers."""
    assert not list(request.node.iter_markers("xdist_group"))
