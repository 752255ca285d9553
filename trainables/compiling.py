"""Whether a training loop runs its step compiled (``torch.compile``, inductor), and how.

`study run --compile auto|on|off` sets it for a trial (:func:`compile_setting`, as precision is set); a loop asks
:func:`compile_mode` for its device. ``auto`` compiles where it was measured to pay: on CUDA, where an eager step of
these small models is a few hundred unfused launches (bench/README.md); not on a CPU, where a shape's compilation
(tens of seconds) costs more than a cpu-scale trial gains. Compiled and eager run the same code and agree within
float rounding (tests/test_compiled_step.py).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

import torch

COMPILE = ("auto", "on", "off")
_SETTING: contextvars.ContextVar[str] = contextvars.ContextVar("compile", default="auto")

F = TypeVar("F", bound=Callable[..., Any])


@contextlib.contextmanager
def compile_setting(setting: str) -> Iterator[None]:
    """Training inside this block compiles as ``setting`` (auto, on, off) says."""
    if setting not in COMPILE:
        raise ValueError(f"invalid compile={setting!r}; allowed: {', '.join(COMPILE)}")
    token = _SETTING.set(setting)
    try:
        yield
    finally:
        _SETTING.reset(token)


def compile_mode(device: str | torch.device) -> str | None:
    """How a loop on ``device`` compiles under the current setting: None (eager) or a torch.compile mode."""
    setting = _SETTING.get()
    if setting == "off" or (setting == "auto" and torch.device(device).type != "cuda"):
        return None
    return "default"


class CompileWarning(UserWarning):
    """A step could not be compiled here and runs eagerly (the same results, slower)."""


def compiled(fn: F, mode: str | bool | None) -> F:
    """``fn`` compiled with static shapes in ``mode`` (True: torch's default mode), or ``fn`` itself (None/False).

    If compiling fails (a compiler bug on this machine's torch or GPU), ``fn`` runs eagerly from then on, with a
    :class:`CompileWarning` naming the error: a trial is slower, never lost. Compilation happens before the graph runs,
    so nothing has changed when it fails; an error of ``fn`` itself is raised again by the eager call.
    """
    if not mode:
        return fn
    fast = torch.compile(fn, dynamic=False, mode=None if mode is True else mode)
    state = {"eager": False}

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if state["eager"]:
            return fn(*args, **kwargs)
        try:
            return fast(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - any compiler failure; fn's own errors recur below
            if not _is_compile_error(error):
                raise
            state["eager"] = True
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            warnings.warn(f"could not compile {getattr(fn, '__qualname__', fn)} ({type(error).__name__}: "
                          f"{first[:200]}); it runs eagerly, with the same results", CompileWarning, stacklevel=2)
            return fn(*args, **kwargs)

    return cast(F, call)  # functools.wraps keeps fn's signature at run time; a type checker sees call's


#: Words in the names of torch's compiler errors (InductorError, BackendCompilerFailed, Unsupported, ...).
_COMPILER_WORDS = ("Inductor", "Backend", "Compil", "Unsupported")


def _is_compile_error(error: BaseException) -> bool:
    """Whether ``error`` came from the compiler (dynamo, inductor, Triton), not from the function it compiled."""
    for e in _chain(error):
        package, name = type(e).__module__.split(".")[0], type(e).__name__
        if package == "triton" or (package == "torch" and any(w in name for w in _COMPILER_WORDS)):
            return True
    return False


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__
