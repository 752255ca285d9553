"""No-training measurement of Yun et al. 2020's two theory items on the registry's attention mixers (task
``token_mixing``): "averaging is not a contextual mapping" (Sec. 3) and "softmax approaches hardmax as its logits are
scaled up" (App. B).

Per seed, the mixer ``pooling`` (``average`` or ``softmax`` of ``trainables.mixers``, one head, d_model = ``d_head``,
its projections as initialised under ``torch.manual_seed(seed)``) mixes ``n_vectors / seq_len`` sequences of N
tokens drawn from N(0, I), its logits times ``logit_scale`` (softmax: the mixer's own weights computed from the
scaled queries; average: constant logits, which no factor changes). Each sequence also gets a second context: tokens
0 and 1 replaced by x_0 + delta and x_1 - delta (delta from N(0, I)): two words differ, their average does not, and
tokens 2 .. N-1 are the same words in the two contexts. Reported (means over the sequences):

* ``distinct_outputs`` / ``distinct_share``: the number (share) of distinct output vectors among a sequence's N
  tokens (Definition 3.1, property 1: every token of a context mapped to its own value; average: 1, i.e. 1/N);
* ``token_collision``: the share of a sequence's tokens whose output equals another token's (property 1 fails for
  each such token; average: 1);
* ``context_collision``: the share of the unchanged tokens whose output is the same in both contexts (property 2: a
  token in another context gets another value; average: 1, every one collides);
* ``max_weight``: the largest attention weight of a query (the total variation distance of its weights to the
  argmax one-hot is 1 - max_weight; average: 1/N at any scale).

Two outputs count as the same when they differ by at most ``TOLERANCE`` times the largest output entry of the
sequence (float sums in another order differ by ~1e-7 relatively).
"""

from __future__ import annotations

import torch

from trainables.mixers import build_mixer
from trainables.mixers.base import Mixer, MultiHeadMixer
from trainables.pooling_scale.config import PoolingScaleConfig

#: Outputs within this relative distance are one value (float rounding is ~1e-7; distinct contexts differ by ~1e-1).
TOLERANCE = 1e-5


def build(config: PoolingScaleConfig, seed: int) -> Mixer:
    """The mixer ``config.pooling`` with one head, d_model = ``d_head``, initialised from ``seed`` (the global RNG is
    left as it was); a mixer built for one length (bilinear) is built for ``seq_len``."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        mixer: Mixer = build_mixer(config.pooling, config.d_head, 1, hidden_norm=False, attention_gelu=False,
                                   dropout=0.0, options={"seq_len": config.seq_len})
    return mixer.eval()


def mix(mixer: Mixer, x: torch.Tensor, logit_scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(outputs (S, N, d), attention weights (S, N, N)) of ``mixer`` on x (S, N, d), its logits times ``logit_scale``.

    Softmax: the mixer's ``weights`` on queries times the scale (q.k scales with q), then its value and output steps as
    in its forward; average: its forward, and its weights, the constant 1/N of its definition.
    """
    n = x.shape[-2]
    if not isinstance(mixer, MultiHeadMixer):  # average attention: no logits to scale
        return mixer(x), torch.full((*x.shape[:-2], n, n), 1.0 / n)
    q, k, v = mixer.project(x)  # 3 x (S, 1, N, d)
    a = mixer.call_weights(q * logit_scale, k, None)  # (S, 1, N, N)
    o = (a @ v).transpose(-3, -2).flatten(-2)  # (S, N, d), the one head
    return mixer.output(o), a[:, 0]


def mixing_measures(config: PoolingScaleConfig, seed: int) -> dict[str, float]:
    """``distinct_outputs``, ``distinct_share``, ``token_collision``, ``context_collision`` and ``max_weight`` of one
    seed (module docstring)."""
    g = torch.Generator().manual_seed(seed)
    n_seq, n, d = config.n_vectors // config.seq_len, config.seq_len, config.d_head
    x = torch.randn(n_seq, n, d, generator=g)  # (S, N, d)
    delta = torch.randn(n_seq, 1, d, generator=g)  # (S, 1, d)
    other = torch.cat([x[:, :1] + delta, x[:, 1:2] - delta, x[:, 2:]], dim=1)  # (S, N, d): same sum, 2 words differ
    mixer = build(config, seed)
    with torch.no_grad():
        out, a = mix(mixer, x, config.logit_scale)  # (S, N, d), (S, N, N)
        out_other, _ = mix(mixer, other, config.logit_scale)
    scale = out.abs().amax(dim=(1, 2), keepdim=True).double()  # (S, 1, 1)
    same = torch.cdist(out.double(), out.double(), p=float("inf")) <= TOLERANCE * scale  # (S, N, N)
    earlier = torch.ones(n, n, dtype=torch.bool).tril(-1)  # (N, N): j < i
    distinct = (~(same & earlier).any(dim=-1)).sum(dim=-1).double()  # (S,): tokens equal to no earlier token
    shared = (same & ~torch.eye(n, dtype=torch.bool)).any(dim=-1)  # (S, N): token i's output is another token's
    gap = (out[:, 2:] - out_other[:, 2:]).abs().amax(dim=-1).double()  # (S, N - 2): the tokens both contexts share
    collide = gap <= TOLERANCE * scale[..., 0]  # (S, N - 2): token i's output the same in both contexts
    return {"distinct_outputs": float(distinct.mean()), "distinct_share": float(distinct.mean() / n),
            "token_collision": float(shared.double().mean()), "context_collision": float(collide.double().mean()),
            "max_weight": float(a.amax(dim=-1).mean())}
