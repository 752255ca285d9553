"""What every `study` command pays before and after its work: nothing it does not need (each of these costs seconds
per command on a 2-core machine, measured in bench/README.md, section (14), "what one `study` command costs around its
work")."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.cli import ROOT

#: Tune's callback census: does counting one callback import the tracking integrations (and their libraries)?
CENSUS = """
import sys
from ray import tune
from ray.air._internal import usage
if {skip}:
    from study.run.tuner import _skip_callback_census
    _skip_callback_census()
usage.tag_callbacks([tune.Callback()])
print(sorted(m for m in ("mlflow", "wandb", "ray.air.integrations.mlflow", "ray.air.integrations.wandb")
             if m in sys.modules))
"""


def _census_imports(skip: bool) -> str:
    done = subprocess.run([sys.executable, "-c", CENSUS.format(skip=skip)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.slow  # two Pythons that import Ray Tune
def test_a_run_does_not_import_the_trackers_to_count_its_callbacks() -> None:
    # Ray's own census imports them (mlflow and wandb are installed with the [test] extra): what the skip saves
    assert _census_imports(skip=False) == "['mlflow', 'ray.air.integrations.mlflow', 'ray.air.integrations.wandb', " \
                                          "'wandb']"
    assert _census_imports(skip=True) == "[]"


def test_a_local_ray_prestarts_no_idle_workers() -> None:
    import os
    from unittest import mock

    from study.run.ray_env import ray_environment

    with mock.patch.dict(os.environ):  # every variable the call sets is undone after
        os.environ.pop("RAY_prestart_worker_first_driver", None)
        ray_environment(None)
        assert os.environ["RAY_prestart_worker_first_driver"] == "0"


@pytest.mark.slow  # three `study` processes
def test_the_command_keeps_its_output_and_exit_status_through_its_quick_exit() -> None:
    """``study`` ends with os._exit after Python's exit steps (study.cli.command_line): every line printed arrives,
    and the status is the command's (0; 2 for a usage error; 1 for ``sys.exit("message")``)."""
    from click.testing import CliRunner

    from study.cli import main

    listing = subprocess.run([sys.executable, "-m", "study.cli", "list"], capture_output=True, text=True, cwd=ROOT,
                             timeout=120)
    in_process = CliRunner().invoke(main, ["list"])
    assert listing.returncode == 0 and listing.stdout == in_process.output and len(listing.stdout) > 2000
    bad = subprocess.run([sys.executable, "-m", "study.cli", "run", "nosuch"], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("Error: unknown study 'nosuch'; valid: demo, ")
    message = subprocess.run([sys.executable, "-c", "import sys, click\nfrom study import cli\n"
                              "cli.main = click.Command('x', callback=lambda: sys.exit('gone'))\ncli.command_line()"],
                             capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert (message.returncode, message.stderr) == (1, "gone\n")
