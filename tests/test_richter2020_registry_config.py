"""Registry, architectures and TrainConfig validation."""

from __future__ import annotations

import pytest

from core.registry import Registry
from trainables.richter2020.architectures import ARCHITECTURES, get_architecture
from trainables.richter2020.config import TrainConfig
from trainables.richter2020.tasks import TASKS


def test_registry_refuses_duplicates_and_lists_valid_names() -> None:
    reg: Registry[int] = Registry("widget")

    @reg.register("a")
    def _a() -> int:
        return 1

    reg.add("b", 2)
    with pytest.raises(ValueError, match="duplicate widget name 'a'"):
        reg.add("a", 3)
    with pytest.raises(ValueError, match=r"unknown widget 'zz'; valid: a, b"):
        reg.get("zz")
    assert reg.get("b") == 2
    assert reg.names() == ["a", "b"] and "a" in reg and len(reg) == 2


def test_architecture_registry_contents() -> None:
    assert ARCHITECTURES.names() == ["BERT", "MTE", "NAP", "NON", "sum", "max", "EA"]
    with pytest.raises(ValueError, match=r"unknown architecture 'foo'; valid: BERT, MTE, NAP, NON, sum, max, EA"):
        get_architecture("foo")
    bert, mte = get_architecture("BERT"), get_architecture("MTE")
    assert (bert.ln_placement, bert.attention_gelu, bert.warmup, bert.grad_clip) == ("post", False, True, True)
    assert (mte.ln_placement, mte.attention_gelu, mte.warmup, mte.grad_clip) == ("pre_residual", True, False, False)
    assert [get_architecture(a).mixer for a in ARCHITECTURES] == [
        "softmax",
        "softmax",
        "normalized",
        "no_norm",
        "sum",
        "max",
        "expressive",
    ]
    assert get_architecture("NAP").ffn_hidden(128) == 512
    assert get_architecture("sum").ffn_hidden(128) == round((12 * 128 + 8) / 257 * 128) == 769


def test_resolved_fills_defaults_and_overrides() -> None:
    r = TrainConfig(architecture="BERT", task="cases").resolved()
    assert (r["vocab_size"], r["val_seq_len"]) == (100, 64)
    assert (r["warmup"], r["grad_clip"], r["ln_placement"], r["attention_gelu"]) == (True, True, "post", False)
    r = TrainConfig(architecture="NAP", task="mode", warmup=True, ln_placement="post").resolved()
    assert (r["vocab_size"], r["val_seq_len"]) == (10, 256)
    assert (r["warmup"], r["grad_clip"], r["ln_placement"], r["attention_gelu"]) == (True, False, "post", True)
    assert None not in r.values()
    # every field but an unasked `probes`: a trial without probes writes the columns it wrote before they existed
    assert list(r) == [f for f in TrainConfig.field_names() if f != "probes"]


def test_from_dict_roundtrip() -> None:
    d = {"architecture": "MTE", "task": "cases_first_token", "d_model": 64, "case_mix": "0.34,0.33,0.33"}
    cfg = TrainConfig.from_dict(d)
    assert cfg.d_model == 64 and cfg.case_mix == "0.34,0.33,0.33"
    assert TrainConfig.from_dict(cfg.to_dict()) == cfg


@pytest.mark.parametrize(
    ("update", "pattern"),
    [
        ({"foo": 1}, r"invalid hyperparameter 'foo'=1; allowed: architecture, task, d_model"),
        ({"architecture": "GPT"}, r"invalid architecture='GPT'; allowed: BERT, MTE, NAP, NON, sum, max"),
        ({"task": "copy"}, r"invalid task='copy'; allowed: cases, cases_first_token, mode"),
        ({"d_model": 10, "n_heads": 4}, r"invalid d_model=10; allowed: a multiple of n_heads=4"),
        ({"n_layers": 0}, r"invalid n_layers=0; allowed: a positive integer"),
        ({"batch_size": -3}, r"invalid batch_size=-3; allowed: a positive integer"),
        ({"learning_rate": 0.0}, r"invalid learning_rate=0.0; allowed: a number > 0"),
        ({"learning_rate": -1e-3}, r"invalid learning_rate=-0.001"),
        ({"dropout": 1.0}, r"invalid dropout=1.0; allowed: a number in \[0, 1\)"),
        ({"ln_placement": "pre"}, r"invalid ln_placement='pre'; allowed: None \(architecture default\), post"),
        ({"warmup": "yes"}, r"invalid warmup='yes'"),
        ({"case_mix": "0.5,0.5"}, r"invalid case_mix='0.5,0.5'; allowed: 'natural' or three"),
        ({"task": "mode", "case_mix": "0.3,0.3,0.4"}, r"invalid case_mix='0.3,0.3,0.4'; allowed: 'natural'"),
        ({"vocab_size": 50}, r"vocab_size=50 is invalid for task 'cases'; need > 64"),
        ({"n_steps": 150}, r"invalid n_steps=150; allowed: a multiple of eval_every=100"),
    ],
)
def test_from_dict_rejects_invalid(update: dict, pattern: str) -> None:
    d = {"architecture": "NAP", "task": "cases", **update}
    with pytest.raises(ValueError, match=pattern):
        TrainConfig.from_dict(d)


def test_task_registry_error() -> None:
    with pytest.raises(ValueError, match=r"unknown task 'x'; valid: cases, cases_first_token, mode"):
        TASKS.get("x")
