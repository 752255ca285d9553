"""Probes (trainables/probes.py, probe_names.py and each family's inside.py): the statistics on hand-built weights and
gates, the request a config accepts, and per family: the documented columns with values in range, the same rows as
without probes otherwise, nothing run where none are asked, and packed members each with their own values."""

import math
import re
from typing import Any

import pytest
import torch

from core.probe_names import WEIGHT_PROBES, probe_request
from tests.tiny import assert_rows_equal, tiny_config
from trainables.csordas2021 import inside as ctl_inside
from trainables.csordas2021.config import CTLConfig
from trainables.csordas2021.family import train as ctl_train
from trainables.gros2024 import inside as gros_inside
from trainables.gros2024.config import GrosConfig
from trainables.gros2024.family import train as gros_train
from trainables.probes import RANGE_FLOOR, attention_statistics, gate_statistics, inputs_of, mixer_weights
from trainables.richter2020 import inside as richter_inside
from trainables.richter2020.loop import train_members
from trainables.richter2020.model import build_model

Rows = list[dict[str, Any]]
CTL = {"d_model": 8, "d_ff": 16, "n_heads": 2, "n_layers": 3, "n_steps": 4, "eval_every": 2, "eval_samples": 16,
       "batch_size": 8}
GROS = {"task": "nt", "basis": 4, "n_context": 8, "n_epochs": 4, "eval_every": 2, "eval_series": 4,
        "eval_predictions": 4, "final_eval_series": 4}


def probe_columns(rows: Rows) -> set[str]:
    return {key for row in rows for key in row if key.startswith("probe_")}


def without_probes(rows: Rows) -> Rows:
    return [{k: v for k, v in row.items() if not k.startswith("probe_")} for row in rows]


def assert_same_rows(probed: Rows, plain: Rows) -> None:
    """Bit for bit the same rows (wall time aside) once the probe columns are dropped: probing moved nothing."""
    strip = [{k: v for k, v in row.items() if k != "wall_time_s"} for row in without_probes(probed)]
    assert strip == [{k: v for k, v in row.items() if k != "wall_time_s"} for row in plain]


# --- the statistics on hand-built cases ---------------------------------------------------------------------------


def test_uniform_attention_has_entropy_log_n_and_its_mean_distance() -> None:
    n = 5
    w = torch.full((1, 2, 1, n, n), 1.0 / n)  # (K, B, H, N, N)
    s = attention_statistics(w, None, ["entropy", "peak", "distance"])
    distance = sum(abs(i - j) for i in range(n) for j in range(n)) / n**2
    assert s["entropy"].item() == pytest.approx(math.log(n))
    assert s["peak"].item() == pytest.approx(1 / n)
    assert s["distance"].item() == pytest.approx(distance)


@pytest.mark.parametrize(("offset", "nearest"), [(1, 1.0), (-1, 1.0), (2, 0.0), (-3, 0.0)])
def test_one_hot_attention_has_entropy_0_and_distance_its_offset(offset: int, nearest: float) -> None:
    n = 8
    w = torch.zeros(1, 1, 1, n, n)
    queries = torch.zeros(1, 1, n, dtype=torch.bool)
    for i in range(n):
        if 0 <= i + offset < n:
            w[0, 0, 0, i, i + offset] = 0.7  # geometric rows may sum to < 1: shares are read
            queries[0, 0, i] = True
    s = attention_statistics(w, queries, ["entropy", "peak", "distance", "nearest"])
    assert s["entropy"].item() == pytest.approx(0.0)
    assert s["peak"].item() == pytest.approx(1.0)
    assert s["distance"].item() == pytest.approx(abs(offset))
    assert s["nearest"].item() == pytest.approx(nearest)


def test_padding_queries_and_empty_rows_are_left_out_and_heads_members_kept_apart() -> None:
    w = torch.zeros(2, 1, 2, 3, 3)  # member 0 head 0 uniform on the real query only; member 1 head 1 one-hot
    w[0, 0, 0, 0] = 1 / 3
    w[0, 0, 0, 2] = torch.tensor([0.0, 0.0, 1.0])  # a padding query: not read
    w[1, 0, 1, :, 0] = 1.0
    queries = torch.tensor([[[True, True, False]], [[True, True, True]]])
    s = attention_statistics(w, queries, ["entropy", "distance"])
    assert s["entropy"][0, 0].item() == pytest.approx(math.log(3))  # row 1 is empty: left out
    assert math.isnan(s["entropy"][0, 1].item())  # no query holds weight: nothing to read
    assert s["entropy"][1, 1].item() == pytest.approx(0.0)
    assert s["distance"][1, 1].item() == pytest.approx((0 + 1 + 2) / 3)


