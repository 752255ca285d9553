"""The CTL family's own probes over its steps (trainables/csordas2021/inside.py): ``drift`` (how much of a query's
attention moved since step 1), ``last_op`` (the share of samples whose read-out column looks hardest at the last
operation), ``same_peak`` (queries still peaking where they did at step 1), ``blur`` (a processed column's entropy
against its entropy when processed), ``gate_early`` / ``gate_ready`` (function columns open before their input is ready
/ at the step it is), on hand-built weights and gates with hand-computed values."""

import math

import pytest
import torch

from trainables.csordas2021.inside import (
    application_order,
    last_operation,
    route_columns,
    step_columns,
    timing_columns,
)


def _rows(*rows: list[float]) -> torch.Tensor:
    """Weights (K=1, B=1, H=1, N, N) from N rows."""
    return torch.tensor(rows, dtype=torch.float64)[None, None, None]


def _values(w: torch.Tensor, first: torch.Tensor, names: tuple[str, ...], real: torch.Tensor | None = None,
            targets: torch.Tensor | None = None) -> dict[str, list[float]]:
    k, b, _, n, _ = w.shape
    real = torch.ones(k, b, n, dtype=torch.bool) if real is None else real
    targets = torch.ones(b, dtype=torch.long) if targets is None else targets
    return {name: value.tolist() for name, value in route_columns(w, first, real, targets, names, step=2)}


def test_the_last_operation_is_after_sos_backward_and_before_eos_forward() -> None:
    lengths = torch.tensor([5, 7])  # SOS, 2 or 4 functions, the argument, EOS
    assert last_operation(lengths, "backward").tolist() == [1, 1]  # "g b 000": g, applied last, right after SOS
    assert last_operation(lengths, "forward").tolist() == [3, 5]  # "000 b g": g, applied last, right before EOS
    with pytest.raises(ValueError, match=r"^invalid direction='up'; allowed: forward, backward$"):
        last_operation(lengths, "up")


def test_drift_is_the_share_of_attention_moved_since_step_1() -> None:
    first = _rows([0, 1, 0], [1, 0, 0], [0, 1, 0])
    same_shares = 3 * first  # other magnitudes, the same shares: nothing moved
    assert _values(same_shares, first, ("drift",)) == {"probe_drift_s2_h1": [0.0]}
    # row 0 moved wholly (1), row 1 half (0.5), row 2 not at all (0): mean 0.5
    moved = _rows([0, 0, 1], [0.5, 0, 0.5], [0, 1, 0])
    assert _values(moved, first, ("drift",))["probe_drift_s2_h1"] == pytest.approx([0.5])
    # a padding query is left out: only rows 0 and 1 count, (1 + 0.5) / 2
    real = torch.tensor([[[True, True, False]]])
    assert _values(moved, first, ("drift",), real=real)["probe_drift_s2_h1"] == pytest.approx([0.75])


def test_last_op_counts_the_samples_whose_read_out_column_peaks_at_the_last_operation() -> None:
    # two samples of lengths 4 and 3 (width 4): their read-out columns are 3 and 2; the last operation at 1 (backward)
    w = torch.zeros(2, 2, 1, 4, 4, dtype=torch.float64)  # (K=2 members, B, H, N, N)
    w[0, 0, 0, 3] = torch.tensor([0.1, 0.6, 0.3, 0.0])  # member 1, sample 1: peak at 1, a hit
    w[0, 1, 0, 2] = torch.tensor([0.7, 0.3, 0.0, 0.0])  # member 1, sample 2: peak at 0, a miss
    w[1, 0, 0, 3] = torch.tensor([0.0, 0.5, 0.5, 0.0])  # member 2: a tie goes to the first key, 1: a hit
    w[1, 1, 0, 2] = torch.tensor([0.2, 0.8, 0.0, 0.0])  # a hit
    real = (torch.arange(4) < torch.tensor([4, 3])[:, None]).expand(2, 2, 4)
    values = _values(w, w, ("last_op", "drift"), real=real, targets=torch.tensor([1, 1]))
    assert values["probe_last_op_s2_h1"] == [0.5, 1.0]
    # forward the same weights read the position before EOS (2 and 1): member 1 misses both, member 2 hits sample 2
    forward = _values(w, w, ("last_op",), real=real, targets=last_operation(torch.tensor([4, 3]), "forward"))
    assert forward["probe_last_op_s2_h1"] == [0.0, 0.5]
    # a read-out column without any weight is left out of the share
    w[1, 1, 0, 2] = 0.0
    assert _values(w, w, ("last_op",), real=real, targets=torch.tensor([1, 1]))["probe_last_op_s2_h1"] == [0.5, 1.0]


