"""No-training measurement of pooling output scale vs sequence length (Richter & Wattenhofer 2020, Fig. 1
middle/right and App. B).

``n_vectors`` value/key/query vectors of dimension d_h are drawn from N(0, I), split into sequences of
length N, and pooled: softmax attention as in Sec. 2 (logits q.k / sqrt(d_h)), mean/sum/max reduce of
the values over the sequence, and "normalized" = the sum outputs standardised over the d_h vector
dimension. Reduce outputs are identical for every token of a sequence, so they are computed once per
sequence (duplicates change neither the std over values nor the mean norm).
"""

from __future__ import annotations

import math

import torch

POOLINGS: tuple[str, ...] = ("softmax", "mean", "sum", "max", "normalized")


def pooling_output_scale(
    pooling: str, seq_len: int, seed: int, d_head: int = 128, n_vectors: int = 16384
) -> dict[str, float]:
    """Std over all output values and mean output-vector norm of ``pooling`` at sequence length ``seq_len``.

    Returns ``{"output_std": ..., "output_norm": ...}``. ``n_vectors`` must be a multiple of ``seq_len``.
    """
    if pooling not in POOLINGS:
        raise ValueError(f"unknown pooling {pooling!r}; valid: {', '.join(POOLINGS)}")
    if seq_len <= 0 or n_vectors % seq_len:
        raise ValueError(f"invalid seq_len={seq_len}; allowed: a positive divisor of n_vectors={n_vectors}")
    g = torch.Generator().manual_seed(seed)
    n_seq = n_vectors // seq_len
    v = torch.randn(n_seq, seq_len, d_head, generator=g)  # (S, N, d_h)
    if pooling == "softmax":
        q = torch.randn(n_seq, seq_len, d_head, generator=g)  # (S, N, d_h)
        k = torch.randn(n_seq, seq_len, d_head, generator=g)  # (S, N, d_h)
        out = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d_head), dim=-1) @ v  # (S, N, d_h)
    elif pooling == "mean":
        out = v.mean(dim=1)  # (S, d_h)
    elif pooling == "max":
        out = v.amax(dim=1)  # (S, d_h)
    else:
        out = v.sum(dim=1)  # (S, d_h)
        if pooling == "normalized":
            std, mean = torch.std_mean(out, dim=-1, correction=0, keepdim=True)  # (S, 1) each
            out = (out - mean) / std  # (S, d_h), standardised over the vector dimension
    out = out.reshape(-1, d_head)  # (vectors, d_h)
    return {"output_std": float(out.std()), "output_norm": float(out.norm(dim=-1).mean())}
