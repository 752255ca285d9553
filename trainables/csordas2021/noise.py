"""Each member's own random draws in a CTL model (dropout, gate dropout): one generator per member.

A one-seed run draws its dropout masks from torch's default generator, in the order its forward pass asks for them
and in the shapes of its own batch. A member of a stacked model draws the same: from its own generator, which starts
where the default generator of its device stood after the member's initialisation (:func:`member_generator`; one
model alone draws from the default generator itself), in the shape its own batch had (``widths``: its own token
count; the stacked batch is padded to the widest member's, and a member's padded positions get a mask of zeros,
which nothing real reads). So member k's masks are those of seed k trained alone, bit for bit
(tests/test_csordas2021_packed.py).

A mask is computed as ``F.dropout`` computes it on the CPU (``at::_dropout``): a Bernoulli(1 - p) tensor made with
``empty_like`` of the input (so in the input's memory layout), divided by 1 - p, multiplied in. So a one-seed run
through :class:`MemberNoise` equals, on the CPU, the run through ``F.dropout`` it replaced, bit for bit; on CUDA it
uses these kernels instead of the fused dropout kernel (same distribution, other draws), and a stacked run draws
what the one-seed run draws there too. Not covered: a registry mixer's own attention dropout (``att_dropout`` of
the plain Transformer, 0 in every CTL row) draws from torch's default generator, so in a stack of K > 1 its masks
are not a one-seed run's (same distribution, other draws).

Where a draw falls (``along``): ``tokens`` (dim -2 is the token axis: activations, keys, gates), ``offsets``
(dim -2 holds the 2N - 1 relative offsets -(N-1)..N-1 of relative attention; a member's are the 2w - 1 around 0)
or ``whole`` (no token axis: the LSTM's read-out state).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F

TOKENS, OFFSETS, WHOLE = "tokens", "offsets", "whole"


def member_generator(device: str | torch.device, seed: int, *, alone: bool) -> torch.Generator:
    """Where a member's dropout draws come from; call it right after ``torch.manual_seed(seed)`` and the member's
    initialisation (which draws on the CPU).

    ``alone`` (one model, K = 1): torch's default generator of ``device`` itself, so every draw of the model, a
    registry mixer's own attention dropout included, comes from it in the order it always did. A member of a stack:
    a generator of its own that starts where that default generator stands now, i.e. on the CPU a copy of its state,
    on an accelerator seeded with ``seed`` (``torch.manual_seed`` seeds every device alike; the initialisation drew
    nothing there). The meta device (shapes only) takes a CPU generator: nothing is drawn.
    """
    kind = torch.device(device).type
    if kind in ("cpu", "meta"):
        if alone:
            return torch.default_generator
        generator = torch.Generator()
        generator.set_state(torch.get_rng_state())
        return generator
    if alone and kind == "cuda":
        index = torch.device(device).index
        return torch.cuda.default_generators[torch.cuda.current_device() if index is None else index]
    return torch.Generator(device=device).manual_seed(seed)


class MemberNoise:
    """The dropout of K members (one model when not ``stacked``), each from its own generator.

    Args:
        generators: one per member, in member order (:func:`member_generator`).
        stacked: whether the tensors have a leading member axis K (False: one model, one generator).

    ``widths`` (set by the loop for every training batch): each member's own token count; None means every member
    uses the whole token axis (evaluation, or one model).
    """

    def __init__(self, generators: Sequence[torch.Generator], *, stacked: bool) -> None:
        if not stacked and len(generators) != 1:
            raise ValueError(f"invalid generators: {len(generators)} for one model; allowed: exactly 1")
        self.generators = list(generators)
        self.stacked = stacked
        self.widths: list[int] | None = None

    def _region(self, part: torch.Tensor, k: int, along: str) -> torch.Tensor:
        """Member k's own part of its slice ``part`` (the slice without the member axis)."""
        if self.widths is None or along == WHOLE:
            return part
        w = self.widths[k]
        if along == TOKENS:
            return part.narrow(-2, 0, w)
        n = (part.shape[-2] + 1) // 2  # 2n - 1 offsets; offset 0 sits at n - 1
        return part.narrow(-2, n - w, 2 * w - 1)

    def _draw(self, like: torch.Tensor, along: str,
              draw: Callable[[torch.Tensor, torch.Generator], torch.Tensor]) -> torch.Tensor:
        """``draw(template, generator)`` per member on its own region of ``like``, assembled (zeros elsewhere)."""
        if not self.stacked:
            return draw(like, self.generators[0])
        out: torch.Tensor | None = None
        for k, generator in enumerate(self.generators):
            part = draw(self._region(like[k], k, along), generator)
            if out is None:
                out = torch.zeros(like.shape, dtype=part.dtype, device=like.device)
            self._region(out[k], k, along).copy_(part)
        assert out is not None  # a stack has at least one member
        return out

    def dropout(self, x: torch.Tensor, p: float, training: bool = True, along: str = TOKENS) -> torch.Tensor:
        """``F.dropout(x, p, training)`` with each member's own mask (see the module docstring)."""
        if p == 0 or not training or x.numel() == 0:
            return x
        if p == 1:
            return x * torch.zeros((), dtype=x.dtype, device=x.device)
        noise = self._draw(x.detach(), along, lambda part, g: torch.empty_like(part).bernoulli_(1 - p, generator=g))
        noise.div_(1 - p)
        return x * noise

    def keep(self, shape: torch.Size, p: float, device: torch.device) -> torch.Tensor:
        """Bool ``shape`` (..., B, N, 1): True where a (sample, position) keeps its gate (probability 1 - p), drawn
        as ``torch.rand(shape) >= p`` in the default dtype."""
        like = torch.empty(shape, dtype=torch.bool, device=device)
        return self._draw(like, TOKENS,
                          lambda part, g: torch.rand(part.shape, generator=g, device=part.device) >= p)


def dropout(x: torch.Tensor, p: float, training: bool, noise: MemberNoise | None,
            along: str = TOKENS) -> torch.Tensor:
    """Dropout from the members' own generators, or from torch's default one (``F.dropout``) without ``noise``."""
    return F.dropout(x, p, training) if noise is None else noise.dropout(x, p, training, along)


def gate_keep(shape: torch.Size, p: float, device: torch.device, noise: MemberNoise | None) -> torch.Tensor:
    """:meth:`MemberNoise.keep`, or ``torch.rand(shape) >= p`` from torch's default generator without ``noise``."""
    if noise is None:
        return torch.rand(shape, device=device) >= p
    return noise.keep(shape, p, device)
