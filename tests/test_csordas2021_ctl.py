"""The CTL generator (trainables.csordas2021.ctl): counts, tables, determinism, labels, batching (spec 1.1)."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import torch

from trainables.csordas2021 import ctl


@pytest.fixture(scope="module")
def data() -> ctl.CTLData:
    return ctl.generate()


def test_tables_are_the_seeded_bijections(data: ctl.CTLData) -> None:
    assert data.tables.shape == (11, 8)
    assert all(sorted(row) == list(range(8)) for row in data.tables.tolist())
    assert data.tables[0].tolist() == [6, 1, 5, 7, 0, 4, 2, 3]  # a
    assert data.tables[6].tolist() == [5, 1, 0, 4, 2, 6, 7, 3]  # g
    assert data.tables[10].tolist() == [4, 6, 2, 1, 3, 0, 5, 7]  # k


def test_split_counts(data: ctl.CTLData) -> None:
    assert len(data.reserved) == 608
    assert len(data.train) == 53_704
    assert len(data.iid_valid) == len(data.iid_test) == 4000
    assert len(data.new_primitive_1) == 1000 and len(data.new_primitive_2_test) == 1000
    assert len(data.new_composition) == 608
    pool = [s for s in data.train if s.kind == "iid"] + data.iid_valid + data.iid_test
    assert collections.Counter(len(s.cmd) for s in pool) == {2: 480, 3: 4350, 4: 24_010, 5: 32_296}
    assert collections.Counter(len(s.cmd) for s in data.depth_valid) == {6: 330, 7: 327, 8: 343}
    assert collections.Counter(len(s.cmd) for s in data.depth_test) == {9: 514, 10: 486}
    assert sum(s.kind == "basic" for s in data.train) == 88 + 480


def test_iid_splits_are_disjoint_and_avoid_reserved(data: ctl.CTLData) -> None:
    train = {(s.arg, s.cmd) for s in data.train if s.kind == "iid"}
    valid = {(s.arg, s.cmd) for s in data.iid_valid}
    test = {(s.arg, s.cmd) for s in data.iid_test}
    assert len(train) == 53_136 and not train & valid and not train & test and not valid & test
    assert not any(cmd in data.reserved for _, cmd in train | valid | test)
    assert all(max(s.cmd) < 9 for s in data.depth_test)  # only a..i are composed


def test_generator_is_deterministic_and_holdout_seeded(data: ctl.CTLData) -> None:
    ctl.generate.cache_clear()
    again = ctl.generate(0)
    assert again.iid_valid == data.iid_valid and again.depth_test == data.depth_test
    other = ctl.generate(1)
    assert other.depth_test == data.depth_test  # the seeded stream does not depend on the hold-out
    assert other.iid_valid != data.iid_valid
    assert {(s.arg, s.cmd) for s in other.iid_valid + other.iid_test} != {
        (s.arg, s.cmd) for s in data.iid_valid + data.iid_test}


@pytest.mark.parametrize("block", [7, ctl._Stream.BLOCK])
def test_the_stream_draws_what_randint_draws_and_leaves_the_state_after_them(block: int,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ctl._Stream, "BLOCK", block)  # 7: a refill every few draws, as at the end of every block
    mine, numpy_own = np.random.RandomState(7), np.random.RandomState(7)
    mine.permutation(8), numpy_own.permutation(8)  # drawn on the state before the stream, as the tables are
    stream = ctl._Stream(mine)
    for _ in range(3000):
        for high in (1, 2, 3, 5, 8, 9, 10, 2**20 + 3):
            assert stream.randint(high) == numpy_own.randint(high)
        assert stream.randint(2, 6) == numpy_own.randint(2, 6)
        assert stream.randint(4, 5) == numpy_own.randint(4, 5) == 4  # one value: no output taken
        assert stream.ints(9, 5) == numpy_own.randint(9, size=[5]).tolist()
    stream.close()
    assert mine.randint(1000, size=50).tolist() == numpy_own.randint(1000, size=50).tolist()


def test_hand_checked_example_forward_and_backward(data: ctl.CTLData) -> None:
    # cmd [g, b, g, c, d], x = 0: d(0)=4, c(4)=0, g(0)=5, b(5)=0, g(0)=5 -> 101 (spec 1.1.6).
    sample = ctl.Sample(0, (6, 1, 6, 2, 3), "iid")
    assert ctl.evaluate(data.tables, sample.cmd, sample.arg) == 5
    assert ctl.words(sample, "forward") == ["000", "d", "c", "g", "b", "g"]
    assert ctl.words(sample, "backward") == ["g", "b", "g", "c", "d", "000"]
    fwd = ctl.encode([sample], data.tables, "forward")
    bwd = ctl.encode([sample], data.tables, "backward")
    assert fwd.tokens[0].tolist() == [ctl.SOS, 0, 8 + 3, 8 + 2, 8 + 6, 8 + 1, 8 + 6, ctl.EOS]
    assert bwd.tokens[0].tolist() == [ctl.SOS, 8 + 6, 8 + 1, 8 + 6, 8 + 2, 8 + 3, 0, ctl.EOS]
    assert fwd.labels.tolist() == bwd.labels.tolist() == [5]
    assert fwd.lengths.tolist() == [8]


def test_invalid_direction_names_allowed_values() -> None:
    with pytest.raises(ValueError, match="invalid direction='sideways'; allowed: forward, backward"):
        ctl.words(ctl.Sample(0, (1,), "basic"), "sideways")


def test_encoded_labels_match_tables(data: ctl.CTLData) -> None:
    enc = ctl.encoded_splits("backward")["depth_test"]
    s = data.depth_test[3]
    assert int(enc.labels[3]) == ctl.evaluate(data.tables, s.cmd, s.arg)
    assert int(enc.lengths[3]) == len(s.cmd) + 3
    assert int(enc.tokens[3, int(enc.lengths[3]) - 1]) == ctl.EOS
    assert int(enc.tokens[3, 1]) == 8 + s.cmd[0]  # backward: the outermost function comes first
    assert int(enc.lengths.max()) == ctl.MAX_INPUT_LEN == 13  # the longest input any model sees


def test_length_bucketed_batches_hold_at_most_two_adjacent_lengths() -> None:
    lengths = torch.tensor([3] * 10 + [4] * 7 + [6] * 9)
    gen = torch.Generator().manual_seed(0)
    it = ctl.length_bucketed_batches(lengths, 4, gen)
    seen: list[int] = []
    for _ in range(12):  # two epochs of 26 // 4 = 6 batches
        batch = next(it)
        assert batch.shape == (4,)
        values = sorted(set(lengths[batch].tolist()))
        assert len(values) <= 2
        seen.extend(batch.tolist())
    assert len(set(seen[:24])) == 24  # one epoch: no sample twice
    with pytest.raises(ValueError, match="invalid batch_size=100"):
        next(ctl.length_bucketed_batches(lengths, 100, gen))


def test_uniform_batches_draw_with_replacement() -> None:
    batch = next(ctl.uniform_batches(5, 64, torch.Generator().manual_seed(0)))
    assert batch.shape == (64,) and int(batch.max()) <= 4 and len(set(batch.tolist())) <= 5
    assert np.unique(batch.numpy()).size == 5
