"""No-training measurement of Yun et al. 2020's Claim 1 (App. A; task ``equivariance``): a stack of Transformer blocks
(self-attention and token-wise feed-forward layers) is permutation equivariant, "the function class is restricted to
permutation equivariant functions", and positional encodings remove the restriction (Sec. 1, Theorem 3).

Per seed, the layers of the project's model for architecture ``pooling`` (``BERT``, ``MTE``, ``NAP``, ``NON``:
:func:`trainables.pooling_scale.context.initialised_model` with ``LAYERS`` layers, d_model = ``d_head``, its heads,
LayerNorms and init as it trains) map ``n_vectors / seq_len`` sequences X of N tokens drawn from N(0, I); each
sequence gets a random derangement P of its tokens (a permutation that moves every token), (PX)_i = X_{p(i)}.
Reported:

* ``equivariant_share``: the share of tokens whose output on PX equals the permuted output on X, f(PX)_i = f(X)_{p(i)},
  within ``TOLERANCE`` times the sequence's largest output entry (the layers as the class the claim is about: no
  positional encoding);
* ``positional_equivariant_share``: the same for g(X) = f(X + E), E the model's learned positional embedding as
  initialised (the contrast: a token's output now depends on where it sits).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from trainables.pooling_scale.config import PoolingScaleConfig
from trainables.pooling_scale.context import initialised_model
from trainables.pooling_scale.mixing import TOLERANCE
from trainables.richter2020.model import Model

#: Transformer blocks in the measured stack: a composition, not one block alone.
LAYERS = 2


def encode(model: Model, x: torch.Tensor, positional: bool) -> torch.Tensor:
    """The model's layers on token vectors x (S, N, d), after its positional embedding when ``positional``."""
    if positional:
        assert model.pos_emb is not None
        x = x + model.pos_emb[: x.shape[-2]]
    for layer in model.layers:
        x = layer(x)
    return x


def permutations(n_seq: int, n: int, g: torch.Generator) -> torch.Tensor:
    """One random derangement of 0 .. n-1 per sequence (S, N): a uniformly drawn permutation that moves every token
    (rows with a fixed point are drawn again), so that with a positional encoding every token's own input changes."""
    p = torch.rand(n_seq, n, generator=g).argsort(dim=-1)
    while (fixed := (p == torch.arange(n)).any(dim=-1)).any():
        p[fixed] = torch.rand(int(fixed.sum()), n, generator=g).argsort(dim=-1)
    return p


def equivariant_share(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, p: torch.Tensor) -> float:
    """The share of tokens with f(PX)_i = f(X)_{p(i)} (module docstring) for x (S, N, d) and permutations p (S, N)."""
    index = p[..., None].expand_as(x)  # (S, N, d)
    with torch.no_grad():
        out, out_permuted = f(x), f(x.gather(1, index))  # (S, N, d) each
    scale = out.abs().amax(dim=(1, 2)).double()[:, None]  # (S, 1)
    gap = (out_permuted - out.gather(1, index)).abs().amax(dim=-1).double()  # (S, N)
    return float((gap <= TOLERANCE * scale).double().mean())


def equivariance_measures(config: PoolingScaleConfig, seed: int) -> dict[str, float]:
    """``equivariant_share`` and ``positional_equivariant_share`` of one seed (module docstring)."""
    g = torch.Generator().manual_seed(seed)
    n_seq, n, d = config.n_vectors // config.seq_len, config.seq_len, config.d_head
    x = torch.randn(n_seq, n, d, generator=g)  # (S, N, d)
    p = permutations(n_seq, n, g)
    model = initialised_model(config, seed, LAYERS)
    return {"equivariant_share": equivariant_share(lambda v: encode(model, v, False), x, p),
            "positional_equivariant_share": equivariant_share(lambda v: encode(model, v, True), x, p)}
