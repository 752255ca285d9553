"""Compositional table lookup (CTL), as in Csordás, Irie & Schmidhuber 2021 (docs/csordas2021.md, "Task ctl").

Eight symbols 0..7 (3-bit strings ``000``..``111``), eleven seeded random bijections ``a``..``k`` of which the
first nine are composed. A sample is an argument x and a list of functions ``cmd = [c0, ..., c_{n-1}]``; its
label is ``c0(c1(...c_{n-1}(x)))``. Worked example (the generator's own): cmd = [g, b, g, c, d],
x = 0 gives d(0)=4, c(4)=0, g(0)=5, b(5)=0, g(0)=5, so the label is 5 (``101``).

* **forward** (the release's ``reversed=1``, "→" in Table 1): input ``000 d c g b g`` (argument first,
  functions applied left to right);
* **backward** (``reversed=0``, "←"): input ``g b g c d 000`` (argument last, applied right to left).

The splits follow the release's draw order on ``numpy.random.RandomState(0x12345678)`` exactly (608 reserved
compositions, a 61,136-sample IID pool, new-primitive sets, depth-valid 6-8, depth test 9-10, 53,704 train
samples). One decision of ours: the release picks the 8,000 IID hold-out samples with numpy's *unseeded*
global RNG (reproducible only through its disk cache); here a separate ``RandomState(holdout_seed)`` draws
them (first 4,000 -> IID test, the rest -> IID valid), so both directions share the same split.

Token ids: 0..7 values, 8..18 letters a..k, 19 EOS, 20 SOS; the model input is ``SOS tokens EOS`` padded
with 0 beyond its length (the length counts SOS and EOS); the readout is at the EOS column (``length - 1``).
"""

from __future__ import annotations

import functools
import operator
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch

from trainables.csordas2021.config import DIRECTIONS

N_BITS = 3
N_SYMBOLS = 2**N_BITS
N_TABLES = 11
N_COMPOSED = N_TABLES - 2  # a..i; j and k are the unreported "new primitive" functions
MAX_DEPTH = 5
N_MORE_DEPTH_VALID = 3  # depth-valid 6..8
N_MORE_DEPTH = 5  # depth test 9..10
MAX_INPUT_LEN = MAX_DEPTH + N_MORE_DEPTH + 3  # 13: 10 functions, the argument, SOS and EOS
GENERATOR_SEED = 0x12345678
TABLE_NAMES = tuple(string.ascii_lowercase[:N_TABLES])
EOS = 19
SOS = 20
VOCAB_SIZE = 21


@dataclass(frozen=True)
class Sample:
    """One CTL sample: argument, composition (c0 applied last) and kind (basic, iid, deeper_val, ...)."""

    arg: int
    cmd: tuple[int, ...]
    kind: str


@dataclass(frozen=True)
class CTLData:
    """Every split of the generator (direction-independent; see :func:`encode` for the tokens).

    Attributes:
        tables: (11, 8) bijections, ``tables[f][x] = f(x)``.
        train: basic (88) + IID train (53,136) + j/k repeats (480) = 53,704 samples.
        iid_valid, iid_test: 4,000 IID samples each (depths 2..5).
        depth_valid: 1,000 samples of depth 6..8 (``valid/deeper_val``).
        depth_test: 1,000 samples of depth 9..10 (``test/deeper``, the "longer" columns).
        new_primitive_1, new_primitive_2_test, new_composition: the test types the paper does not report.
        reserved: the 608 compositions held out of the IID pool.
    """

    tables: np.ndarray
    train: list[Sample]
    iid_valid: list[Sample]
    iid_test: list[Sample]
    depth_valid: list[Sample]
    depth_test: list[Sample]
    new_primitive_1: list[Sample]
    new_primitive_2_test: list[Sample]
    new_composition: list[Sample]
    reserved: frozenset[tuple[int, ...]]


def evaluate(tables: np.ndarray | list[list[int]], cmd: tuple[int, ...], arg: int) -> int:
    """c0(c1(...c_{n-1}(arg))): the last element of ``cmd`` is applied first (``tables[f][x] = f(x)``)."""
    value = arg
    for f in reversed(cmd):
        value = int(tables[f][value])
    return value


