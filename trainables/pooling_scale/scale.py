"""No-training measurement of pooling output scale vs sequence length (Richter & Wattenhofer 2020, Fig. 1
middle/right and App. B).

``n_vectors`` value/key/query vectors of dimension d_h are drawn from N(0, I), split into sequences of
length N, and pooled: softmax attention as in Sec. 2 (logits q.k / sqrt(d_h), no projections), the registry's
reduce mixers mean / sum / max (``trainables.mixers``) over the sequence, "normalized" = the sum outputs
standardised over the d_h vector dimension, "non" = NON's weighting (Sec. 4): the same logits used directly as
weights, the weighted sum scaled by 1 / sqrt(N) (before NON's GELU, which the claim of a length-independent
contribution of context does not need), and "normalized_mean" / "_max" / "_softmax": those poolings' outputs, on their
own draws, standardised the same way (App. B: the normalisation "can be applied to any of the aggregation
methods"). A reduce mixer gives every token of a sequence the same output, so one token per sequence is kept
(duplicates change neither the std over values nor the mean norm).
"""

from __future__ import annotations

import math
from dataclasses import replace

import torch

from trainables.mixers import build_mixer
from trainables.pooling_scale.config import STANDARDISED, PoolingScaleConfig


def _reduce(name: str, v: torch.Tensor) -> torch.Tensor:
    """The registry mixer ``name`` (a parameter-free reduce) over the tokens of v (S, N, d_h): (S, d_h)."""
    mixer = build_mixer(name, v.shape[-1], 1, hidden_norm=False, attention_gelu=False, dropout=0.0)
    return mixer(v)[:, 0]  # (S, N, d_h) -> (S, d_h): every token holds the same reduction


def _standardised(out: torch.Tensor) -> torch.Tensor:
    """Each vector of ``out`` (..., d_h) standardised over its d_h dimension (App. B's normalisation)."""
    std, mean = torch.std_mean(out, dim=-1, correction=0, keepdim=True)
    return (out - mean) / std


def pooled(config: PoolingScaleConfig, seed: int) -> torch.Tensor:
    """The pooled vectors of one seed, (vectors, d_h): one per token (softmax) or one per sequence (reduces)."""
    if config.pooling.startswith(STANDARDISED):  # the pooling after the prefix, on its own draws, standardised
        return _standardised(pooled(replace(config, pooling=config.pooling.removeprefix(STANDARDISED)), seed))
    g = torch.Generator().manual_seed(seed)
    n_seq, d = config.n_vectors // config.seq_len, config.d_head
    v = torch.randn(n_seq, config.seq_len, d, generator=g)  # (S, N, d_h)
    if config.pooling in ("softmax", "non"):
        q = torch.randn(n_seq, config.seq_len, d, generator=g)  # (S, N, d_h)
        k = torch.randn(n_seq, config.seq_len, d, generator=g)  # (S, N, d_h)
        logits = q @ k.transpose(1, 2) / math.sqrt(d)  # (S, N, N)
        if config.pooling == "softmax":
            out = torch.softmax(logits, dim=-1) @ v  # (S, N, d_h)
        else:  # NON: the logits as weights, scaled by 1 / sqrt(N)
            out = logits @ v / math.sqrt(config.seq_len)  # (S, N, d_h)
    elif config.pooling == "normalized":
        out = _standardised(_reduce("sum", v))  # (S, d_h), standardised over the vector dimension
    else:
        out = _reduce(config.pooling, v)  # (S, d_h)
    return out.reshape(-1, d)  # (vectors, d_h)


def pooling_output_scale(config: PoolingScaleConfig, seed: int) -> dict[str, float]:
    """Std over all output values, its log10 (scales compared as ratios: "within a factor of 2" is a level of 0.3)
    and mean output-vector norm: ``{"output_std": ..., "output_std_log10": ..., "output_norm": ...}``."""
    out = pooled(config, seed)  # (vectors, d_h)
    std = float(out.std())
    return {"output_std": std, "output_std_log10": math.log10(std) if std > 0 else -math.inf,
            "output_norm": float(out.norm(dim=-1).mean())}
