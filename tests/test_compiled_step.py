"""The packed step: compiled and eager agree, and nothing in a step waits for the device."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
import torch

from tests.tiny import DEVICES, assert_rows_equal, tiny_config
from trainables.compiling import compile_mode, compile_setting
from trainables.richter2020.loop import Pack, train_members

#: compiled vs eager in float32 after 20 steps at lr 3e-4: inductor fuses (and so rounds) the elementwise work
#: otherwise. In float64 the two agree to 1e-15 (the same arithmetic); in float32 training amplifies the rounding (at
#: lr 3e-3, 0.5% apart after 20 steps, as packed vs solo: tests/test_richter2020_packed.py), so the check runs at a
#: small rate, where float32 rows stay within 1e-4.
COMPILED_TOL = 1e-4

_HOST_READS = ("item", "tolist", "cpu", "numpy", "__bool__", "__int__", "__float__", "__index__")


@contextlib.contextmanager
def _no_host_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every way a tensor's value reaches Python, recorded while the block runs (on a CPU no sync can be seen, so the
    reads that would be one on a GPU are counted instead)."""
    reads: list[str] = []
    for name in _HOST_READS:
        original = getattr(torch.Tensor, name)

        def spy(self: torch.Tensor, *args: object, _name: str = name, _original: object = original, **kw: object):
            reads.append(_name)
            return _original(self, *args, **kw)  # type: ignore[operator]

        monkeypatch.setattr(torch.Tensor, name, spy)
    yield reads
    monkeypatch.undo()


@pytest.mark.parametrize("device", DEVICES)
def test_training_steps_read_nothing_back(device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Steps between evaluations, a diverging member among them, read no tensor back on the host; an evaluation
    reads once (its rows need the values)."""
    cfg = tiny_config(n_steps=20, eval_every=10)
    pack = Pack([cfg, tiny_config(learning_rate=1e9, n_steps=20, eval_every=10)], [0, 1], device=device)
    if device == "cuda":
        torch.cuda.set_sync_debug_mode("error")
    try:
        with _no_host_reads(monkeypatch) as reads:
            for _ in range(9):
                pack.step()
        assert reads == []
    finally:
        if device == "cuda":
            torch.cuda.set_sync_debug_mode(0)
    pack.step()
    with _no_host_reads(monkeypatch) as reads:
        pack._emit(10)
    assert reads.count("cpu") == 1 and "item" not in reads  # the values and where members diverged, one copy


def test_the_diverging_member_is_frozen_on_the_device_and_recorded_at_its_step() -> None:
    lr_huge = tiny_config(learning_rate=1e9, n_steps=20, eval_every=10)
    rows = train_members([tiny_config(n_steps=20, eval_every=10), lr_huge], [0], pack=None, compile=False)
    ok = [r for r in rows if r["learning_rate"] != 1e9]
    bad = [r for r in rows if r["learning_rate"] == 1e9]
    assert [r["status"] for r in ok] == ["ok", "ok"] and [r["status"] for r in bad] == ["diverged", "diverged"]
    assert [r["val_accuracy"] for r in bad] == [0.0, 0.0]
    alone = train_members([tiny_config(n_steps=20, eval_every=10)], [0], pack=None, compile=False)
    assert_rows_equal(ok, alone, tol=1e-6)


def test_compile_setting_and_its_default() -> None:
    assert compile_mode("cpu") is None and compile_mode("cuda") == "default"  # auto: on CUDA only
    with compile_setting("on"):
        assert compile_mode("cpu") == "default"
    with compile_setting("off"):
        assert compile_mode("cuda") is None
    with pytest.raises(ValueError, match=r"invalid compile='fast'; allowed: auto, on, off"):
        with compile_setting("fast"):
            pass


@pytest.mark.slow  # compiles one tiny step (about 40 s on the development CPU)
@pytest.mark.parametrize("device", DEVICES)
def test_compiled_rows_equal_eager_rows(device: str) -> None:
    """The same members, compiled and eager: every row value within COMPILED_TOL (float32), a diverging member too;
    with per-member clipping and warm-up (the update whose compilation once failed on CUDA alone)."""
    configs = [tiny_config(n_steps=20, eval_every=10, learning_rate=3e-4, grad_clip=True, warmup=True),
               tiny_config(n_steps=20, eval_every=10, learning_rate=1e9, grad_clip=True, warmup=True)]
    eager = train_members(configs, [0, 1], device=device, pack=None, compile=False)
    fused = train_members(configs, [0, 1], device=device, pack=None, compile=True)
    assert_rows_equal(fused, eager, tol=COMPILED_TOL)
    assert {r["status"] for r in fused if r["learning_rate"] == 1e9} == {"diverged"}


def test_a_step_that_cannot_be_compiled_runs_eagerly_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """A compiler failure (here a stand-in raised by torch.compile's result) turns into eager calls and one
    CompileWarning; an error of the function itself still reaches the caller."""
    from trainables import compiling

    class InductorError(RuntimeError):  # named and placed as torch's own compiler error
        __module__ = "torch._inductor.exc"

    def broken_compile(fn: object, **_: object) -> object:
        def call(*args: object, **kwargs: object) -> object:
            raise InductorError("CompilationError: Scalar 2654435769 is out of range for type int32")
        return call

    monkeypatch.setattr(compiling.torch, "compile", broken_compile)
    calls: list[int] = []

    def double(x: int) -> int:
        calls.append(x)
        if x < 0:
            raise ValueError("negative")
        return 2 * x

    fn = compiling.compiled(double, True)
    with pytest.warns(compiling.CompileWarning, match=r"could not compile .*double \(InductorError: .*int32\); it "
                                                      r"runs eagerly"):
        assert fn(3) == 6
    assert fn(4) == 8 and calls == [3, 4]
    with pytest.raises(ValueError, match="negative"):
        fn(-1)
