"""The interface every token mixer implements (the "pooling" sub-module of a Transformer layer).

A mixer maps ``(..., B, N, d) -> (..., B, N, d)`` and is built as ``Mixer(d_model, n_heads, *, hidden_norm,
attention_gelu, dropout, **options)``; ``options`` are settings only some mixers take (``seq_len``,
``conv_width``): :func:`trainables.mixers.build_mixer` passes a mixer those its constructor names. Multi-head
mixers own the query/key/value projections and the mixing linear (Richter & Wattenhofer 2020, Sec. 2 and
App. C); reduce mixers (sum, max, mean) have no parameters.

**Masks.** Every mixer is called as ``mixer(x, mask=None, *, causal=False)``, as x-transformers' ``Attention``:

* ``mask`` is a key-padding mask, bool ``(..., B, N)`` broadcastable to ``x.shape[:-1]``, **True = a real
  token** (attend to it), False = padding; no token's output may depend on the content of a False position;
* ``causal=True``: token i mixes tokens j <= i only (no output depends on a later token);
* a token left with no key (every key masked) receives zeros before the output step (as
  ``F.scaled_dot_product_attention`` does); outputs at padded positions are finite and otherwise unspecified.

The defaults (``mask=None, causal=False``) run the very code that ran before masks existed, so every caller that
passes neither gets the same bits. A mixer declares what it supports (``supports_mask``, ``supports_causal``);
:meth:`Mixer.require` refuses the rest with an error naming the mixer.

**How ``weights`` takes ``allowed``.** A :class:`MultiHeadMixer` is called the way its ``weights`` signature
declares it: ``weights(q, k, allowed)`` for a third positional parameter (or ``*args``), ``weights(q, k,
allowed=allowed)`` for a parameter named ``allowed`` that is keyword-only or not third (or for ``**kwargs``).

**Written before masks.** A :class:`MultiHeadMixer` whose ``weights`` has no such parameter (``weights(self, q, k)``,
the interface before masks) still works where a task needs neither (the Richter tasks: it is called as
``weights(q, k)``); it supports neither a mask nor causality, so a task that needs one (CTL, NT) refuses it before
anything runs, with a line that quotes the signature found and says what to change (:meth:`Mixer.interface_hint`).

**Leading dimensions.** The leading ``...`` is empty for one model and ``K`` for K members stacked by
:func:`trainables.stacked.stack_modules` (every parameter then has a leading K axis too). A mixer is written
once for both: layers through :func:`~trainables.stacked.dense` / :func:`~trainables.stacked.norm`, tensors
indexed from the right (``dim=-2`` is the token axis), per-head parameters broadcast with
``p[..., None, :, None, None]``. That one definition is what trains solo and packed.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

from core.registry import Registry
from trainables.mixers._files import mixer_names
from trainables.stacked import dense, norm


def _import_mixer_files() -> None:
    """Import every mixer file of this folder (the registry's fill); each it imports must register exactly the mixer
    its file is named after (one imported before, e.g. by a plugin, registered when it was: it may be importing now)."""
    for name in mixer_names():
        if f"trainables.mixers.{name}" in sys.modules:
            continue
        before = set(MIXERS.names())
        importlib.import_module(f"trainables.mixers.{name}")
        added = set(MIXERS.names()) - before
        if added - {name} or (name not in MIXERS):
            raise ValueError(f"invalid mixer file trainables/mixers/{name}.py: it registers {sorted(added)}; "
                             f"allowed: exactly the mixer named after the file, {name!r}")


#: The one registry of mixers (``trainables.mixers.MIXERS`` is this object), filled with every mixer file of this
#: folder on its first use, so that every reader sees them all.
MIXERS: Registry[type[Mixer]] = Registry("mixer", fill=_import_mixer_files)
LN_EPS = 1e-3  # every LayerNorm of the encoder (the Keras default of the authors' release)


def allowed_keys(mask: torch.Tensor | None, causal: bool, n: int, device: torch.device) -> torch.Tensor | None:
    """Which key each query may attend to, bool broadcastable to (..., B, H, N_q, N_k); None = every key.

    ``mask`` (..., B, N) True = real token becomes (..., B, 1, 1, N); ``causal`` adds the lower triangle (N, N).
    """
    allowed = None if mask is None else mask[..., None, None, :]  # (..., B, 1, 1, N_k)
    if causal:
        tril = torch.ones(n, n, dtype=torch.bool, device=device).tril()  # (N_q, N_k): key j <= query i
        allowed = tril if allowed is None else allowed & tril  # (..., B, 1, N, N)
    return allowed


def token_mask(mask: torch.Tensor | None, x: torch.Tensor) -> torch.Tensor | None:
    """A key-padding mask (..., B, N) as (..., B, N, 1) in x's dtype (1 = real token); None stays None."""
    return None if mask is None else mask[..., None].to(x.dtype)


def count_keys(m: torch.Tensor | None, x: torch.Tensor, causal: bool) -> torch.Tensor:
    """Keys each token mixes, (..., B, N or 1, 1): all N, the real ones (``m`` from :func:`token_mask`), or
    those up to the token with ``causal``."""
    if m is None:
        m = torch.ones(x.shape[-2], 1, dtype=x.dtype, device=x.device)  # (N, 1)
    return m.cumsum(dim=-2) if causal else m.sum(dim=-2, keepdim=True)


def token_sum(x: torch.Tensor, mask: torch.Tensor | None = None, causal: bool = False) -> torch.Tensor:
    """Sum over the tokens a token may see, (..., B, 1, d) (broadcast to every token) or (..., B, N, d) causal."""
    if mask is not None:
        x = x.masked_fill(~mask[..., None], 0.0)  # padding contributes 0 (never its content, not even a NaN)
    return x.cumsum(dim=-2) if causal else x.sum(dim=-2, keepdim=True)


def token_mean(x: torch.Tensor, mask: torch.Tensor | None = None, causal: bool = False) -> torch.Tensor:
    """Mean over the tokens a token may see (0 where it sees none): (..., B, 1, d), or (..., B, N, d) causal."""
    if mask is None and not causal:
        return x.mean(dim=-2, keepdim=True)  # the unmasked path, bit for bit as before masks existed
    count = count_keys(token_mask(mask, x), x, causal)  # (..., B, 1 or N, 1)
    return token_sum(x, mask, causal) / count.clamp_min(1)


def token_max(x: torch.Tensor, mask: torch.Tensor | None = None, causal: bool = False) -> torch.Tensor:
    """Elementwise max over the tokens a token may see (0 where it sees none): (..., B, 1, d) or (..., B, N, d)."""
    if mask is not None:
        x = x.masked_fill(~mask[..., None], float("-inf"))  # padding never wins a max
    out = x.cummax(dim=-2).values if causal else x.amax(dim=-2, keepdim=True)
    if mask is None:
        return out
    seen = count_keys(token_mask(mask, x), x, causal) > 0  # (..., B, 1 or N, 1)
    return torch.where(seen, out, torch.zeros_like(out))


class Mixer(nn.Module):
    """Base class: token mixing ``(..., B, N, d) -> (..., B, N, d)``, called as ``mixer(x, mask, causal=...)``."""

    #: Whether ``forward`` honours a key-padding mask / ``causal=True`` (see the module docstring).
    supports_mask = False
    supports_causal = False

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        *,
        hidden_norm: bool = False,
        attention_gelu: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.d_model = d_model
        self.n_heads = n_heads

    if TYPE_CHECKING:  # nn.Module's __call__ returns Any to a type checker; a mixer's call (its forward) a tensor

        def __call__(self, x: torch.Tensor, mask: torch.Tensor | None = None, *,
                     causal: bool = False) -> torch.Tensor: ...

    #: True for a MultiHeadMixer whose ``weights(q, k)`` predates masks (set by MultiHeadMixer.__init_subclass__).
    legacy_weights = False
    #: How ``weights`` takes ``allowed``: ``positional``, ``keyword`` or None (a mixer written before masks).
    allowed_by: str | None = "positional"
    #: The signature of a MultiHeadMixer's ``weights``, as written (for messages about it).
    weights_signature = "(self, q, k, allowed=None)"

    @classmethod
    def require(cls, *, mask: bool = False, causal: bool = False) -> None:
        """ValueError naming this mixer unless it supports a padding mask (``mask``) and causality (``causal``)."""
        missing = [what for what, wanted, ok in (("a key-padding mask", mask, cls.supports_mask),
                                                 ("causal=True", causal, cls.supports_causal)) if wanted and not ok]
        if missing:
            raise ValueError(f"mixer {cls.registered_name()!r} does not support {' or '.join(missing)}; "
                             "allowed: a mixer whose forward(x, mask=None, *, causal=False) honours it "
                             f"(supports_mask / supports_causal, docs/mixers.md){cls.interface_hint()}")

    @classmethod
    def interface_hint(cls) -> str:
        """What to change in a mixer written before masks (empty for every other mixer)."""
        if not cls.legacy_weights:
            return ""
        return (f"; its weights{cls.weights_signature} takes no `allowed` (the interface before masks): define "
                "weights(self, q, k, allowed=None) whose weights are 0 where allowed is False, and it supports both")

    def split_into_heads(self) -> None:
        """Set ``d_head`` = d / H for a mixer with per-head parts; a width the heads do not divide is an error
        naming both."""
        if self.d_model % self.n_heads:
            raise ValueError(f"invalid d_model={self.d_model}; allowed: a multiple of n_heads={self.n_heads}")
        self.d_head = self.d_model // self.n_heads

    @classmethod
    def registered_name(cls) -> str:
        """The registry name of this class (its class name if it is not registered)."""
        return next((name for name in MIXERS.names() if MIXERS.get(name) is cls), cls.__name__)

    def init_output(self, *, hidden_norm: bool, attention_gelu: bool) -> None:
        """Create the output step that projecting mixers share: [LayerNorm] -> [GELU] -> mixing linear W_O.

        Called where the subclass creates W_O, so that parameter creation (and init RNG) order stays put.
        """
        self.mix = nn.Linear(self.d_model, self.d_model)  # W_O
        self.hidden_norm = nn.LayerNorm(self.d_model, eps=LN_EPS) if hidden_norm else None
        self.attention_gelu = attention_gelu

    def output(self, o: torch.Tensor) -> torch.Tensor:
        """The output step on mixed tokens (..., d): [hidden LayerNorm (MTE)] -> [GELU (MTE)] -> W_O."""
        if self.hidden_norm is not None:
            o = norm(o, self.hidden_norm)
        if self.attention_gelu:
            o = F.gelu(o, approximate="tanh")
        return dense(o, self.mix)


class MultiHeadMixer(Mixer):
    """Multi-head "attention" skeleton: projections -> per-head pooling -> [LN] -> [GELU] -> mixing linear.

    Subclasses implement :meth:`weights` (the attention weights from queries and keys, zero at keys not allowed)
    and may override :meth:`pool`. ``dropout`` is applied to the attention weights (BERT's attention-probs
    dropout). Masks and causality reach both as ``allowed`` (:func:`allowed_keys`).

    Args:
        d_model: model width d; d_h = d / n_heads per head.
        n_heads: number of heads M.
        hidden_norm: MTE's LayerNorm on the concatenated head outputs before the mixing linear.
        attention_gelu: MTE's GELU (tanh approx.) after that LayerNorm, before the mixing linear.
        dropout: dropout probability on the attention weights during training.
    """

    supports_mask = True
    supports_causal = True

    def __init_subclass__(cls, **kwargs: object) -> None:
        """Read from the signature of a subclass's own ``weights`` how it takes ``allowed`` (module docstring); one
        that takes none (and whose ``pool`` is ours) was written before masks: it is called as ``weights(q, k)`` and
        supports neither a mask nor causality."""
        super().__init_subclass__(**kwargs)
        if "weights" not in cls.__dict__:
            return
        cls.weights_signature, cls.allowed_by = _allowed_parameter(cls.__dict__["weights"])
        if "pool" in cls.__dict__:
            return  # its own pool calls weights (call_weights: as declared)
        if cls.allowed_by is not None:
            if cls.legacy_weights:  # a subclass of a mixer written before masks, itself written after
                cls.legacy_weights = False
                cls.supports_mask = cls.__dict__.get("supports_mask", True)
                cls.supports_causal = cls.__dict__.get("supports_causal", True)
            return
        declared = [f for f in ("supports_mask", "supports_causal") if cls.__dict__.get(f)]
        if declared:
            raise TypeError(f"mixer class {cls.__name__} declares {' and '.join(declared)} but its "
                            f"weights{cls.weights_signature} takes no `allowed`, so it cannot honour them; allowed: "
                            "weights(self, q, k, allowed=None) (docs/mixers.md)")
        cls.legacy_weights, cls.supports_mask, cls.supports_causal = True, False, False

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        *,
        hidden_norm: bool = False,
        attention_gelu: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__(d_model, n_heads)
        self.split_into_heads()
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.init_output(hidden_norm=hidden_norm, attention_gelu=attention_gelu)
        self.dropout = dropout

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Queries, keys, values per head, each (..., B, H, N, d_h) (views of one qkv projection)."""
        qkv = torch.unflatten(dense(x, self.qkv), -1, (3, self.n_heads, self.d_head))  # (..., B, N, 3, H, d_h)
        q, k, v = qkv.movedim(-3, 0).transpose(-3, -2).unbind(0)  # 3 x (..., B, H, N, d_h)
        return q, k, v

    def weights(self, q: torch.Tensor, k: torch.Tensor, allowed: torch.Tensor | None = None) -> torch.Tensor:
        """Attention weights (..., H, N_query, N_key) from q, k (..., H, N, d_h); 0 where ``allowed`` is False."""
        raise NotImplementedError

    def pool(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
             allowed: torch.Tensor | None = None) -> torch.Tensor:
        """Head outputs (..., H, N, d_h) = weights @ v, with attention dropout on the weights while training."""
        if self.legacy_weights and allowed is not None:  # unreachable through the families, which refuse it first
            self.require(mask=True, causal=True)
        a = self.call_weights(q, k, allowed)
        if self.training and self.dropout > 0:
            a = F.dropout(a, self.dropout)
        return a @ v

    def attention_weights(self, x: torch.Tensor, mask: torch.Tensor | None = None, *,
                          causal: bool = False) -> torch.Tensor:
        """The attention weights (..., B, H, N, N) this mixer uses on input x (..., B, N, d); for tests and plots."""
        q, k, _ = self.project(x)
        return self.call_weights(q, k, allowed_keys(mask, causal, x.shape[-2], x.device))

    def call_weights(self, q: torch.Tensor, k: torch.Tensor, allowed: torch.Tensor | None) -> torch.Tensor:
        """``weights`` called the way its signature takes ``allowed`` (:attr:`allowed_by`; without it: none)."""
        if self.allowed_by == "keyword":
            return self.weights(q, k, allowed=allowed)
        if self.allowed_by == "positional":
            return self.weights(q, k, allowed)
        return self.weights(q, k)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, *, causal: bool = False) -> torch.Tensor:
        q, k, v = self.project(x)
        o = self.pool(q, k, v, allowed_keys(mask, causal, x.shape[-2], x.device))  # (..., B, H, N, d_h)
        o = o.transpose(-3, -2).flatten(-2)  # (..., B, N, H * d_h) = (..., B, N, d), heads concatenated
        return self.output(o)  # (..., B, N, d)


def _allowed_parameter(weights: Callable[..., object]) -> tuple[str, str | None]:
    """(the signature of ``weights`` as written, how it takes ``allowed``: ``positional``, ``keyword`` or None).

    A parameter named ``allowed`` is passed by keyword unless it is the third after self (q, k, allowed), whatever
    its kind (keyword-only included); else a third positional parameter of another name or ``*args`` gets it by
    position, ``**kwargs`` by keyword; else it takes none.
    """
    import inspect

    function: Callable[..., object] = getattr(weights, "__func__", weights)  # a static or class method: its function
    signature = inspect.signature(function)
    parameters = list(signature.parameters.values())
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    named = signature.parameters.get("allowed")
    if named is not None and named.kind is not named.VAR_POSITIONAL and named.kind is not named.VAR_KEYWORD:
        third = len(positional) > 3 and positional[3] is named
        return str(signature), "positional" if third or named.kind is named.POSITIONAL_ONLY else "keyword"
    if len(positional) > 3 or any(p.kind is p.VAR_POSITIONAL for p in parameters):
        return str(signature), "positional"
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return str(signature), "keyword"
    return str(signature), None


def per_head(p: torch.Tensor) -> torch.Tensor:
    """A per-head parameter (H,) or stacked (K, H) viewed to broadcast against (..., B, H, N, x)."""
    return p[..., None, :, None, None]  # (1, H, 1, 1) or (K, 1, H, 1, 1)


def no_key_to_zero(a: torch.Tensor, allowed: torch.Tensor | None) -> torch.Tensor:
    """Weights (..., N_q, N_k) with the rows of queries that may attend to no key set to 0 (SDPA's convention)."""
    return a if allowed is None else a.masked_fill(~allowed.any(dim=-1, keepdim=True), 0.0)