def test_signed_weights_are_read_as_shares_of_their_magnitude() -> None:
    w = torch.tensor([[-2.0, 2.0], [1.0, -3.0]]).view(1, 1, 1, 2, 2)  # NAP / NON weights are signed
    s = attention_statistics(w, None, ["entropy", "peak"])
    assert s["entropy"].item() == pytest.approx((math.log(2) - (0.25 * math.log(0.25) + 0.75 * math.log(0.75))) / 2)
    assert s["peak"].item() == pytest.approx((0.5 + 0.75) / 2)


def test_range_is_the_mean_over_queries_of_log10_largest_over_smallest_weight() -> None:
    """Causal rows by hand: the first query sees one key (no range: left out), the masked keys (exactly 0) are not
    among the smallest; 0.9 / 0.1 spans log10 9 decades, 0.5 / 0.01 log10 50, a uniform row 0."""
    w = torch.tensor([[1.0, 0.0, 0.0, 0.0],
                      [0.9, 0.1, 0.0, 0.0],
                      [0.5, 0.49, 0.01, 0.0],
                      [0.25, 0.25, 0.25, 0.25]]).view(1, 1, 1, 4, 4)
    s = attention_statistics(w, None, ["range"])
    assert s["range"].item() == pytest.approx((math.log10(9) + math.log10(50) + 0.0) / 3)
    signed = torch.tensor([[-2.0, 0.02], [1.0, -1.0]]).view(1, 1, 1, 2, 2)  # magnitudes, as every statistic reads
    assert attention_statistics(signed, None, ["range"])["range"].item() == pytest.approx((2.0 + 0.0) / 2)


def test_range_caps_a_vanishing_weight_at_the_floor_and_reads_nothing_without_two_keys() -> None:
    w = torch.tensor([[[1.0, 1e-40], [1.0, 1e-3]]]).view(1, 1, 1, 2, 2)  # 1e-40: a denormal in float32
    s = attention_statistics(w, None, ["range"])
    assert s["range"].item() == pytest.approx((-math.log10(RANGE_FLOOR) + 3.0) / 2)
    one_key = torch.zeros(1, 1, 1, 3, 3)
    one_key[..., 0] = 1.0  # every query on key 0 alone
    assert math.isnan(attention_statistics(one_key, None, ["range"])["range"].item())
    padded = torch.full((1, 1, 1, 2, 2), 0.5)
    padded[..., 1, :] = torch.tensor([0.99, 0.01])
    queries = torch.tensor([[[True, False]]])  # the second query is padding: not read
    assert attention_statistics(padded, queries, ["range"])["range"].item() == pytest.approx(0.0)


def test_a_gate_fixed_open_reads_1_closed_0() -> None:
    g = torch.stack([torch.ones(2, 3, 4), torch.zeros(2, 3, 4), torch.full((2, 3, 4), 0.25)])  # (K, B, N, d)
    g[2, :, 0] = 0.75  # member 2: one position of three open
    s = gate_statistics(g, None, ["gate", "gate_open"])
    assert s["gate"].tolist() == pytest.approx([1.0, 0.0, (0.75 + 0.25 * 2) / 3])
    assert s["gate_open"].tolist() == pytest.approx([1.0, 0.0, 1 / 3])
    padded = torch.tensor([[True, True, False]] * 2).expand(3, 2, 3)
    assert gate_statistics(g, padded, ["gate_open"])["gate_open"].tolist() == pytest.approx([1.0, 0.0, 0.5])


def test_average_attention_weighs_uniformly_and_sum_has_no_weights() -> None:
    from trainables.mixers import build_mixer

    x = torch.randn(2, 4, 8)
    average = build_mixer("average", 8, 2, hidden_norm=False, attention_gelu=False, dropout=0.0)
    w = mixer_weights(average, x, causal=True)
    assert w is not None and w.shape == (2, 1, 4, 4)
    assert w[0, 0, 3].tolist() == pytest.approx([0.25] * 4)
    assert w[0, 0, 1].tolist() == pytest.approx([0.5, 0.5, 0.0, 0.0])
    total = build_mixer("sum", 8, 2, hidden_norm=False, attention_gelu=False, dropout=0.0)
    assert mixer_weights(total, x) is None


def test_input_hooks_are_gone_after_the_probe() -> None:
    model = build_model(tiny_config())
    mixers = [layer.mixer for layer in model.layers]  # type: ignore[union-attr]
    with inputs_of(mixers) as seen:
        model(torch.randint(0, 10, (2, 8)))
    assert all(x is not None and x.shape == (2, 8, 8) for x in seen)
    assert not any(m._forward_pre_hooks for m in mixers)


