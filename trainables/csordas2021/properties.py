"""No-training measurements of what Csordás et al. 2021 say their geometric attention and their data set are (issue 58;
tasks of the measurement family, ``trainables/pooling_scale/family.py``; studies ``csordas2021.matches``, ``.cost``,
``.sides`` and ``.data``, search_spaces/csordas2021_properties.py).

* task ``ndr_matches`` (Sec. 2.2: "By using the term (1 - P_i,k) in Eq. 7, when there is a match, it downscales any
  other matches which are more distant"), ``pooling`` ``geometric`` (Eq. 7, :func:`geometric_weights`) or ``sigmoid``
  (the match probabilities P_ij alone: Eq. 7 without the product of (1 - P_ik), the contrast). Per sequence of N
  positions: random queries and keys (N(0, I) of width ``d_head``, logits q.k / sqrt(d_head), the paper's alpha at
  initialisation), one query i and two other positions, the nearer at distance d1 and the farther at d2 > d1 (random
  sides), whose keys match the query: their logit is set to :data:`MATCH_LOGIT` (P = sigmoid(4) = 0.982).
  ``far_match_scale`` is the largest over the seed's sequences of the farther match's weight with the nearer match
  there over its weight with the nearer key masked out (not a key at all): how far the nearer match scales the
  farther one down (Eq. 7: 1 - P_near); ``near_match_scale`` is the smallest of the nearer match's weight with the
  farther match there over its weight with the farther key masked out (Eq. 7: 1, a farther match scales nothing).
* task ``ndr_cost`` (App. B: "The proposed attention function has a complexity of O(N^2), similar to the one of
  regular selfattention"), ``pooling`` ``geometric`` (:class:`GeometricAttention` as NDR builds it: one head,
  d_model = ``d_head``, the directional term) or ``softmax`` (the registry's softmax attention, one head):
  ``cost`` is the work of one forward on one sequence of N tokens (:func:`work`: multiply-adds of the matrix
  products as torch's FlopCounterMode counts them, plus one per element every other operation writes), at N =
  ``seq_len``, and ``cost_slope`` the log-log slope of the cost from N to 2N, log2(cost(2N) / cost(N)): 2 for a cost
  that grows as N^2. Run on the meta device: shapes only, nothing computed, the same count at any N.
* task ``ndr_sides`` (App. B: "Using this additional directional information, each query (position i) can
  potentially learn to restrict its attention to either the left or right side"), ``pooling`` ``geometric``: NDR's
  attention module (one head, d_model = ``d_head``, as initialised from the seed) whose direction layer is set to
  read a side feature of the query's own token: token vectors N(0, I) but their first coordinate, +1 (this query
  looks left) or -1 (right), drawn per token; s_left = :data:`SIDE_WEIGHT` x_i0, s_right = -:data:`SIDE_WEIGHT`
  x_i0, no bias (the directional term beta D_ij at beta's initial 1). ``side_share`` is the smallest, over the
  queries that have a key on their side, of the share of the query's attention weight on that side.
* task ``ctl_splits`` (App. C.1: "The total size of the train set is 53,704 samples. The samples are roughly
  balanced such that there are similar number of samples for each depth"; Sec. 3: "samples of up to 5/6-8/9-10
  operations respectively"), ``pooling`` the split (``train``, ``depth_valid``, ``depth_test``) of the CTL
  generator (:func:`trainables.csordas2021.ctl.generate`): ``n_samples``, ``min_depth``, ``max_depth``,
  ``n_depths`` (distinct depths) and ``depth_balance``, the smallest depth's count over the largest's (1: every
  depth as many samples). Exact: the generator has no seed, every seed gets the same counts.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode, sdpa_flop_count

from trainables.csordas2021.ctl import generate
from trainables.csordas2021.geometric import GeometricAttention, geometric_weights
from trainables.mixers import build_mixer
from trainables.pooling_scale.config import PoolingScaleConfig

#: The logit of a key that matches the query: P = sigmoid(4) = 0.982 (a match: the project's reading, in the
#: finding's ``chosen``).
MATCH_LOGIT = 4.0
#: The weight of the direction layer on the query's side feature (task ``ndr_sides``): D_ij = +-10 on the two sides (a
#: weight the layer can take: the project's construction, in the finding's ``chosen``).
SIDE_WEIGHT = 10.0
#: The splits task ``ctl_splits`` measures (App. C.1's train set, Sec. 3's valid and test sets: the depth ones).
SPLITS: tuple[str, ...] = ("train", "depth_valid", "depth_test")


def match_weights(logits: torch.Tensor, allowed: torch.Tensor, pooling: str) -> torch.Tensor:
    """Weights (S, N, N) of ``pooling`` on logits (S, N, N), keys where ``allowed`` (S, N, N) is True: Eq. 7
    (``geometric``) or its match probabilities P_ij alone (``sigmoid``), the diagonal and masked keys 0."""
    if pooling == "geometric":
        return geometric_weights(logits, allowed)
    if pooling == "sigmoid":
        eye = torch.eye(logits.shape[-1], dtype=torch.bool)
        return torch.sigmoid(logits).masked_fill(~allowed | eye, 0.0)
    raise ValueError(f"invalid pooling={pooling!r} for task ndr_matches; allowed: geometric, sigmoid")


def _match_positions(n: int, s: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per sequence a query i and two other positions, the nearer strictly closer to i than the farther (each side
    random where both fit): (query, near, far), each (S,)."""
    query, near, far = [], [], []
    for _ in range(s):
        while True:
            i = int(torch.randint(n, (1,), generator=g))
            others = [j for j in range(n) if j != i]
            a, b = (others[int(k)] for k in torch.randperm(len(others), generator=g)[:2])
            if abs(a - i) != abs(b - i):
                break
        query.append(i)
        near.append(a if abs(a - i) < abs(b - i) else b)
        far.append(b if abs(a - i) < abs(b - i) else a)
    return torch.tensor(query), torch.tensor(near), torch.tensor(far)