def words(sample: Sample, direction: str) -> list[str]:
    """The input as words, e.g. ``['000', 'd', 'c', 'g', 'b', 'g']`` (forward) for cmd [g, b, g, c, d], x=0."""
    bits = f"{sample.arg:0{N_BITS}b}"
    names = [TABLE_NAMES[f] for f in sample.cmd]
    if direction == "forward":
        return [bits, *reversed(names)]
    if direction == "backward":
        return [*names, bits]
    raise ValueError(f"invalid direction={direction!r}; allowed: {', '.join(DIRECTIONS)}")


def token_ids(sample: Sample, direction: str) -> list[int]:
    """Token ids of the input without SOS/EOS: values 0..7, letters 8..18."""
    ids = [sample.arg] + [N_SYMBOLS + f for f in reversed(sample.cmd)]
    if direction == "forward":
        return ids
    if direction == "backward":
        return ids[::-1]
    raise ValueError(f"invalid direction={direction!r}; allowed: {', '.join(DIRECTIONS)}")


class _Stream:
    """``RandomState.randint`` of one seeded stream, bit for bit, without numpy's per-call cost (the IID pool's
    ~116,000 draws took 5 s through ``randint``, 0.3 s here). numpy's legacy bounded integers below 2^32 take one
    32-bit output per try, masked to the range's bit width and rejected above it (none taken for a range of one value),
    so the outputs are read in blocks from a copy of the state, and the state itself is moved past what was read when
    the stream closes: draws on the RandomState after it continue where they would have."""

    BLOCK = 1 << 16

    def __init__(self, rs: np.random.RandomState) -> None:
        self._rs = rs
        self._copy = np.random.RandomState()
        self._copy.set_state(rs.get_state())
        self._outputs: Iterator[int] = iter(())
        self._drawn = 0  # outputs drawn from the copy; those read are the drawn less the current block's rest

    def _refill(self) -> Iterator[int]:
        self._outputs = iter(self._copy.randint(0, 2**32, size=self.BLOCK, dtype=np.uint32).tolist())
        self._drawn += self.BLOCK
        return self._outputs

    def randint(self, low: int, high: int | None = None) -> int:
        """One integer in [low, high) (``randint(high)``: in [0, high)), as ``RandomState.randint`` draws it."""
        low, high = (0, low) if high is None else (low, high)
        span = high - 1 - low
        if span == 0:
            return low
        mask = (1 << span.bit_length()) - 1
        outputs = self._outputs
        while True:
            value = next(outputs, None)
            if value is None:
                outputs = self._refill()
                continue
            value &= mask
            if value <= span:
                return low + value

    def ints(self, high: int, size: int) -> list[int]:
        """``RandomState.randint(high, size=[size])`` as a list."""
        return [self.randint(high) for _ in range(size)]

    def close(self) -> None:
        """Move the RandomState past every output this stream read."""
        read = self._drawn - operator.length_hint(self._outputs)
        if read:
            self._rs.randint(0, 2**32, size=read, dtype=np.uint32)
        self._copy.set_state(self._rs.get_state())
        self._outputs, self._drawn = iter(()), 0


Draw = Callable[[_Stream], tuple[int, tuple[int, ...]]]


def _unique(n: int, draw: Draw, stream: _Stream, kind: str) -> list[Sample]:
    """Draw until ``n`` distinct inputs exist (dedup on the input, as the release does on the string).

    The forward and backward strings of a sample determine each other, so deduplicating on (arg, cmd) takes
    the same decisions as the release in both directions.
    """
    seen: dict[tuple[int, tuple[int, ...]], None] = {}
    while len(seen) < n:
        arg, cmd = draw(stream)
        seen.setdefault((arg, cmd), None)
    return [Sample(arg, cmd, kind) for arg, cmd in seen]


def _reserved_compositions(rs: np.random.RandomState) -> set[tuple[int, ...]]:
    """Step 1: per depth 0..5, compositions until the set has grown by min(200, 0.25 * 9^d) (rounds up)."""
    reserved: set[tuple[int, ...]] = set()
    for d in range(MAX_DEPTH + 1):
        target = len(reserved) + min(200, N_COMPOSED**d * 0.25)
        while len(reserved) < target:
            reserved.add(tuple(int(v) for v in rs.randint(N_COMPOSED, size=[d])))
    return reserved