def test_the_functions_are_numbered_in_the_order_they_are_applied() -> None:
    lengths = torch.tensor([6, 5])  # SOS, 3 or 2 functions, the argument, EOS (width 6)
    # backward "SOS f3 f2 f1 x EOS": the function right after SOS is applied last
    assert application_order(lengths, "backward", 6).tolist() == [[0, 3, 2, 1, 0, 0], [0, 2, 1, 0, 0, 0]]
    # forward "SOS x f1 f2 f3 EOS"
    assert application_order(lengths, "forward", 6).tolist() == [[0, 0, 1, 2, 3, 0], [0, 0, 1, 2, 0, 0]]
    with pytest.raises(ValueError, match=r"^invalid direction='sideways'; allowed: forward, backward$"):
        application_order(lengths, "sideways", 6)


def test_gate_timing_counts_columns_open_before_and_when_their_input_is_ready() -> None:
    """One backward sample of 3 functions (positions 1-3 apply the 3rd, 2nd, 1st), two members. Member 1 opens each
    column exactly at its step; member 2 opens the last-applied column (position 1) from step 1 on, too early."""
    order = application_order(torch.tensor([6]), "backward", 6)  # [[0, 3, 2, 1, 0, 0]]
    on_time = {1: [3], 2: [2], 3: [1]}  # step -> the open positions
    too_early = {1: [3, 1], 2: [2, 1], 3: [1]}

    def gates(step: int) -> torch.Tensor:
        g = torch.zeros(2, 1, 6, 4, dtype=torch.float64)  # (K, B, N, d)
        for member, opened in enumerate((on_time, too_early)):
            for position in opened[step]:
                g[member, 0, position] = 0.9  # mean over channels above 1/2: open
        g[:, 0, 5] = 0.9  # EOS open: not a function, never counted
        return g

    def values(step: int) -> dict[str, list[float]]:
        return {name: v.tolist() for name, v in timing_columns(gates(step), order, ("gate_early", "gate_ready"),
                                                                step=step)}

    # step 1: not ready yet the 2nd and 3rd (positions 2, 1): member 2 has 1 of those 2 open; ready the 1st (position 3)
    assert values(1) == {"probe_gate_early_s1": [0.0, 0.5], "probe_gate_ready_s1": [1.0, 1.0]}
    assert values(2) == {"probe_gate_early_s2": [0.0, 1.0], "probe_gate_ready_s2": [1.0, 1.0]}
    step3 = values(3)  # every input ready: nothing early to count (NaN); the 3rd (position 1) ready now
    assert step3["probe_gate_ready_s3"] == [1.0, 1.0]
    assert all(math.isnan(v) for v in step3["probe_gate_early_s3"])


def test_same_peak_counts_the_queries_whose_largest_weight_stays_on_its_step_1_key() -> None:
    first = _rows([0, 0.9, 0.1], [0.6, 0, 0.4], [0.2, 0.8, 0])
    # row 0 spreads but keeps its peak (key 1), row 1 moves it to key 2, row 2 keeps key 1: 2 of 3
    later = _rows([0.3, 0.4, 0.3], [0.3, 0, 0.7], [0.4, 0.6, 0])
    assert _values(later, first, ("same_peak",))["probe_same_peak_s2_h1"] == pytest.approx([2 / 3])
    assert _values(first, first, ("same_peak",))["probe_same_peak_s2_h1"] == [1.0]


def test_blur_is_a_processed_columns_entropy_now_minus_when_it_was_processed() -> None:
    """One backward sample "SOS f2 f1 x EOS" (length 5): f1 (position 2) is processed at step 1, f2 (position 1) at
    step 2. Its attention rows over three steps, each one-hot or uniform over two keys (entropy 0 or ln 2)."""
    one_hot, two = [0.0, 0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.5, 0.5]
    eos_row = [0.0, 1.0, 0.0, 0.0, 0.0]

    def step(f2: list[float], f1: list[float]) -> dict[str, torch.Tensor | None]:
        rows = torch.tensor([one_hot, f2, f1, one_hot, eos_row], dtype=torch.float64)
        return {"attention": rows[None, None], "gates": None}  # (B=1, H=1, N, N): one model, no K axis

    trace = [step(one_hot, one_hot), step(one_hot, two), step(two, two)]
    real = torch.ones(1, 1, 5, dtype=torch.bool)
    columns = dict(step_columns(trace, real, ["blur"], stacked=False, lengths=torch.tensor([5]),
                                direction="backward"))
    assert math.isnan(columns["probe_blur_s1_h1"].item())  # nothing processed before step 1
    # step 2: f1 (processed at step 1, entropy 0) now at ln 2
    assert columns["probe_blur_s2_h1"].item() == pytest.approx(math.log(2))
    # step 3: f1 ln 2 - 0, f2 (processed at step 2, entropy 0) ln 2 - 0: mean ln 2
    assert columns["probe_blur_s3_h1"].item() == pytest.approx(math.log(2))
    sharper = [step(two, two), step(one_hot, one_hot), step(one_hot, one_hot)]  # f1 sharper after: -ln 2
    columns = dict(step_columns(sharper, real, ["blur"], stacked=False, lengths=torch.tensor([5]),
                                direction="backward"))
    assert columns["probe_blur_s2_h1"].item() == pytest.approx(-math.log(2))
    assert columns["probe_blur_s3_h1"].item() == pytest.approx(-math.log(2) / 2)  # f1 -ln 2, f2 0 - 0