# --- what a trial may ask ------------------------------------------------------------------------------------------


def test_a_request_in_any_spelling_becomes_the_family_order() -> None:
    allowed = ("entropy", "peak", "distance")
    assert probe_request(None, allowed) is None and probe_request(False, allowed) is None
    assert probe_request(True, allowed) == probe_request("all", allowed) == "entropy,peak,distance"
    assert probe_request(True, WEIGHT_PROBES) == "entropy,peak,distance,range"  # range last: older columns keep place
    assert probe_request("distance, entropy", allowed) == probe_request(["entropy", "distance"], allowed) \
        == "entropy,distance"


@pytest.mark.parametrize("make", [
    lambda probes: CTLConfig(model="NDR", probes=probes),
    lambda probes: GrosConfig(task="nt", probes=probes),
    lambda probes: tiny_config(probes=probes),
])
def test_an_unknown_probe_is_refused_in_one_line_naming_field_value_and_allowed(make: Any) -> None:
    with pytest.raises(ValueError) as info:
        make("entropy,attention_entropy")
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith("invalid probes='entropy,attention_entropy' ('attention_entropy': no probe of this family)")
    assert "allowed: None (no probes), True or 'all' (every probe), or some of entropy, peak, distance, " in text
    with pytest.raises(ValueError, match=r"invalid probes=3; allowed"):
        make(3)


def test_the_probes_column_is_written_only_when_asked() -> None:
    assert "probes" not in CTLConfig(model="NDR").resolved()
    assert CTLConfig(model="NDR", probes=True).resolved()["probes"] == \
        "entropy,peak,distance,nearest,range,drift,last_op,same_peak,blur,gate,gate_open,gate_early,gate_ready"
    assert "probes" not in GrosConfig(task="nt").resolved()
    assert tiny_config(probes="entropy").resolved()["probes"] == "entropy"


# --- per family: columns, ranges, rows otherwise unchanged, members apart ------------------------------------------


def test_ctl_ndr_rows_hold_every_step_heads_attention_and_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    probed = ctl_train([CTLConfig(model="NDR", probes=True, **CTL)], [0, 1], packed=True).rows  # type: ignore[arg-type]
    steps, heads = range(1, 4), range(1, 3)
    attention = ("entropy", "peak", "distance", "nearest", "range", "drift", "last_op", "same_peak", "blur")
    expected = {f"probe_{s}_s{step}_h{h}" for s in attention for step in steps for h in heads} | {
        f"probe_{s}_s{step}" for s in ("gate", "gate_open", "gate_early", "gate_ready") for step in steps}
    assert probe_columns(probed) == expected and all(expected <= row.keys() for row in probed)
    longest = 14  # the deeper test samples have at most 14 tokens: SOS, argument, 10 functions, EOS (and a digit)
    for row in probed:
        for key, value in row.items():
            if not key.startswith("probe_"):
                continue
            assert math.isfinite(value) or key.startswith("probe_blur_s1_"), key
            if key.startswith("probe_entropy"):
                assert 0 <= value <= math.log(longest)
            elif key.startswith("probe_distance"):
                assert 1 <= value <= longest  # geometric attention never attends to the query itself
            elif key.startswith("probe_range"):
                assert 0 <= value <= 30  # decades, at most -log10(RANGE_FLOOR)
            elif key.startswith("probe_blur"):  # a change of entropy, nats: NaN at step 1 (nothing processed yet)
                assert abs(value) <= math.log(longest) if not key.startswith("probe_blur_s1_") else math.isnan(value)
            else:
                assert 0 <= value <= 1, key
    assert probed[0]["probe_gate_s1"] != probed[2]["probe_gate_s1"]  # seeds 0 and 1: each its own model
    assert all(row[f"probe_drift_s1_h{h}"] == 0 and row[f"probe_same_peak_s1_h{h}"] == 1 for row in probed
               for h in heads)  # step 1 against itself
    monkeypatch.setattr(ctl_inside, "probe_columns", _never)
    plain = ctl_train([CTLConfig(model="NDR", **CTL)], [0, 1], packed=True).rows  # type: ignore[arg-type]
    assert not probe_columns(plain)
    assert_same_rows(probed, plain)