def _iid_draw(reserved: set[tuple[int, ...]]) -> Draw:
    """Step 4's draw: 5 indices, truncated to a length in 2..5; reserved ones redrawn; then the argument."""
    def draw(rs: _Stream) -> tuple[int, tuple[int, ...]]:
        while True:
            full = rs.ints(N_COMPOSED, MAX_DEPTH)
            cmd = tuple(full[:rs.randint(2, MAX_DEPTH + 1)])
            if cmd not in reserved:
                return rs.randint(N_SYMBOLS), cmd

    return draw


def _new_primitive_1_draw(rs: _Stream) -> tuple[int, tuple[int, ...]]:
    """Step 6's draw: functions 0..9 with one position forced to j."""
    arg = rs.randint(N_SYMBOLS)
    cmd = rs.ints(N_TABLES - 1, MAX_DEPTH)[:rs.randint(2, MAX_DEPTH + 1)]
    cmd[rs.randint(len(cmd))] = N_TABLES - 2
    return arg, tuple(cmd)


def _new_primitive_2_draw(rs: _Stream) -> tuple[int, tuple[int, ...]]:
    """Step 7's draw: j replaced by k, one position forced to k."""
    arg = rs.randint(N_SYMBOLS)
    cmd = [N_TABLES - 1 if f == N_TABLES - 2 else f
           for f in rs.ints(N_TABLES - 1, MAX_DEPTH)[:rs.randint(2, MAX_DEPTH + 1)]]
    cmd[rs.randint(len(cmd))] = N_TABLES - 1
    return arg, tuple(cmd)


def _deeper_draw(low: int, high: int) -> Draw:
    """Steps 8 and 9's draw: the argument first, then the indices, then the length."""
    def draw(rs: _Stream) -> tuple[int, tuple[int, ...]]:
        arg = rs.randint(N_SYMBOLS)
        full = rs.ints(N_COMPOSED, high)
        return arg, tuple(full[:rs.randint(low, high + 1)])

    return draw


@functools.lru_cache(maxsize=4)
def generate(holdout_seed: int = 0) -> CTLData:
    """All CTL splits; deterministic (the draws follow the release's order on one seeded RandomState)."""
    rs = np.random.RandomState(GENERATOR_SEED)
    tables = np.stack([rs.permutation(N_SYMBOLS) for _ in range(N_TABLES)])
    reserved = _reserved_compositions(rs)
    # 2. Pool size: 8 * sum_{d=2..5} 9^d sequences, a tenth of them for IID training.
    n_compositions = sum(N_COMPOSED**d for d in range(2, MAX_DEPTH + 1))
    n_iid_train = N_SYMBOLS * n_compositions // 10
    n_test = min(n_iid_train, 4000)
    # 3. Basic samples: every function on every argument.
    basic = [Sample(a, (t,), "basic") for t in range(N_TABLES) for a in range(N_SYMBOLS)]
    stream = _Stream(rs)  # every draw below on the generator's RandomState, through the stream
    pool = _unique(n_iid_train + 2 * n_test, _iid_draw(reserved), stream, "iid")
    # 5. IID hold-out: our seeded RNG instead of the release's unseeded global one (module docstring).
    held = np.random.RandomState(holdout_seed).choice(len(pool), 2 * n_test, replace=False)
    held_set = set(int(i) for i in held)
    iid_train = [s for i, s in enumerate(pool) if i not in held_set]
    iid_test = [pool[int(i)] for i in held[:n_test]]
    iid_valid = [pool[int(i)] for i in held[n_test:]]
    np1 = _unique(1000, _new_primitive_1_draw, stream, "new_primitive_1")
    # 7. new_primitive_2: 1,000 of 3,000 go to test.
    np2 = _unique(3000, _new_primitive_2_draw, stream, "new_primitive_2")
    np2_test_idx = np.random.RandomState(holdout_seed + 1).choice(len(np2), 1000, replace=False)
    np2_test = [np2[int(i)] for i in np2_test_idx]
    depth_valid = _unique(1000, _deeper_draw(MAX_DEPTH + 1, MAX_DEPTH + N_MORE_DEPTH_VALID), stream, "deeper_val")
    depth_test = _unique(1000, _deeper_draw(MAX_DEPTH + 1 + N_MORE_DEPTH_VALID, MAX_DEPTH + N_MORE_DEPTH), stream,
                         "deeper")
    # 10. new_composition: one random argument per reserved composition, in set iteration order.
    new_composition = [Sample(stream.randint(N_SYMBOLS), cmd, "new_composition") for cmd in reserved]
    stream.close()
    # 11. j and k x 8 arguments x 30 repeats, appended to train.
    repeats = [Sample(a, (t,), "basic") for t in range(N_TABLES - 2, N_TABLES) for _ in range(30)
               for a in range(N_SYMBOLS)]
    return CTLData(tables=tables, train=basic + iid_train + repeats, iid_valid=iid_valid, iid_test=iid_test,
                   depth_valid=depth_valid, depth_test=depth_test, new_primitive_1=np1,
                   new_primitive_2_test=np2_test, new_composition=new_composition, reserved=frozenset(reserved))


