"""Gros 2024's transformer bilayer, K independent members (seeds) stacked in one model.

One-hot token embedding (d = N, fixed; a ``d_model`` > N pads it with zeros), no positional embedding, then
one bilayer with pre-LN sub-layers and skip connections, then a flattened linear readout::

    x = onehot(tokens)                                   (K, B, T, d)
    x = x + A(LN1(x)) V(LN1(x))                          causal single-head attention, DPA or EA (head.py)
    x = x + W2 tanh(W1 LN2(x) + b1) + b2                 token-wise FFN, hidden 4d
    y = W_r flatten(x) + b_r                             (K, B, d), prediction = argmax

Choices the paper leaves open (named in ``docs/gros2024.md`` and the studies' ``fixed``):

* ``weights="per_token"``: every context position t has its own weight MATRICES W_Q, W_K, W_V (d x d),
  W1 (d x 4d) and W2 (4d x d); "one attention head per token" and the "token-wise" FFN read literally. The
  biases (of Q, K, V, W1, W2, the readout) and the LayerNorm gains/biases are shared by all positions. This
  gives 794 parameters for N2T5 at N_con = 16 (paper: 802) and 393,424 (paper: "about 4e5") for N16T5
  at N_con = 128. ``"shared"``: one set of matrices for all t (a standard transformer layer).
* LayerNorm with affine (PyTorch default, eps 1e-5, gain 1 / bias 0 at init). Without the LN bias (and the
  Q/K biases) EA is blind for N = 2: LN maps the two one-hot symbols to antiparallel vectors, and EA is
  invariant under z -> -z.
* No output projection after attention (the paper names Q, K, V only).
* Init: PyTorch's ``nn.Linear`` default, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for every matrix and bias.

Members are stacked along a leading axis K: each has its own init (drawn from its own generator) and its
gradients depend on its own loss only, so member k equals a K = 1 model of the same seed up to rounding. What
mixes the tokens is a mixer (``trainables.mixers.base``), called causal: the paper's head
(:class:`trainables.gros2024.head.PaperHead`, from each member's draws) or a registry mixer in its place
(``mixer``), built once per member and stacked by :func:`trainables.stacked.stack_modules`, so one forward
pass runs all members at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, Protocol, overload, runtime_checkable

import torch
import torch.nn.functional as F
from torch import nn

from trainables.gros2024.config import GrosConfig
from trainables.gros2024.head import PaperHead
from trainables.mixers import build_mixer
from trainables.stacked import stack_modules

FFN_FACTOR = 4


def parameter_shapes(cfg: GrosConfig) -> dict[str, tuple[int, ...]]:
    """Per-member parameter shapes (without the K axis), in initialisation order (LayerNorms excluded)."""
    d, t, n = cfg.width, cfg.n_context, cfg.basis
    pos = (t,) if cfg.weights == "per_token" else ()
    shapes: dict[str, tuple[int, ...]] = {}
    if cfg.mixer is None:
        shapes.update(wq=(*pos, d, d), wk=(*pos, d, d), wv=(*pos, d, d))
        if cfg.qkv_bias:
            shapes.update(bq=(d,), bk=(d,), bv=(d,))
    shapes.update(w1=(*pos, d, FFN_FACTOR * d), b1=(FFN_FACTOR * d,), w2=(*pos, FFN_FACTOR * d, d), b2=(d,),
                  wr=(t * d, n), br=(n,))
    return shapes


def _fan_in(name: str, cfg: GrosConfig) -> int:
    d = cfg.width
    return {"w2": FFN_FACTOR * d, "b2": FFN_FACTOR * d, "wr": cfg.n_context * d, "br": cfg.n_context * d}.get(name, d)


def _scale_linears(mixer: nn.Module, init_scale: float) -> nn.Module:
    """A registry mixer's ``nn.Linear`` weights and biases with their U(+-1/sqrt(fan_in)) bounds times ``init_scale``,
    as the bilayer's own (and the paper head's) are; the mixer's other parameters (NAP's gain and bias, the
    bilinear token matrix, the convolution's filters) keep their own initialisation. At 1 nothing is touched."""
    if init_scale != 1:
        with torch.no_grad():
            for layer in mixer.modules():
                if isinstance(layer, nn.Linear):
                    for p in (layer.weight, layer.bias):
                        if p is not None:
                            p.mul_(init_scale)
    return mixer


@runtime_checkable
class _Weighing(Protocol):
    """A mixer that also gives its attention weights (the paper's head, a registry mixer with ``weights``)."""

    def attention_weights(self, x: torch.Tensor, mask: torch.Tensor | None = None, *,
                          causal: bool = False) -> torch.Tensor: ...