def test_ctl_packed_members_get_the_probe_values_they_get_alone() -> None:
    cfg = CTLConfig(model="+ rel + gate", probes="entropy,gate", **CTL)  # type: ignore[arg-type]
    packed = ctl_train([cfg], [0, 1], packed=True).rows
    solo = ctl_train([cfg], [0, 1], packed=False).rows
    assert probe_columns(packed) == probe_columns(solo) == {
        *(f"probe_entropy_s{s}_h{h}" for s in range(1, 4) for h in (1, 2)), *(f"probe_gate_s{s}" for s in range(1, 4))}
    assert_rows_equal(packed, solo, tol=1e-4)


def test_ctl_lstm_has_nothing_to_probe() -> None:
    rows = ctl_train([CTLConfig(model="LSTM", probes=True, d_model=8, n_steps=2, eval_every=2, eval_samples=4,
                                batch_size=4)], [0], packed=False).rows
    assert not probe_columns(rows)


def test_gros_rows_hold_the_heads_attention_per_member(monkeypatch: pytest.MonkeyPatch) -> None:
    for attention in ("ea", "dpa"):
        probed = gros_train([GrosConfig(attention=attention, probes=True, **GROS)], [0, 1], packed=True).rows  # type: ignore[arg-type]
        assert probe_columns(probed) == {f"probe_{s}_l1_h1" for s in ("entropy", "peak", "distance", "range")}
        for row in probed:  # causal over 8 positions: query i sees i + 1 keys
            assert 0 <= row["probe_entropy_l1_h1"] <= sum(math.log(i + 1) for i in range(8)) / 8
            assert 1 / 8 <= row["probe_peak_l1_h1"] <= 1
            assert 0 <= row["probe_distance_l1_h1"] <= 7
            assert 0 <= row["probe_range_l1_h1"] <= 30
        solo = gros_train([GrosConfig(attention=attention, probes=True, **GROS)], [0, 1], packed=False).rows  # type: ignore[arg-type]
        assert_rows_equal(probed, solo, tol=1e-4)
        assert probed[0]["probe_entropy_l1_h1"] != probed[2]["probe_entropy_l1_h1"]
    monkeypatch.setattr(gros_inside, "probe_columns", _never)
    plain = gros_train([GrosConfig(attention="dpa", **GROS)], [0, 1], packed=True).rows  # type: ignore[arg-type]
    assert not probe_columns(plain)
    assert_same_rows(probed, plain)


def test_gros_average_mixer_reads_the_uniform_causal_weights() -> None:
    rows = gros_train([GrosConfig(mixer="average", probes="entropy,distance", **GROS)], [0], packed=True).rows  # type: ignore[arg-type]
    for row in rows:
        assert row["probe_entropy_l1_h1"] == pytest.approx(sum(math.log(i + 1) for i in range(8)) / 8)
        assert row["probe_distance_l1_h1"] == pytest.approx(sum(i / 2 for i in range(8)) / 8)