def match_measures(config: PoolingScaleConfig, seed: int) -> dict[str, float]:
    """``far_match_scale`` and ``near_match_scale`` of one seed (module docstring)."""
    g = torch.Generator().manual_seed(seed)
    s, n, d = config.n_vectors // config.seq_len, config.seq_len, config.d_head
    q, k = torch.randn(s, n, d, generator=g, dtype=torch.float64), torch.randn(s, n, d, generator=g,
                                                                               dtype=torch.float64)
    logits = q @ k.transpose(-2, -1) / math.sqrt(d)  # (S, N, N)
    query, near, far = _match_positions(n, s, g)
    rows = torch.arange(s)
    logits[rows, query, near] = MATCH_LOGIT
    logits[rows, query, far] = MATCH_LOGIT
    every = torch.ones(s, n, n, dtype=torch.bool)
    without_near, without_far = every.clone(), every.clone()
    without_near[rows, query, near] = False
    without_far[rows, query, far] = False

    def weight(allowed: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
        return match_weights(logits, allowed, config.pooling)[rows, query, key]  # (S,)

    far_scale = weight(every, far) / weight(without_near, far)
    near_scale = weight(every, near) / weight(without_far, near)
    return {"far_match_scale": float(far_scale.max()), "near_match_scale": float(near_scale.min())}


def side_measures(config: PoolingScaleConfig, seed: int) -> dict[str, float]:
    """``side_share`` of one seed (module docstring)."""
    g = torch.Generator().manual_seed(seed)
    s, n, d = config.n_vectors // config.seq_len, config.seq_len, config.d_head
    x = torch.randn(s, n, d, generator=g)
    left = torch.rand(s, n, generator=g) < 0.5  # (S, N): the query looks left
    x[..., 0] = torch.where(left, 1.0, -1.0)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        attention = GeometricAttention(d, 1).eval()
    assert attention.direction is not None
    with torch.no_grad():
        attention.direction.weight.zero_()
        attention.direction.bias.zero_()
        attention.direction.weight[0, 0], attention.direction.weight[1, 0] = SIDE_WEIGHT, -SIDE_WEIGHT  # s_l, s_r
        attention.record = True
        attention(x)
    assert attention.last_weights is not None
    a = attention.last_weights[:, 0].double()  # (S, N_q, N_k)
    position = torch.arange(n)
    on_left = position.view(1, n) < position.view(n, 1)  # (N_q, N_k): key j left of query i
    side = torch.where(left.unsqueeze(-1), on_left, position.view(1, n) > position.view(n, 1))  # (S, N_q, N_k)
    share = (a * side).sum(-1) / a.sum(-1).clamp(min=1e-300)  # (S, N_q)
    has_key = side.any(-1)  # the first position has no key on its left, the last none on its right
    return {"side_share": float(share[has_key].min())}


def _cpu_sdpa(query: Any, key: Any, value: Any, *_: object, **__: object) -> int:
    return int(sdpa_flop_count(query, key, value))  # type: ignore[no-untyped-call]


#: FlopCounterMode has no formula for the CPU kernel of scaled_dot_product_attention: its own sdpa count.
_CPU_SDPA = {torch.ops.aten._scaled_dot_product_flash_attention_for_cpu: _cpu_sdpa}


class _ElementCount(TorchDispatchMode):  # type: ignore[no-untyped-call]
    """Counts the elements every operation but a view or a matrix product (``skip``) writes."""

    def __init__(self, skip: set[Any]) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.skip, self.elements = skip, 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if not func.is_view and func.overloadpacket not in self.skip:
            outs = out if isinstance(out, tuple | list) else (out,)
            self.elements += sum(t.numel() for t in outs if isinstance(t, torch.Tensor))
        return out


def work(forward: Callable[[], object]) -> int:
    """The work of ``forward()``: the multiply-adds of its matrix products (and fused attention) as torch's
    FlopCounterMode counts them (half its FLOPs), plus one per element that each other operation writes (views
    write none). Run it on meta tensors to count without computing."""
    with FlopCounterMode(display=False, custom_mapping=_CPU_SDPA) as flops:
        counted = set(flops.flop_registry)
        with _ElementCount(counted) as elements, torch.no_grad():
            forward()
    return int(flops.get_total_flops()) // 2 + int(elements.elements)


def attention_cost(pooling: str, d: int, n: int) -> int:
    """:func:`work` of one forward of ``pooling``'s attention (one head, d_model = d) on one sequence of n tokens."""
    with torch.device("meta"):
        if pooling == "geometric":
            mixer: torch.nn.Module = GeometricAttention(d, 1)
        elif pooling == "softmax":
            mixer = build_mixer("softmax", d, 1, hidden_norm=False, attention_gelu=False, dropout=0.0)
        else:
            raise ValueError(f"invalid pooling={pooling!r} for task ndr_cost; allowed: geometric, softmax")
        x = torch.zeros(1, n, d)
    mixer.eval()
    return work(lambda: mixer(x))


def cost_measures(config: PoolingScaleConfig, seed: int) -> dict[str, float]:
    """``cost`` at N and ``cost_slope`` from N to 2N (module docstring); the same for every seed."""
    n, d = config.seq_len, config.d_head
    cost, doubled = attention_cost(config.pooling, d, n), attention_cost(config.pooling, d, 2 * n)
    return {"cost": float(cost), "cost_slope": math.log2(doubled / cost)}


def split_measures(config: PoolingScaleConfig, seed: int) -> dict[str, float]:
    """``n_samples``, ``min_depth``, ``max_depth``, ``n_depths`` and ``depth_balance`` of the split ``pooling``
    (module docstring); the same for every seed."""
    samples = getattr(generate(), config.pooling)
    depths = Counter(len(sample.cmd) for sample in samples)
    return {"n_samples": float(len(samples)), "min_depth": float(min(depths)), "max_depth": float(max(depths)),
            "n_depths": float(len(depths)), "depth_balance": min(depths.values()) / max(depths.values())}
