"""CTL models and training (trainables.csordas2021): init, variants train without NaN, config errors, probe
artifacts."""

from __future__ import annotations

import math

import pytest
import torch

from tests.tiny import DEVICES
from trainables.catalog import family_for_task
from trainables.csordas2021.config import MODELS, VARIANTS, CTLConfig
from trainables.csordas2021.family import train
from trainables.csordas2021.loop import train_seed
from trainables.csordas2021.members import build_model
from trainables.csordas2021.models import GatedLayer
from trainables.csordas2021.relative import RelativeAttention, sinusoid
from trainables.mixers import MIXERS

TINY = {"d_model": 8, "d_ff": 16, "n_heads": 2, "n_layers": 3, "n_steps": 4, "eval_every": 2, "eval_samples": 32,
        "batch_size": 16}


def tiny(model: str, **kw: object) -> CTLConfig:
    base = {k: v for k, v in TINY.items() if model != "LSTM" or k not in ("d_ff", "n_heads", "n_layers")}
    return CTLConfig(model=model, **{**base, **kw})


def test_gate_bias_starts_at_minus_three_so_layers_copy() -> None:
    for model in ("NDR", "+ rel + gate", "+ abs/rel + gate"):
        layer = build_model(tiny(model)).layer
        assert isinstance(layer, GatedLayer)
        assert torch.all(layer.gate2.bias == -3.0)
        z = torch.zeros(1, 1, 8)
        with torch.no_grad():
            layer.gate1.bias.zero_()  # hidden = relu(0) = 0: the gate is sigmoid(b4) exactly
        g = torch.sigmoid(layer.gate2(torch.relu(layer.gate1(z))))
        assert torch.allclose(g, torch.full_like(g, 1 / (1 + math.exp(3))), atol=1e-6)
    assert build_model(tiny("NDR")).layer.ln2 is not None  # NDR: LayerNorm update
    assert build_model(tiny("+ rel + gate")).layer.ln2 is None  # tanh update


@pytest.mark.parametrize("bias", [0.0, -1.5, 2.0])
def test_gate_bias_sets_the_gates_initial_bias_and_mean(bias: float, one_torch_thread: None) -> None:
    """``gate_bias`` (App. C.2's ablation): the gate's output bias starts there and, on real inputs, the initial mean
    gate of the first step is about sigmoid(bias); every other parameter starts as the paper model's (same seed)."""
    for model in ("NDR", "+ rel + gate"):
        torch.manual_seed(0)
        paper = build_model(tiny(model))
        torch.manual_seed(0)
        ablated = build_model(tiny(model, gate_bias=bias))
        layer = ablated.layer
        assert isinstance(layer, GatedLayer)
        assert torch.all(layer.gate2.bias == bias)
        for name, p in ablated.named_parameters():
            if name != "layer.gate2.bias":
                assert torch.equal(p, paper.get_parameter(name)), name
    model = build_model(tiny("NDR", d_model=64, d_ff=64, gate_bias=bias)).eval()
    model.set_record(True)
    tokens = torch.randint(1, 10, (32, 9))
    model(tokens, torch.full((32,), 9))
    assert model.trace is not None
    first = model.trace[0]["gates"]
    assert first is not None
    # the hidden layer's contribution has mean ~0 (Xavier, gain 1): the mean gate sits near sigmoid(bias)
    assert float(first.mean()) == pytest.approx(1 / (1 + math.exp(-bias)), abs=0.05)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("model", MODELS)
