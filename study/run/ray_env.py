"""Environment that Ray reads when it is first imported; kept apart so it can run before that import."""

from __future__ import annotations

import os


def ray_environment(address: str | None) -> None:
    """Set Ray's and Tune's environment for a study run: call before the first `import ray`."""
    os.environ.setdefault("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "1")  # Tune's loggers dominate at scale
    # Tune's experiment state (an entry per trial, ~12 KB each) is never read back (the Parquet files are the
    # record and resume reads them): saved when a Tuner run starts and when it ends, not every >= 10 s between.
    os.environ.setdefault("TUNE_GLOBAL_CHECKPOINT_S", "inf")
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
    # A local Ray prestarts one idle worker per CPU for the first driver, without its runtime_env; a study's trials
    # always carry one (trainables.plugins.runtime_env), so Ray starts their workers afresh and the prestarted ones
    # only cost CPU (1.8 s of CPU per `study run` on a 2-core machine). Read by the raylet this driver starts.
    os.environ.setdefault("RAY_prestart_worker_first_driver", "0")
    # Clusters from `ray start` (Ray >= 2.60) require token authentication, but a client only sends the
    # token (~/.ray/auth_token or RAY_AUTH_TOKEN) when told to.
    token_file = os.path.expanduser("~/.ray/auth_token")
    if address and (os.environ.get("RAY_AUTH_TOKEN") or os.path.exists(token_file)):
        os.environ.setdefault("RAY_AUTH_MODE", "token")
