"""Depth-wise separable convolution with GLU and filter reuse (Yun et al. 2020, App. D; Wu et al. 2019).

Yun et al. replace the lower self-attention layers by "a GLU layer followed by the convolution layer ... 16
separable convolution filters, of filter length 128, ... each filter operating on 48 of the 768 dimensions"
(arXiv:1912.10077), following the lightweight convolution of Wu et al. 2019 (arXiv:1901.10430):

    u = GLU(W_in x)               W_in: d -> 2d, GLU halves it back to d
    c_i[ch] = sum_t w[h(ch), t] u_{i + t - (k-1)//2}[ch]    depth-wise, one filter per channel group
    o = W_O c                     output projection

with H = ``n_heads`` filters w (H, k) of length k = ``conv_width``, reused across groups of d/H channels:
channel ch uses filter ch mod H (fairseq's ``LightweightConv`` layout, ``input.view(-1, H, T)``). Each filter
is softmax-normalised over its k taps (Wu et al.'s ``weight_softmax``, their default), so at init the
layer is close to a local average. Padding is centred and non-causal (the encoder sees both sides):
(k-1)//2 zeros on the left, k//2 on the right, so the output has the input's length for any N and any k,
and the layer runs at any sequence length (unlike the bilinear projection). With ``causal`` the same k taps
sit entirely on the past (k-1 zeros on the left, as Wu et al.'s decoder pads): token i mixes i-k+1 .. i. A
key-padding mask zeroes the padded tokens after the GLU, so they read exactly as the zeros beyond the end.

Choices the paper leaves open: k defaults to 31 (the widest of Wu et al.'s encoder kernels; odd, so the
window is exactly centred; at d = 768 the paper used 128 on 512 tokens); H = n_heads (the paper's 16 at 12
heads is not tied to the heads); filters initialised Xavier-uniform as in fairseq; no convolution bias
(fairseq's default); ``dropout`` drops normalised filter taps while training (Wu et al.'s weight dropout);
the architecture's hidden LayerNorm and GELU (MTE) sit before W_O as in every multi-head mixer.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from trainables.mixers.base import MIXERS, Mixer
from trainables.stacked import dense

DEFAULT_CONV_WIDTH = 31


#: Up to this length the convolution runs as a banded (Toeplitz) matmul, one (N, N) matrix per filter; beyond it
#: as ``F.conv1d`` with groups = channels. Same result up to rounding: on this CPU the matmul form measured 3.7x
#: (N = 32, d = 32, k = 31) and 2.1x (N = 128, d = 128) faster than PyTorch's depth-wise conv1d, forward +
#: backward; its O(H N^2) matrix only pays off while N is not much longer than the filter.
TOEPLITZ_MAX_LEN = 512


def channel_filters(filters: torch.Tensor, d_model: int) -> torch.Tensor:
    """Per-channel taps (..., d, k) from H shared filters (..., H, k): channel ch gets filter ch mod H."""
    h = filters.shape[-2]
    return filters.repeat(*([1] * (filters.dim() - 2)), d_model // h, 1)  # (..., d, k), row ch = filter ch % H


def left_taps(width: int, causal: bool) -> int:
    """Taps left of the token: (k-1)//2 (centred, the encoder's) or k-1 (causal: Wu et al.'s decoder)."""
    return width - 1 if causal else (width - 1) // 2


def centred_pad(u: torch.Tensor, width: int, left: int | None = None) -> torch.Tensor:
    """Zero padding of the last (sequence) axis: ``left`` ((width-1)//2 by default) on the left, the rest of
    width - 1 on the right."""
    left = (width - 1) // 2 if left is None else left
    return F.pad(u, (left, width - 1 - left))


def shared_filter_conv(u: torch.Tensor, taps: torch.Tensor, left: int | None = None) -> torch.Tensor:
    """Depth-wise convolution of u (..., B, N, d) with H shared filters taps (..., H, k), centred by default.

    ``...`` is empty (one model) or K (packed members, each with its own filters). Channel ch uses filter
    ch mod H; output token i sums taps t = 0..k-1 times u at i + t - left (zeros outside the sequence), with
    ``left`` = (k-1)//2 (centred) unless given (k-1: causal).
    """
    left = (taps.shape[-1] - 1) // 2 if left is None else left
    if u.shape[-2] <= TOEPLITZ_MAX_LEN:
        return toeplitz_conv(u, taps, left)
    return grouped_conv1d(u, taps, left)