def test_every_model_trains_a_few_steps_without_nan(model: str, device: str, one_torch_thread: None) -> None:
    rows, attention, gates = train_seed(tiny(model, direction="backward"), seed=0, device=device)
    assert [r["step"] for r in rows] == [2, 4]
    for r in rows:
        assert r["status"] == "ok" and r["device"] == device
        for key in ("train_loss", "iid_loss", "depth_val_loss", "test_loss"):
            assert math.isfinite(r[key]), key
        for key in ("train_accuracy", "iid_accuracy", "depth_val_accuracy", "test_accuracy"):
            assert 0.0 <= r[key] <= 1.0
        assert r["val_accuracy"] == r["iid_accuracy"]
    layered = model != "LSTM"
    assert bool(attention) == layered
    assert bool(gates) == ("gate" in model or model == "NDR")
    if layered:
        steps = {a["layer_step"] for a in attention}
        assert steps == {1, 2, 3}
        n = max(a["query"] for a in attention) + 1
        assert n == 12  # the probe: the first depth-test sample (depth 9) + argument + SOS + EOS
        row_sums: dict[tuple[int, int, int], float] = {}
        for a in attention:
            key = (a["layer_step"], a["head"], a["query"])
            row_sums[key] = row_sums.get(key, 0.0) + a["weight"]
        assert max(row_sums.values()) <= 1.0 + 1e-5


def test_seeds_are_reproducible_and_differ(one_torch_thread: None) -> None:
    cfg = tiny("NDR")
    a, _, _ = train_seed(cfg, seed=3)
    b, _, _ = train_seed(cfg, seed=3)
    c, _, _ = train_seed(cfg, seed=4)
    assert [r["train_loss"] for r in a] == [r["train_loss"] for r in b]
    assert [r["train_loss"] for r in a] != [r["train_loss"] for r in c]


def test_family_trains_all_seeds_and_returns_artifacts(one_torch_thread: None) -> None:
    family = family_for_task("ctl")
    assert family.config is CTLConfig
    result = family.train([tiny("NDR")], [0, 1])
    assert sorted({(r["seed"], r["step"]) for r in result.rows}) == [(0, 2), (0, 4), (1, 2), (1, 4)]
    assert set(result.artifacts) == {"attention", "gates"}
    assert {g["seed"] for g in result.artifacts["gates"]} == {0, 1}
    with pytest.raises(ValueError, match="invalid number of configs=2; allowed: 1"):
        train([tiny("NDR"), tiny("NDR")], [0])