class StackedBilayer:
    """K members of one configuration as stacked parameters ``(K, ...)``.

    Args:
        cfg: the configuration (shared by all members).
        seeds: one initialisation seed per member.
        device: where the parameters live.
    """

    def __init__(self, cfg: GrosConfig, seeds: Sequence[int], *, device: str | torch.device = "cpu") -> None:
        self.cfg = cfg
        self.k = len(seeds)
        per_member: list[dict[str, torch.Tensor]] = []
        mixers: list[nn.Module] = []
        head_names = ("wq", "wk", "wv", "bq", "bk", "bv")
        for seed in seeds:
            gen = torch.Generator().manual_seed(int(seed))
            params = {}
            for name, shape in parameter_shapes(cfg).items():
                bound = cfg.init_scale / math.sqrt(_fan_in(name, cfg))
                params[name] = (torch.rand(shape, generator=gen) * 2 - 1) * bound
            for ln in ("ln1", "ln2") if cfg.ln_affine else ():  # LayerNorm affine: gain 1, bias 0 (PyTorch's)
                params[f"{ln}_gain"], params[f"{ln}_bias"] = torch.ones(cfg.width), torch.zeros(cfg.width)
            if cfg.mixer is None:  # the paper's head, from this member's draws
                mixers.append(PaperHead({n: params.pop(n) for n in head_names if n in params},
                                        attention=cfg.attention, beta=cfg.beta, per_token=cfg.weights == "per_token"))
            per_member.append(params)
            if cfg.mixer is not None:
                torch.manual_seed(int(seed))  # the mixer module initialises from the global RNG
                # build_mixer passes a mixer the options it takes (bilinear: its fixed length = the context).
                mixer = build_mixer(cfg.mixer, cfg.width, cfg.n_heads, hidden_norm=False, attention_gelu=False,
                                    dropout=0.0, options={"seq_len": cfg.n_context})
                mixers.append(_scale_linears(mixer, cfg.init_scale))
        self.params = {name: torch.stack([p[name] for p in per_member]).to(device).requires_grad_()
                       for name in per_member[0]}
        self.mixer = stack_modules(mixers).to(device)  # the head or registry mixer; every parameter (K, ...)
        self.device = torch.device(device)

    def parameters(self) -> list[torch.Tensor]:
        """Every stacked tensor (K, ...): the bilayer's, then its mixer's."""
        return [*self.params.values(), *self.mixer.parameters()]

    def n_params(self) -> int:
        """Trainable parameters of ONE member."""
        return sum(p[0].numel() for p in self.parameters())

    def _token_linear(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """x (K, B, T, i) times w (K, T, i, j) per position, or (K, i, j) shared -> (K, B, T, j)."""
        if self.cfg.weights == "per_token":
            return torch.einsum("kbti,ktij->kbtj", x, w)
        return torch.einsum("kbti,kij->kbtj", x, w)

    def _layer_norm(self, x: torch.Tensor, name: str) -> torch.Tensor:
        """LayerNorm over d with each member's gain and bias (none with ``ln_affine=False``): x (K, B, T, d)."""
        if not self.cfg.ln_affine:
            return F.layer_norm(x, (x.shape[-1],))
        g, b = self.params[f"{name}_gain"][:, None, None], self.params[f"{name}_bias"][:, None, None]
        return torch.addcmul(b, F.layer_norm(x, (x.shape[-1],)), g)

    def mixer_input(self, tokens: torch.Tensor) -> torch.Tensor:
        """What the mixer sees for tokens (K, B, T): LN1 of their one-hot embedding, (K, B, T, d) (the probes)."""
        x = F.one_hot(tokens, self.cfg.width).to(self.params["w1"].dtype)
        return self._layer_norm(x, "ln1")

    def mix(self, h: torch.Tensor, *, weights_wanted: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attention sub-layer output and weights (K, B, T, T) (None for a mixer without weights, or when
        ``weights_wanted`` is False: the mixer computes its weights a second time for them). Causal, whatever
        mixes: the paper's head or a registry mixer in its place."""
        weights = None
        if weights_wanted and isinstance(self.mixer, _Weighing):  # has attention_weights
            weights = self.mixer.attention_weights(h, causal=True).mean(dim=2)  # (K, B, H, T, T) -> mean over heads
        mixed: torch.Tensor = self.mixer(h, causal=True)  # (K, B, T, d)
        return mixed, weights

    @overload
    def forward(self, tokens: torch.Tensor, *, return_attention: Literal[False] = False) -> torch.Tensor: ...

    @overload
    def forward(self, tokens: torch.Tensor, *, return_attention: Literal[True]
                ) -> tuple[torch.Tensor, torch.Tensor | None]: ...

    def forward(self, tokens: torch.Tensor, *, return_attention: bool = False
                ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor | None]:
        """Outputs (K, B, N) for tokens (K, B, T) (and the attention weights (K, B, T, T) if asked)."""
        cfg, p = self.cfg, self.params
        x = F.one_hot(tokens, cfg.width).to(p["w1"].dtype)  # (K, B, T, d), symbols in the first N dims
        y, a = self.mix(self._layer_norm(x, "ln1"), weights_wanted=return_attention)
        x = x + y
        hidden = torch.tanh(self._token_linear(self._layer_norm(x, "ln2"), p["w1"]) + p["b1"][:, None, None])
        x = x + self._token_linear(hidden, p["w2"]) + p["b2"][:, None, None]  # (K, B, T, d)
        k, b = tokens.shape[:2]
        out = torch.baddbmm(p["br"][:, None], x.reshape(k, b, -1), p["wr"])  # (K, B, N)
        return (out, a) if return_attention else out

    __call__ = forward
