"""`study` commands forked from a Python that has already imported the heavy libraries, for the tests.

Every `study` subprocess of the suite would import torch, Ray Tune, SciPy, pandas, pyarrow and optuna again: some
5 CPU seconds of each command's ~9 on this 2-core machine, and the suite runs some 150 of them (bench/README.md 19).
This server imports them once per test process; each command is a fork of it that runs ``python -m study.cli ARGS``
in the caller's working directory, environment, stdout and stderr, a process of its own with its own exit status:
what the user's command does, less the library imports it shares. The project's own modules are never preloaded
(their import reads entry points, plugins and the working directory: the child imports them as a fresh process
does), nor polars (its thread pool starts at import, and threads do not survive a fork).

A caller whose environment differs from the server's in a setting the libraries read at import gets a plain
subprocess (:func:`can_fork`: Ray its RAY_* settings, its authentication mode among them, torch its threads and
devices...; the server's environment is tests/cli.py's, token mode included); one that differs elsewhere (a study's
own variables, credentials, PYTHONPATH, whose folders the child puts on sys.path as Python would) is forked. What
`study run` sets before its first ``import ray`` (study.run.ray_env) is Ray Tune's, read when a Tuner runs, and the
raylet's, read by the local Ray it starts: a forked run sees them as a fresh one does.

Run as ``python -m tests.forkserver``: requests and replies are JSON lines on its stdin and stdout."""

from __future__ import annotations

import json
import os
import sys

#: Libraries the `study` commands import that are fork-safe to import beforehand (no thread started at import but
#: jemalloc's, which re-forms after a fork), measured 2026-11-29: torch 2.9, ray.tune 2.3, scipy.stats ~1 CPU s.
PRELOAD = ("torch", "ray", "ray.tune", "scipy.stats", "pandas", "pyarrow", "pyarrow.parquet", "optuna", "click")


#: Prefixes of the settings that Python or a preloaded library reads when it starts or is imported (Python its
#: PYTHON* flags, the allocators and locale, Ray and Ray Tune, torch and its OpenMP/MKL/CUDA runtimes, numpy, Arrow,
#: pandas, optuna, gRPC): a command whose environment sets one of them otherwise than the server's is not forked.
READ_AT_IMPORT = ("PYTHON", "LD_", "MALLOC", "LANG", "LC_", "TZ", "RAY_", "TUNE_", "TORCH", "PYTORCH", "ATEN_",
                  "CUDA", "NVIDIA", "OMP_", "KMP_", "GOMP", "MKL", "OPENBLAS", "NPY_", "NUMPY", "ARROW", "PANDAS",
                  "OPTUNA", "GRPC")


def can_fork(env: dict[str, str], server_env: dict[str, str]) -> bool:
    """Whether a command with environment ``env`` may be forked from a server started with ``server_env``: where the
    two differ, none of the settings read at import (:data:`READ_AT_IMPORT`), PYTHONPATH aside (:func:`_child`)."""
    differ = {name for name in env.keys() | server_env.keys() if env.get(name) != server_env.get(name)}
    return not any(name.startswith(READ_AT_IMPORT) for name in differ - {"PYTHONPATH"})


def _python_path(env: dict[str, str]) -> list[str]:
    return [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]


def _child(request: dict[str, object]) -> None:
    """In the fork: become ``python -m study.cli ARGS`` in the request's directory, environment and files."""
    cwd = str(request["cwd"])
    os.chdir(cwd)
    env: dict[str, str] = request["env"]  # type: ignore[assignment]
    # sys.path as `python -m` would build it: the working directory, the command's PYTHONPATH (absolute), then
    # the interpreter's own entries (the server's PYTHONPATH taken out)
    server_path = {os.path.abspath(entry) for entry in _python_path(dict(os.environ))}
    own = [entry for entry in sys.path[1:] if entry not in server_path]
    sys.path[:] = list(dict.fromkeys([cwd, *(os.path.abspath(e) for e in _python_path(env)), *own]))
    os.environ.clear()
    os.environ.update(env)
    files = ((0, os.devnull, os.O_RDONLY), (1, request["out"], os.O_WRONLY), (2, request["err"], os.O_WRONLY))
    for fd, path, mode in files:
        target = os.open(str(path), mode)
        os.dup2(target, fd)
        os.close(target)
    sys.argv = ["study.cli", *request["args"]]  # type: ignore[misc]
    import runpy

    try:
        runpy.run_module("study.cli", run_name="__main__", alter_sys=True)  # ends with os._exit (study.cli)
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except BaseException:  # noqa: BLE001 - as Python would: the traceback on stderr, status 1
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def serve() -> None:
    """Fork one command per request line; reply ``{"pid": ...}`` at once and ``{"code": ...}`` when it ends."""
    for module in PRELOAD:
        __import__(module)
    reply = os.fdopen(os.dup(1), "w")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # nothing of the server's reaches a command's stdout
    reply.write(json.dumps({"ready": os.getpid()}) + "\n")
    reply.flush()
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        reply.write(json.dumps({"pid": pid}) + "\n")
        reply.flush()
        _, status = os.waitpid(pid, 0)
        reply.write(json.dumps({"code": os.waitstatus_to_exitcode(status)}) + "\n")
        reply.flush()


if __name__ == "__main__":
    serve()