def test_resolved_takes_the_paper_values() -> None:
    r = CTLConfig(model="NDR").resolved()
    assert (r["d_model"], r["d_ff"], r["n_heads"], r["n_layers"]) == (256, 512, 1, 14)
    assert (r["learning_rate"], r["weight_decay"], r["dropout"], r["att_dropout"], r["gate_dropout"]) == (
        1.5e-4, 0.01, 0.5, 0.1, 0.1)
    assert r["length_bucketed"] is True and r["attention"] == "geometric" and r["n_steps"] == 30000
    g = CTLConfig(model="+ abs/rel + gate").resolved()
    assert (g["d_ff"], g["learning_rate"], g["attention"], g["layer"]) == (1024, 2e-4, "abs_relative", "gate_tanh")
    t = CTLConfig(model="Transformer", d_model=64).resolved()
    assert (t["d_model"], t["n_layers"], t["weight_decay"], t["attention"]) == (64, 11, 0.0025, "masked_softmax")
    assert CTLConfig(model="LSTM").resolved()["optimizer"] == "adam"
    # every field but an unasked `probes` and the ablation fields at the paper's values: a trial writes the columns it
    # wrote before they existed
    assert set(CTLConfig.field_names()) - {"probes", "directional", "gate_bias"} <= set(r)
    assert not {"directional", "gate_bias"} & set(r)
    ablated = CTLConfig(model="NDR", directional=False, gate_bias=0).resolved()
    assert ablated["directional"] is False and ablated["gate_bias"] == 0.0 and type(ablated["gate_bias"]) is float
    assert "directional" not in CTLConfig(model="+ geom. att.", gate_bias=-3).resolved()
    assert set(VARIANTS) == set(MODELS)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"model": "GRU"}, "invalid model='GRU'; allowed: LSTM, Transformer"),
    ({"model": "NDR", "direction": "up"}, "invalid direction='up'; allowed: forward, backward"),
    ({"model": "NDR", "dropout": 1.5}, r"invalid dropout=1.5; allowed: None \(model default\) or a number in"),
    ({"model": "NDR", "mixer": "softmax"}, "invalid mixer='softmax'; allowed: None for model 'NDR'"),
    ({"model": "Transformer", "mixer": "nope"}, "invalid mixer='nope'; allowed: None, .*softmax"),
    ({"model": "NDR", "d_model": 10, "n_heads": 4}, "invalid d_model=10; allowed: a multiple of n_heads=4"),
    ({"model": "NDR", "n_steps": 1500}, "invalid n_steps=1500; allowed: a multiple of eval_every=1000"),
    ({"model": "NDR", "task": "cases"}, "invalid task='cases'; allowed: ctl"),
    ({"model": "+ rel + gate", "directional": False},
     r"invalid directional=False; allowed: True for model '\+ rel \+ gate' \(only geometric attention"),
    ({"model": "NDR", "directional": "no"}, "invalid directional='no'; allowed: True or False"),
    ({"model": "+ geom. att.", "gate_bias": 0.0},
     r"invalid gate_bias=0.0; allowed: -3.0 for model '\+ geom. att.' \(only the copy-gated models"),
    ({"model": "LSTM", "gate_bias": -1}, "invalid gate_bias=-1.0; allowed: -3.0 for model 'LSTM'"),
    ({"model": "NDR", "gate_bias": float("nan")}, "invalid gate_bias=nan; allowed: a finite number"),
])
def test_config_errors_name_field_value_and_allowed(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CTLConfig(**kwargs)  # type: ignore[arg-type]


def test_from_dict_rejects_unknown_keys() -> None:
    with pytest.raises(ValueError, match="invalid hyperparameter 'colour'='red'; allowed: model, task"):
        CTLConfig.from_dict({"model": "NDR", "colour": "red"})
    assert CTLConfig.from_dict({"model": "NDR", "n_layers": 3}).n_layers == 3


@pytest.mark.parametrize("mixer", MIXERS.names())
def test_registry_mixers_replace_the_transformer_attention(mixer: str, one_torch_thread: None) -> None:
    cfg = tiny("Transformer", mixer=mixer)
    # mixer says which registry mixer runs; attention (the model's own) is null where it is replaced.
    assert (cfg.resolved()["mixer"], cfg.resolved()["attention"]) == (mixer, None)
    assert (tiny("Transformer").resolved()["mixer"], tiny("Transformer").resolved()["attention"]) == (
        None, "masked_softmax")
    rows, _, _ = train_seed(cfg, seed=0)
    assert all(math.isfinite(r["train_loss"]) for r in rows)


def test_relative_attention_abs_switch_and_masking() -> None:
    torch.manual_seed(0)
    att = RelativeAttention(8, 2, abs_gate=True).eval()
    att.record = True
    x = torch.randn(2, 4, 8)
    pad = torch.tensor([[False] * 4, [False, False, True, True]])
    out = att(x, ~pad)
    assert out.shape == (2, 4, 8)
    w = att.last_weights
    assert w is not None and torch.allclose(w.sum(-1), torch.ones(2, 2, 4))
    assert torch.all(w[1, :, :, 2:] == 0)
    pe = sinusoid(torch.tensor([0, 1, -1]), 4)
    assert torch.allclose(pe[0], torch.tensor([0.0, 1.0, 0.0, 1.0]))
    assert torch.allclose(pe[2, 0], -pe[1, 0])


def test_divergence_is_a_result_not_a_crash(one_torch_thread: None) -> None:
    rows, attention, gates = train_seed(tiny("NDR", learning_rate=1e30, grad_clip_norm=1e30, n_steps=6), seed=0)
    assert [r["step"] for r in rows] == [2, 4, 6]
    assert {r["status"] for r in rows} == {"diverged"}
    assert rows[-1]["test_accuracy"] == 0.0 and math.isnan(rows[-1]["test_loss"])
    assert attention == [] and gates == []


def _own_attentions() -> dict[str, torch.nn.Module]:
    """Every attention a CTL model runs that is not a registry mixer, at d = 8, H = 2."""
    from trainables.csordas2021.geometric import GeometricAttention
    from trainables.csordas2021.models import RegistryMixer

    return {"transformer": RegistryMixer("softmax", 8, 2, torch_mha_init=True),
            "relative": RelativeAttention(8, 2), "abs_relative": RelativeAttention(8, 2, abs_gate=True),
            "geometric": GeometricAttention(8, 2), "geometric_normalized": GeometricAttention(8, 2, normalize=True)}


@pytest.mark.parametrize(("name", "causal"), [("transformer", False), *((n, c) for n in (
    "relative", "abs_relative", "geometric", "geometric_normalized") for c in (False, True))])
def test_own_attentions_keep_padding_and_later_tokens_out(name: str, causal: bool) -> None:
    torch.manual_seed(0)
    att = _own_attentions()[name].eval()
    kw = {"causal": True} if causal else {}  # the CTL adapter of registry mixers is never causal
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    x = torch.randn(2, 5, 8)
    out = att(x, mask, **kw)
    other = torch.where(mask[..., None], x, 50 * torch.randn(2, 5, 8))  # new content at the padded tokens
    torch.testing.assert_close(att(other, mask, **kw)[mask], out[mask], atol=1e-6, rtol=1e-6)
    changed = x.clone()
    changed[1, 1] += torch.randn(8)  # a real token does matter
    assert not torch.allclose(att(changed, mask, **kw)[mask], out[mask])
    if causal:
        later = x.clone()
        later[:, 3] += torch.randn(8)
        torch.testing.assert_close(att(later, mask, **kw)[:, :3], out[:, :3], atol=1e-6, rtol=1e-6)


def test_the_transformer_attention_is_torchs_multihead_attention(float64: None) -> None:
    """The release's nn.MultiheadAttention and the registry softmax mixer initialised like it: same draws (so the
    same RNG afterwards), same outputs with a padding mask, float64 to rounding."""
    from trainables.csordas2021.models import mha_initialised_softmax

    torch.manual_seed(0)
    reference = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    after_reference = torch.rand(1)
    torch.manual_seed(0)
    mixer = mha_initialised_softmax(8, 2, 0.0)
    assert torch.equal(torch.rand(1), after_reference)
    x = torch.randn(3, 5, 8)
    pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] + [True] * 4])
    expected, _ = reference(x, x, x, key_padding_mask=pad, need_weights=False)
    torch.testing.assert_close(mixer(x, ~pad), expected, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("model", ["Transformer", "+ rel", "+ geom. att.", "NDR",
                                   *(f"mixer:{m}" for m in MIXERS.names())])
def test_ctl_logits_do_not_depend_on_padding(model: str) -> None:
    """The whole CTL model: the tokens after EOS (padding) may be anything and any number, the logits stay
    those of the sequence alone (before issue 25 a registry mixer, e.g. softmax, gave the padding weight)."""
    cfg = tiny("Transformer", mixer=model.split(":")[1]) if model.startswith("mixer:") else tiny(model)
    torch.manual_seed(0)
    net = build_model(cfg).eval()
    tokens = torch.randint(0, 8, (3, 7))
    lengths = torch.tensor([7, 4, 2])
    padded = torch.arange(7).view(1, 7) >= lengths.view(3, 1)
    other = torch.where(padded, torch.randint(0, 8, (3, 7)), tokens)
    assert not torch.equal(other, tokens)
    logits = net(tokens, lengths)
    torch.testing.assert_close(net(other, lengths), logits, atol=1e-6, rtol=1e-6)
    for b, length in enumerate(lengths.tolist()):  # each sequence alone, without padding
        alone = net(tokens[b:b + 1, :length], lengths[b:b + 1])
        torch.testing.assert_close(alone[0], logits[b], atol=1e-5, rtol=1e-5)
