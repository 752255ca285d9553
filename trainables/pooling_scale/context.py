"""No-training measurement of Richter & Wattenhofer 2020's Sec. 3 claim (task ``context_share``): at initialisation
the fraction of context information in a Transformer layer's e^i = x^i + (mixer sub-module)^i is smaller for longer
sequences, and the MTE's normalisation (App. D) removes that dependence.

Per seed, the first layer of the project's model for architecture ``pooling`` (``BERT``, ``MTE``, ``NAP``, ``NON``:
:func:`trainables.richter2020.model.build_model`, d_model = ``d_head``, its heads, LN placement and init as it
trains, initialised under ``torch.manual_seed(seed)``) receives ``n_vectors / seq_len`` sequences of N tokens drawn
from N(0, I) (unit scale, as after a LayerNorm). e^i is the residual plus what the mixer sub-module adds to it
(:meth:`~trainables.richter2020.model.Layer.mixer_branch`: BERT before its LayerNorm, the MTE style with its LN on
the branch). The share of context is the variance of e^0 that the other tokens account for (a total-effect index):
each sequence is paired with a second one that keeps token 0 and redraws tokens 1 .. N-1, and

    context_share = mean over sequences and dims of (e^0 - e'^0)^2 / 2  /  mean over dims of Var(e^0),

the variance over the sequences. 0: e^0 depends on x^0 alone; 1: on the context alone. ``context_share_log10`` is
its base-10 logarithm (BERT's share falls like 1/N: a ratio between lengths is a difference of logarithms).
"""

from __future__ import annotations

import math

import torch

from trainables.pooling_scale.config import PoolingScaleConfig
from trainables.richter2020.config import TrainConfig
from trainables.richter2020.model import Layer, Model, build_model

#: attention logits per forward chunk (sequences x N x N): bounds the memory of N = 2048
CHUNK_LOGITS = 2**24


def initialised_model(config: PoolingScaleConfig, seed: int, n_layers: int = 1) -> Model:
    """The architecture ``config.pooling``'s model of ``n_layers`` layers, d_model = ``d_head``, for the cases task at
    N = ``seq_len`` (token and learned position embeddings) at initialisation (its init drawn under ``seed``; the global
    RNG is left as it was)."""
    train = TrainConfig(architecture=config.pooling, task="cases", d_model=config.d_head, n_layers=n_layers,
                        seq_len=config.seq_len)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build_model(train).eval()


def first_layer(config: PoolingScaleConfig, seed: int) -> Layer:
    """Layer 0 of the architecture's model at initialisation (:func:`initialised_model`)."""
    layer = initialised_model(config, seed).layers[0]
    assert isinstance(layer, Layer)
    return layer


def first_token(layer: Layer, x: torch.Tensor) -> torch.Tensor:
    """e^0 = x^0 + the mixer branch at token 0, (S, d), for sequences x (S, N, d), in chunks of sequences."""
    n = x.shape[1]
    chunk = max(1, CHUNK_LOGITS // (n * n))
    with torch.no_grad():
        return torch.cat([(part + layer.mixer_branch(part))[:, 0] for part in torch.split(x, chunk)])


def context_measures(config: PoolingScaleConfig, seed: int) -> dict[str, float]:
    """``context_share`` and ``context_share_log10`` of one seed (module docstring)."""
    g = torch.Generator().manual_seed(seed)
    n_seq, n, d = config.n_vectors // config.seq_len, config.seq_len, config.d_head
    x = torch.randn(n_seq, n, d, generator=g)  # (S, N, d)
    other = torch.cat([x[:, :1], torch.randn(n_seq, n - 1, d, generator=g)], dim=1)  # token 0 kept, context redrawn
    layer = first_layer(config, seed)
    e, e_other = first_token(layer, x).double(), first_token(layer, other).double()  # (S, d) each
    context = float(((e - e_other) ** 2).mean() / 2)
    share = context / float(e.var(dim=0).mean())
    return {"context_share": share, "context_share_log10": math.log10(share) if share > 0 else -math.inf}