@dataclass(frozen=True)
class Encoded:
    """A split as tensors: tokens (S, L_max) with SOS ... EOS and 0 padding, lengths (S,), labels (S,), depths."""

    tokens: torch.Tensor
    lengths: torch.Tensor
    labels: torch.Tensor
    depths: torch.Tensor

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    def batch(self, index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(tokens, lengths, labels) of the given rows, trimmed to the longest sequence among them."""
        lengths = self.lengths[index]
        width = int(lengths.max())
        return self.tokens[index, :width], lengths, self.labels[index]


def encode(samples: list[Sample], tables: np.ndarray, direction: str) -> Encoded:
    """Tokens ``SOS x_1 .. x_n EOS`` (0-padded), lengths n + 2, labels and composition depths."""
    rows = [[SOS, *token_ids(s, direction), EOS] for s in samples]
    lengths = [len(r) for r in rows]
    tokens = np.zeros((len(rows), max(lengths)), dtype=np.int64)
    for i, r in enumerate(rows):
        tokens[i, :len(r)] = r
    lookup = tables.tolist()  # Python lists: a lookup per function of every sample, numpy's per-item cost avoided
    labels = [evaluate(lookup, s.cmd, s.arg) for s in samples]
    return Encoded(torch.from_numpy(tokens), torch.tensor(lengths), torch.tensor(labels),
                   torch.tensor([len(s.cmd) for s in samples]))


@functools.lru_cache(maxsize=4)
def encoded_splits(direction: str, holdout_seed: int = 0) -> dict[str, Encoded]:
    """train, iid_valid, depth_valid, depth_test (and iid_test) encoded for ``direction``."""
    data = generate(holdout_seed)
    return {name: encode(getattr(data, name), data.tables, direction)
            for name in ("train", "iid_valid", "iid_test", "depth_valid", "depth_test")}


def uniform_batches(n: int, batch_size: int, generator: torch.Generator) -> Iterator[torch.Tensor]:
    """Endless batches drawn uniformly with replacement (the release's default sampler)."""
    while True:
        yield torch.randint(n, (batch_size,), generator=generator)


def length_bucketed_batches(lengths: torch.Tensor, batch_size: int,
                            generator: torch.Generator) -> Iterator[torch.Tensor]:
    """Endless epochs: shuffle, stable-sort by length, cut into full batches, yield them in random order.

    Every batch holds one length, or two adjacent lengths at a bucket boundary (the release's
    ``length_bucketed_sampling``, used by NDR); the remainder of each epoch is dropped.
    """
    n = int(lengths.shape[0])
    if batch_size > n:
        raise ValueError(f"invalid batch_size={batch_size}; allowed: at most the {n} training samples")
    while True:
        perm = torch.randperm(n, generator=generator)
        order = perm[torch.sort(lengths[perm], stable=True).indices]
        batches = order[: n // batch_size * batch_size].view(-1, batch_size)
        for b in torch.randperm(batches.shape[0], generator=generator):
            yield batches[b]