def toeplitz_conv(u: torch.Tensor, taps: torch.Tensor, left: int) -> torch.Tensor:
    """:func:`shared_filter_conv` as one (N, N) banded matrix per filter times the channels that share it."""
    *lead, b, n, d = u.shape
    h, k = taps.shape[-2:]
    r = d // h
    pos = torch.arange(n, device=u.device)
    offset = pos.view(1, n) - pos.view(n, 1) + left  # (N, N): tap index t = j - i + left
    band = (offset >= 0) & (offset < k)
    t = taps[..., offset.clamp(0, k - 1)] * band  # (..., H, N, N): T[h, i, j] = taps[h, j - i + left]
    m = len(lead)
    uu = u.reshape(*lead, b, n, r, h)  # channel ch = r_index * H + h (ch mod H = h)
    uu = uu.permute(*range(m), m + 3, m + 1, m, m + 2).reshape(*lead, h, n, b * r)  # (..., H, N, B*R)
    o = (t @ uu).view(*lead, h, n, b, r)  # (..., H, N, B, R)
    return o.permute(*range(m), m + 2, m + 1, m + 3, m).reshape(*lead, b, n, d)  # (..., B, N, d)


def grouped_conv1d(u: torch.Tensor, taps: torch.Tensor, left: int) -> torch.Tensor:
    """:func:`shared_filter_conv` as ``F.conv1d`` with one group per channel (members folded into channels)."""
    *lead, b, n, d = u.shape
    k = taps.shape[-1]
    kk = 1 if not lead else lead[0]
    w = channel_filters(taps, d).reshape(kk * d, 1, k)  # (K*d, 1, k), member-major channels
    x = u.reshape(kk, b, n, d).permute(1, 0, 3, 2).reshape(b, kk * d, n)  # (B, K*d, N)
    c = F.conv1d(centred_pad(x, k, left), w, groups=kk * d)  # (B, K*d, N)
    return c.view(b, kk, d, n).permute(1, 0, 3, 2).reshape(*lead, b, n, d)  # (..., B, N, d)


@MIXERS.register("sepconv")
class SeparableConvolution(Mixer):
    """GLU input projection, depth-wise convolution with H shared softmax-normalised filters, output projection.

    Args:
        d_model: model width d (a multiple of n_heads).
        n_heads: number of distinct filters H (each reused by d/H channels).
        conv_width: filter length k (>= 1).
        hidden_norm: LayerNorm on the convolution output before the output projection (MTE).
        attention_gelu: GELU before the output projection (MTE).
        dropout: dropout on the normalised filter taps while training.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        *,
        conv_width: int = DEFAULT_CONV_WIDTH,
        hidden_norm: bool = False,
        attention_gelu: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__(d_model, n_heads)
        self.split_into_heads()
        if conv_width < 1:
            raise ValueError(f"invalid conv_width={conv_width!r}; allowed: a positive integer")
        self.conv_width = conv_width
        self.glu = nn.Linear(d_model, 2 * d_model)  # W_in, halved by the GLU
        self.filters = nn.Parameter(torch.empty(n_heads, conv_width))  # (H, k)
        bound = math.sqrt(6.0 / (conv_width + n_heads * conv_width))  # xavier_uniform of fairseq's (H, 1, k)
        nn.init.uniform_(self.filters, -bound, bound)
        self.init_output(hidden_norm=hidden_norm, attention_gelu=attention_gelu)
        self.dropout = dropout

    def taps(self) -> torch.Tensor:
        """The normalised filters (..., H, k): softmax over the taps (with weight dropout while training)."""
        w = self.filters.softmax(dim=-1)  # (..., H, k)
        if self.training and self.dropout > 0:
            w = F.dropout(w, self.dropout)
        return w

    supports_mask = True
    supports_causal = True

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, *, causal: bool = False) -> torch.Tensor:
        u = F.glu(dense(x, self.glu), dim=-1)  # (..., B, N, 2d) -> (..., B, N, d)
        if mask is not None:
            u = u.masked_fill(~mask[..., None], 0.0)  # padding reads as the zeros beyond the sequence's end
        o = shared_filter_conv(u, self.taps(), left_taps(self.conv_width, causal) if causal else None)
        return self.output(o)  # (..., B, N, d)
