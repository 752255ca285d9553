"""No-training measurement of Yun et al. 2020's Sec. 5.1 sentences on its cheaper token mixers (task
``mixer_properties``): the bilinear projection "incurs smaller number of matrix multiplications as compared to the
dot-product attention", "the number of parameters in this layer depend on the sequence length", "the weights used to
compute the contextual embeddings are independent of the inputs, whereas in self-attention the weights depend on"
them, and the depth-wise separable convolution addresses the first drawback.

Per seed, the mixer ``pooling`` (``softmax``, ``bilinear`` or ``sepconv`` of ``trainables.mixers``, one head,
d_model = ``d_head``, built for N = ``seq_len`` as the model builder builds it: the bilinear's N x N matrix for that
N, the convolution's default filter length 31; initialised under ``torch.manual_seed(seed)``). Reported:

* ``mixer_params``: its parameter count;
* ``matmuls`` / ``macs``: the matrix products of one forward on one sequence and their multiply-adds with the
  convolution's (:mod:`trainables.pooling_scale.cost`), and ``matmuls_saved`` / ``macs_saved``: softmax attention's
  at the same d, N and heads minus this mixer's (a positive number: fewer than dot-product attention);
* ``input_dependent_share``: the mixer's token-mixing weights (:func:`token_weights`: softmax's attention weights,
  the bilinear's W_P, the convolution's banded filter matrix) on ``n_vectors / seq_len`` sequences drawn from
  N(0, I) and on as many other draws: the share of (sequence, head, query token) rows whose weights differ between
  the two inputs by more than ``TOLERANCE`` times the row's largest weight (softmax: every row; weights that do not
  depend on the input: none).
"""

from __future__ import annotations

import dataclasses

import torch

from trainables.mixers.base import Mixer, MultiHeadMixer
from trainables.mixers.bilinear import BilinearProjection
from trainables.mixers.sepconv import SeparableConvolution, shared_filter_conv
from trainables.pooling_scale.config import PoolingScaleConfig
from trainables.pooling_scale.cost import macs, matmuls
from trainables.pooling_scale.mixing import TOLERANCE, build
from trainables.stacked import count_parameters


def token_weights(mixer: Mixer, x: torch.Tensor) -> torch.Tensor:
    """The weights (S, H, N_query, N_key) with which ``mixer`` mixes the tokens of x (S, N, d): output token i of head
    (filter) h is sum_j w[s, h, i, j] times token j's value (softmax: V; bilinear: x itself; sepconv: the GLU's
    output); the forward computes exactly these (tests/test_yun_mixer_properties.py)."""
    s, n, _ = x.shape
    if isinstance(mixer, MultiHeadMixer):
        return mixer.attention_weights(x)  # (S, H, N, N), from x's queries and keys
    if isinstance(mixer, BilinearProjection):
        return mixer.seq_weight.expand(s, 1, n, n)  # W_P (N_out, N_in), the same for every input
    if isinstance(mixer, SeparableConvolution):
        h = mixer.n_heads
        one_hot = torch.eye(n).unsqueeze(-1).expand(n, n, h)  # (B = N, N, H): batch j is token j alone, H channels
        response = shared_filter_conv(one_hot, mixer.taps())  # (N_key, N_query, H): response[j, i, h] = w[h, i, j]
        return response.permute(2, 1, 0).expand(s, h, n, n)  # channel h < H uses filter h
    raise ValueError(f"invalid mixer={type(mixer).registered_name()!r} for token weights; allowed: a multi-head "
                     "mixer, bilinear, sepconv")


def changed_share(a: torch.Tensor, b: torch.Tensor) -> float:
    """The share of rows (..., N) whose entries differ between a and b by more than ``TOLERANCE`` times the row's
    largest absolute entry in either."""
    scale = torch.maximum(a.abs().amax(dim=-1), b.abs().amax(dim=-1)).double()
    gap = (a - b).abs().amax(dim=-1).double()
    return float((gap > TOLERANCE * scale).double().mean())


def mixer_measures(config: PoolingScaleConfig, seed: int) -> dict[str, float]:
    """``mixer_params``, ``matmuls``, ``macs``, ``matmuls_saved``, ``macs_saved`` and ``input_dependent_share`` of
    one seed (module docstring)."""
    g = torch.Generator().manual_seed(seed)
    n_seq, n, d = config.n_vectors // config.seq_len, config.seq_len, config.d_head
    x, other = torch.randn(n_seq, n, d, generator=g), torch.randn(n_seq, n, d, generator=g)  # (S, N, d) each
    mixer, attention = build(config, seed), build(dataclasses.replace(config, pooling="softmax"), seed)
    with torch.no_grad():
        dependent = changed_share(token_weights(mixer, x), token_weights(mixer, other))
    return {"mixer_params": float(count_parameters(mixer)), "matmuls": float(matmuls(mixer, n)),
            "macs": float(macs(mixer, n)), "matmuls_saved": float(matmuls(attention, n) - matmuls(mixer, n)),
            "macs_saved": float(macs(attention, n) - macs(mixer, n)), "input_dependent_share": dependent}