def test_richter_rows_hold_each_attention_layer_and_no_column_for_a_convolution(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tiny_config(architecture="MTE", task="mode", n_layers=2, mixer_stack="sepconv,softmax", n_steps=4,
                      eval_every=2, probes=True)
    probed = train_members([cfg], [0, 1], pack=None)
    assert probe_columns(probed) == {f"probe_{s}_l2_h{h}" for s in ("entropy", "peak", "distance", "range")
                                     for h in (1, 2)}
    n = cfg.resolved()["val_seq_len"]
    for row in probed:
        assert 0 <= row["probe_entropy_l2_h1"] <= math.log(n) * (1 + 1e-5)  # float32
        assert 1 / n - 1e-6 <= row["probe_peak_l2_h2"] <= 1
        assert 0 <= row["probe_distance_l2_h1"] <= n - 1
    solo = train_members([cfg], [0, 1], pack=1)
    assert_rows_equal(probed, solo, tol=1e-5)
    assert probed[0]["probe_peak_l2_h1"] != probed[2]["probe_peak_l2_h1"]
    monkeypatch.setattr(richter_inside, "probe_columns", _never)
    plain = train_members([tiny_config(architecture="MTE", task="mode", n_layers=2, mixer_stack="sepconv,softmax",
                                       n_steps=4, eval_every=2)], [0, 1], pack=None)
    assert not probe_columns(plain)
    assert_same_rows(probed, plain)


def test_richter_nap_at_initialisation_reads_near_uniform() -> None:
    """NAP's weights at initialisation (gain 1, bias 0 on standardised logits of tiny weights) spread over the keys:
    their magnitude shares are far from one-hot, so the entropy sits near log N."""
    cfg = tiny_config(architecture="NAP", task="mode", n_steps=2, eval_every=2, probes="entropy")
    rows = train_members([cfg], [0], pack=1)
    n = cfg.resolved()["val_seq_len"]
    columns = sorted(probe_columns(rows))
    assert columns == ["probe_entropy_l1_h1", "probe_entropy_l1_h2", "probe_entropy_l2_h1", "probe_entropy_l2_h2"]
    assert all(0.8 * math.log(n) <= rows[0][c] <= math.log(n) for c in columns)


def test_nap_bias_share_reads_b_against_g_per_head_and_member() -> None:
    from trainables.mixers.normalized import NormalizedAttention

    mixer = NormalizedAttention(8, 2)
    assert mixer.bias_share().tolist() == [0.0, 0.0]  # initialisation: g 1, b 0
    with torch.no_grad():
        mixer.bias.copy_(torch.tensor([1.0, -3.0]))
        assert mixer.bias_share().tolist() == [0.5, 0.75]  # |b| / (|g| + |b|): the sign of b does not matter
        mixer.gain.zero_()
        mixer.bias.zero_()
        assert mixer.bias_share().tolist() == [0.0, 0.0]  # nothing at all: no share
    mixer.gain = torch.nn.Parameter(torch.tensor([[1.0, 3.0], [0.0, 1.0]]))  # stacked members (K, H)
    mixer.bias = torch.nn.Parameter(torch.tensor([[1.0, 1.0], [2.0, 0.0]]))
    assert mixer.bias_share().tolist() == [[0.5, 0.25], [1.0, 0.0]]


def test_richter_nap_rows_hold_its_bias_share_per_layer_and_head_without_reading_any_input(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(richter_inside, "inputs_of", _never)  # the bias share reads parameters only
    cfg = tiny_config(architecture="NAP", task="mode", n_steps=4, eval_every=2, probes="bias")
    probed = train_members([cfg], [0, 1], pack=None)
    columns = {f"probe_bias_l{layer}_h{head}" for layer in (1, 2) for head in (1, 2)}
    assert probe_columns(probed) == columns
    assert all(0 < row[c] < 1 for row in probed for c in columns)  # b has moved from 0, g has not vanished
    assert probed[0]["probe_bias_l1_h1"] != probed[2]["probe_bias_l1_h1"]  # each member its own
    assert_rows_equal(probed, train_members([cfg], [0, 1], pack=1), tol=1e-5)
    plain = train_members([tiny_config(architecture="NAP", task="mode", n_steps=4, eval_every=2)], [0, 1], pack=None)
    assert_same_rows(probed, plain)
    summed = train_members([tiny_config(architecture="sum", task="mode", n_steps=2, eval_every=2, probes="bias")],
                           [0], pack=1)
    assert not probe_columns(summed)  # no bias b: no column


def test_the_column_names_follow_the_documented_scheme() -> None:
    from core.probe_names import column

    assert column("entropy", layer=2, head=1) == "probe_entropy_l2_h1"
    assert column("nearest", step=14, head=1) == "probe_nearest_s14_h1"
    assert column("gate_open", step=3) == "probe_gate_open_s3"
    assert re.fullmatch(r"probe_[a-z_]+_[ls]\d+(_h\d+)?", column("peak", layer=10, head=12))


def _never(*_args: object, **_kwargs: object) -> Any:
    raise AssertionError("a trial without probes ran a probe")


def test_a_study_that_asks_writes_probe_columns_to_its_trial_file(tmp_path: Any) -> None:
    """Through the Tune adapter (no Ray): the `probes` column and the probe columns reach the trial's Parquet file."""
    from pathlib import Path

    import polars as pl

    from search_spaces import Study
    from study.results.storage import StudyStorage
    from study.trial.resources import Resources
    from study.trial.trainable import run_trial

    study = Study(name="probes.gros", goal="probe columns in the study's own rows", tasks=("nt",),
                  scientific={"attention": ("ea",)}, fixed={**{k: v for k, v in GROS.items() if k != "task"},
                                                            "probes": ["peak", "entropy"]}, seeds=(0, 1))
    storage = StudyStorage(storage=str(tmp_path), directory="run")
    for config in study.grid():
        run_trial(study, storage, {n: config[n] for n in study.axes}, resources=Resources())
    (path,) = Path(storage.root).glob("trials/*.parquet")  # one trial (artifacts beside it)
    frame = pl.read_parquet(path)
    assert frame["probes"].unique().to_list() == ["entropy,peak"]
    assert sorted(c for c in frame.columns if c.startswith("probe_")) == ["probe_entropy_l1_h1", "probe_peak_l1_h1"]
    assert frame["probe_peak_l1_h1"].dtype == pl.Float64 and frame["probe_peak_l1_h1"].is_between(1 / 8, 1).all()
