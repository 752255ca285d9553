"""What one forward pass of a token mixer costs, counted from the module: its matrix products, written as the paper
writes the layer, and the multiply-adds of those products and of its convolution (Yun et al. 2020, Sec. 5.1:
"This layer [bilinear] advantageously incurs smaller number of matrix multiplications as compared to the dot-product
attention"; Sec. 5.3: the convolution "reduces the computational cost").

One sequence of N tokens of width d through the mixer as built (its heads H, d_h = d / H, its filter length k):

* ``softmax`` (eq. 1: ``sum_i W_O^i W_V^i X softmax[(W_K^i X)^T W_Q^i X]``): per head W_Q^i X, W_K^i X, W_V^i X
  (N x d times d x d_h each), the logits (N x d_h times d_h x N), the weighted values (N x N times N x d_h) and W_O^i
  (N x d_h times d_h x d): 6 H products, 4 N d^2 + 2 N^2 d multiply-adds;
* ``bilinear`` (``W_O X W_P``): W_P X (N x N times N x d) and W_O (N x d times d x d): 2 products, N^2 d + N d^2;
* ``sepconv``: the GLU's W_in (N x d times d x 2d) and W_O (N x d times d x d): 2 products, and the depth-wise
  convolution, k taps per output token and channel: N k d multiply-adds (as a convolution computes it, over the
  zero padding too; the module runs it as a banded N x N matmul up to N = 512 for speed on CPUs, which multiplies
  the band's zeros as well: N^2 d), 3 N d^2 + N k d in all.

Multiply-adds are those of the products and the convolution only, as ``torch.utils.flop_counter.FlopCounterMode``
counts them (its FLOPs are twice these): biases, softmax, GLU, LayerNorm and GELU are elementwise and not counted.
tests/test_yun_mixer_properties.py checks each count against FlopCounterMode on the real module.
"""

from __future__ import annotations

from trainables.mixers.base import Mixer

#: A matrix product (rows, inner, columns): a rows x inner matrix times an inner x columns one, rows * inner * columns
#: multiply-adds.
Product = tuple[int, int, int]


def products(mixer: Mixer, n: int) -> tuple[Product, ...]:
    """The matrix products of one forward of ``mixer`` on one sequence of ``n`` tokens (module docstring)."""
    d, name = mixer.d_model, type(mixer).registered_name()
    if name == "softmax":
        h = mixer.n_heads
        dh = d // h
        return ((n, d, dh),) * 3 * h + ((n, dh, n), (n, n, dh), (n, dh, d)) * h
    if name == "bilinear":
        return ((n, n, d), (n, d, d))
    if name == "sepconv":
        return ((n, d, 2 * d), (n, d, d))
    raise ValueError(f"invalid mixer={name!r} for a cost count; allowed: softmax, bilinear, sepconv")


def convolution_macs(mixer: Mixer, n: int) -> int:
    """Multiply-adds of the mixer's depth-wise convolution on n tokens: N k d (sepconv), 0 for a mixer without one."""
    width = getattr(mixer, "conv_width", 0)
    return n * int(width) * mixer.d_model


def matmuls(mixer: Mixer, n: int) -> int:
    """How many matrix products one forward on n tokens computes."""
    return len(products(mixer, n))


def macs(mixer: Mixer, n: int) -> int:
    """Multiply-adds of one forward on n tokens: its products' and its convolution's."""
    return sum(a * b * c for a, b, c in products(mixer, n)) + convolution_macs(mixer, n)
