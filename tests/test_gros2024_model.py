"""Gros 2024 bilayer, attention maps, config and training loop (tiny sizes, one thread)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
import torch

from tests.tiny import DEVICES
from trainables.catalog import family_for_task
from trainables.gros2024.config import GrosConfig
from trainables.gros2024.head import PaperHead
from trainables.gros2024.loop import sgd_step, train_members, training_batch
from trainables.gros2024.model import StackedBilayer
from trainables.mixers import MIXERS
from trainables.mixers.expressive import expressive_weights


@pytest.fixture(autouse=True)
def _one_thread(one_torch_thread: None) -> Iterator[None]:
    yield


def _tiny(**kw: Any) -> GrosConfig:
    base: dict[str, Any] = dict(task="nt", basis=2, delay=1, n_context=6, n_epochs=20, eval_every=10,
                                eval_series=8, eval_predictions=6, final_eval_series=16)
    return GrosConfig(**{**base, **kw})


@pytest.mark.parametrize(("basis", "delay", "n_context", "weights", "expected"), [
    (2, 5, 16, "per_token", 794),  # paper Fig. 4: "802 adjustable parameters" (8 unidentified)
    (16, 5, 128, "per_token", 393_424),  # paper Fig. 5: "about 4e5"
    (2, 5, 16, "shared", 3 * 4 + 3 * 2 + 2 * 8 + 8 + 8 * 2 + 2 + 32 * 2 + 2 + 2 * 4),
])
def test_parameter_counts(basis: int, delay: int, n_context: int, weights: str, expected: int) -> None:
    cfg = GrosConfig(task="nt", basis=basis, delay=delay, n_context=n_context, weights=weights)
    assert StackedBilayer(cfg, [0]).n_params() == expected


def test_ea_weights_are_sign_invariant_causal_and_normalised() -> None:
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    z = torch.randn(3, 5, 5, generator=torch.Generator().manual_seed(0)) * 2
    a = expressive_weights(z, causal)  # the registry's EA, which the paper head uses
    assert torch.allclose(a, expressive_weights(-z, causal))  # EA is invariant under z -> -z
    assert torch.allclose(a.sum(-1), torch.ones(3, 5))
    assert float(a.masked_select(~causal).abs().max()) == 0.0
    s = z.square() / (1 + z.square())
    assert float(a[0, 4, 2]) == pytest.approx(float(s[0, 4, 2] / s[0, 4].sum()), rel=1e-5)
    orth = expressive_weights(torch.zeros(1, 4, 4), torch.ones(4, 4, dtype=torch.bool).tril())
    assert torch.allclose(orth[0, 3], torch.full((4,), 0.25))  # all-orthogonal row: uniform, not 0/0


def _head(attention: str, beta: float) -> PaperHead:
    """A shared-weight head with z_10 = 1, z_11 = 3 on the tokens x_0 = (1, 0), x_1 = (1, 1)."""
    eye = torch.eye(2)
    return PaperHead({"wq": eye, "wk": torch.diag(torch.tensor([1.0, 2.0])), "wv": eye}, attention=attention,
                     beta=beta, per_token=False)


def test_dpa_uses_beta_without_sqrt_d_and_is_causal() -> None:
    x = torch.tensor([[[1.0, 0.0], [1.0, 1.0]]])  # (B, T, d)
    a = _head("dpa", 1.0).attention_weights(x, causal=True).detach()[0, 0]  # (T, T) of the one head
    assert float(a[1, 1]) == pytest.approx(math.exp(3) / (math.exp(1) + math.exp(3)), rel=1e-6)
    assert float(a[0, 1]) == 0.0 and float(a[0, 0]) == 1.0  # the first token sees itself only
    assert float(_head("dpa", 0.5).attention_weights(x, causal=True).detach()[0, 0, 1, 1]) == pytest.approx(
        math.exp(1.5) / (math.exp(0.5) + math.exp(1.5)), rel=1e-6)
    with pytest.raises(ValueError, match="invalid attention='nope'; allowed: dpa, ea"):
        _head("nope", 1.0)


def test_outputs_ignore_nothing_but_future_tokens() -> None:
    model = StackedBilayer(_tiny(basis=4, n_context=5), [0, 1])
    tokens = torch.randint(0, 4, (2, 3, 5), generator=torch.Generator().manual_seed(1))
    out, a = model(tokens, return_attention=True)
    assert out.shape == (2, 3, 4) and a is not None and a.shape == (2, 3, 5, 5)
    changed = tokens.clone()
    changed[:, :, 0] = (changed[:, :, 0] + 1) % 4  # the flattened readout sees every position
    assert not torch.allclose(model(changed), out)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("attention", ["dpa", "ea"])
def test_stacked_members_equal_separate_runs(float64: None, attention: str, device: str) -> None:
    cfg = _tiny(attention=attention, basis=4, delay=2, n_context=6, n_epochs=20)
    stacked, snaps = train_members(cfg, [0, 1, 2], device=device)
    solo = [row for seed in (0, 1, 2) for row in train_members(cfg, [seed], device=device)[0]]
    assert len(stacked) == len(solo) == 6
    for a, b in zip(stacked, solo, strict=True):
        for key in ("seed", "epoch", "status", "n_params"):
            assert a[key] == b[key]
        for key in ("train_loss", "val_loss", "val_accuracy", "train_accuracy"):
            assert a[key] == pytest.approx(b[key], abs=1e-9), key
    assert {r["seed"] for r in snaps} == {0, 1}  # snapshot_seeds = 2


def test_training_learns_xor_and_rows_have_the_contract() -> None:
    cfg = _tiny(attention="ea", n_epochs=300, eval_every=100, learning_rate=0.05)
    rows, snaps = train_members(cfg, [0, 1])
    assert [r["epoch"] for r in rows] == [100, 200, 300] * 2
    last = [r for r in rows if r["epoch"] == 300]
    assert all(r["val_accuracy"] == 1.0 and r["final_accuracy"] == 1.0 for r in last)  # N2T1 (XOR) is easy
    assert rows[0]["final_accuracy"] is None and rows[0]["status"] == "ok" and rows[0]["n_params"] > 0
    assert rows[0]["train_loss"] > last[0]["train_loss"]
    t = cfg.n_context
    assert len(snaps) == 2 * t * (t + 1) // 2  # causal entries of the first two seeds
    for seed in (0, 1):
        for q in range(t):
            total = sum(r["weight"] for r in snaps if r["seed"] == seed and r["query"] == q)
            assert total == pytest.approx(1.0, abs=1e-5)


def test_mixture_reports_each_task_and_the_learning_rate_drop() -> None:
    cfg = _tiny(task="nt_mix", basis=4, delay=2, lr_drop_epoch=10)
    rows, _ = train_members(cfg, [0])
    assert {"val_accuracy_nt", "val_accuracy_nt_s", "final_accuracy_nt", "final_accuracy_nt_s"} <= set(rows[0])
    r = rows[-1]
    assert r["val_accuracy"] == pytest.approx((r["val_accuracy_nt"] + r["val_accuracy_nt_s"]) / 2)
    assert [row["current_learning_rate"] for row in rows] == [0.02, 0.005]
    assert cfg.learning_rate_at(9) == 0.02 and cfg.learning_rate_at(10) == 0.005


def test_a_diverging_member_is_frozen_and_reported_while_others_train() -> None:
    cfg = _tiny(learning_rate=1e30, momentum=0.0)
    rows, _ = train_members(cfg, [0, 1])
    assert {r["status"] for r in rows} == {"diverged"}
    assert all(r["val_accuracy"] == 0.0 for r in rows if r["epoch"] == 20)


@pytest.mark.parametrize("mixer", MIXERS.names())
def test_any_registry_mixer_replaces_the_paper_head(mixer: str) -> None:
    rows, snaps = train_members(_tiny(basis=4, mixer=mixer, n_heads=2), [0, 1])
    assert len(rows) == 4
    # Unbounded mixers (NAP, NON, sum) can blow up at the paper's SGD settings: a diverged seed is a result,
    # not a crash; the bounded ones (softmax, EA, mean) must train.
    assert all(math.isfinite(r["train_loss"]) or r["status"] == "diverged" for r in rows)
    assert mixer not in ("softmax", "expressive", "mean") or all(r["status"] == "ok" for r in rows)
    # mixer names a registry mixer only; attention the paper's head that ran (null when a mixer replaces it).
    resolved = GrosConfig(task="nt", mixer=mixer, attention="dpa").resolved()
    assert (resolved["mixer"], resolved["attention"]) == (mixer, None)
    resolved = GrosConfig(task="nt", attention="dpa").resolved()
    assert (resolved["mixer"], resolved["attention"]) == (None, "dpa")
    assert (len(snaps) > 0) == hasattr(MIXERS.get(mixer), "attention_weights")


def test_a_wider_model_keeps_n_outputs_for_the_atlas() -> None:
    cfg = _tiny(basis=4, d_model=8, mixer="softmax", n_heads=2)
    model = StackedBilayer(cfg, [0])
    assert model(torch.zeros(1, 3, 6, dtype=torch.int64)).shape == (1, 3, 4)
    assert cfg.resolved()["d_model"] == 8 and _tiny(basis=4).resolved()["d_model"] == 4
    rows, _ = train_members(cfg, [0])
    assert len(rows) == 2 and rows[0]["n_params"] == model.n_params()


def test_summed_loss_is_n_times_the_mean() -> None:
    mean = train_members(_tiny(basis=4, n_epochs=10, eval_every=10, learning_rate=1e-9), [0])[0][0]
    summed = train_members(_tiny(basis=4, n_epochs=10, eval_every=10, learning_rate=1e-9,
                                 loss_reduction="sum_outputs"), [0])[0][0]
    assert summed["train_loss"] == pytest.approx(4 * mean["train_loss"], rel=1e-4)


def _learning_rates_per_step(cfg: GrosConfig, monkeypatch: pytest.MonkeyPatch) -> list[list[float]]:
    """Train one seed of ``cfg``; the learning rate of every parameter group at every optimiser step."""
    seen: list[list[float]] = []
    step = torch.optim.SGD.step

    def recording_step(self: torch.optim.SGD, *args: Any, **kwargs: Any) -> Any:
        seen.append([group["lr"] for group in self.param_groups])
        return step(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(torch.optim.SGD, "step", recording_step)
        train_members(cfg, [0])
    return seen


def test_one_step_per_epoch_or_per_prediction(monkeypatch: pytest.MonkeyPatch) -> None:
    per_epoch = _learning_rates_per_step(_tiny(n_epochs=4, eval_every=4, batch_predictions=5), monkeypatch)
    per_prediction = _learning_rates_per_step(
        _tiny(n_epochs=4, eval_every=4, batch_predictions=5, optimizer_steps="per_prediction"), monkeypatch)
    assert len(per_epoch) == 4 and len(per_prediction) == 4 * 5


def test_per_prediction_steps_sum_to_the_batch_step_at_a_small_rate() -> None:
    """Without momentum and at a tiny rate, 40 steps of one prediction move the parameters 40x as far as one
    step on their mean: the epoch's training loss falls 40x as much (to first order)."""
    cfg = _tiny(basis=4, n_context=8)
    windows, targets = training_batch(cfg, [torch.Generator().manual_seed(0)])

    def batch_loss(model: StackedBilayer) -> float:
        with torch.no_grad():
            return float((model(windows) - torch.nn.functional.one_hot(targets, 4)).square().mean())

    def loss_drop(per_step: int) -> float:
        model = StackedBilayer(cfg, [0])
        before = batch_loss(model)
        opt = torch.optim.SGD(model.parameters(), lr=1e-5)
        for j in range(0, 40, per_step):
            sgd_step(model, opt, windows[:, j:j + per_step], targets[:, j:j + per_step],
                     torch.ones(1, dtype=torch.bool), cfg.loss_reduction)
        return before - batch_loss(model)

    assert loss_drop(1) == pytest.approx(40 * loss_drop(40), rel=0.02)


def test_readout_steps_at_a_rate_scaled_by_the_context(monkeypatch: pytest.MonkeyPatch) -> None:
    lrs = _learning_rates_per_step(_tiny(n_context=24, readout_lr_context=6, n_epochs=4, eval_every=2,
                                         lr_drop_epoch=2, lr_drop_factor=4.0), monkeypatch)
    assert lrs == [[0.02, 0.005]] * 2 + [[0.005, 0.00125]] * 2  # body, readout (6 / 24); then both / 4
    assert _tiny(n_context=4, readout_lr_context=6).readout_lr_factor == 1.0  # never faster than the body
    assert _tiny().readout_lr_factor == 1.0


@pytest.mark.parametrize(("kw", "message"), [
    ({"optimizer_steps": "per_batch"}, "invalid optimizer_steps='per_batch'; allowed: per_epoch, per_prediction"),
    ({"readout_lr_context": 0}, "invalid readout_lr_context=0; allowed: None or an integer >= 1"),
    ({"loss_reduction": "sum"}, "invalid loss_reduction='sum'; allowed: mean, sum_outputs"),
    ({"d_model": 8}, "invalid d_model=8; allowed: None \\(= basis\\) or an integer >= basis=16"),
    ({"attention": "softmax"}, "invalid attention='softmax'; allowed: dpa, ea"),
    ({"weights": "tied"}, "invalid weights='tied'; allowed: per_token, shared"),
    ({"mixer": "nope"}, "invalid mixer='nope'; allowed: None .* softmax"),
    ({"mixer": "softmax", "n_heads": 3}, "invalid n_heads=3; allowed: a divisor of the model width d=16"),
    ({"n_context": 2, "delay": 2}, "invalid n_context=2; allowed: an integer >= delay \\+ 1 = 3"),
    ({"n_epochs": 15, "eval_every": 10}, "invalid n_epochs=15; allowed: a multiple of eval_every=10"),
    ({"momentum": 1.0}, "invalid momentum=1.0; allowed: a number in \\[0, 1\\)"),
    ({"lr_drop_epoch": 5000, "n_epochs": 1000}, "invalid lr_drop_epoch=5000; allowed: None or an integer"),
    ({"task": "xor"}, "invalid task='xor'; allowed: nt, nt_s, nt_r, nt_mix"),
])
def test_invalid_config_names_field_value_and_allowed(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GrosConfig(**{"task": "nt", **kw})


def test_family_registration_and_from_dict() -> None:
    family = family_for_task("nt_mix")
    assert family.name == "gros2024" and family.config is GrosConfig
    with pytest.raises(ValueError, match="invalid hyperparameter 'seq_len'=8; allowed: task, basis, d_model"):
        GrosConfig.from_dict({"task": "nt", "seq_len": 8})
    result = family.train([_tiny()], [0, 1], packed=False)
    assert len(result.rows) == 4 and set(result.artifacts) == {"attention"}
    with pytest.raises(ValueError, match="does not pack learning rates"):
        family.train([_tiny(), _tiny(learning_rate=0.1)], [0])


def test_the_unstated_choices_are_hyperparameters_with_the_paper_reading_as_default() -> None:
    """init_scale, qkv_bias and ln_affine (gros2024.ablation): defaults are the model every figure ran."""
    base = _tiny(basis=4, n_context=6)
    d = 4
    n = StackedBilayer(base, [0]).n_params()
    assert StackedBilayer(_tiny(basis=4, n_context=6, qkv_bias=False), [0]).n_params() == n - 3 * d
    assert StackedBilayer(_tiny(basis=4, n_context=6, ln_affine=False), [0]).n_params() == n - 4 * d
    wide, narrow = StackedBilayer(_tiny(basis=4, init_scale=2.0), [0]), StackedBilayer(base, [0])
    torch.testing.assert_close(wide.mixer.wq, 2 * narrow.mixer.wq)  # the same draws, twice the bound
    assert float(narrow.mixer.wq.detach().abs().max()) <= 1 / math.sqrt(d)
    for kw, message in (({"qkv_bias": "no"}, "invalid qkv_bias='no'; allowed: True or False"),
                        ({"init_scale": 0}, "invalid init_scale=0; allowed: a number > 0")):
        with pytest.raises(ValueError, match=message):
            _tiny(**kw)
    rows, _ = train_members(_tiny(basis=4, n_context=6, qkv_bias=False, ln_affine=False), [0, 1])
    assert all(r["status"] == "ok" for r in rows)


@pytest.mark.parametrize("mixer", [None, "softmax", "sepconv", "mean"])
def test_the_bilayer_mixes_causally_whatever_mixes(mixer: str | None) -> None:
    """The paper's head and any registry mixer in its place: a later token changes no earlier mixed token."""
    model = StackedBilayer(_tiny(basis=4, n_context=5, mixer=mixer, n_heads=2 if mixer else 1), [0, 1])
    h = torch.randn(2, 3, 5, 4)  # (K, B, T, d)
    out, _ = model.mix(h, weights_wanted=False)
    for t in range(5):
        later = h.clone()
        later[:, :, t] += torch.randn(2, 3, 4)
        changed, _ = model.mix(later, weights_wanted=False)
        torch.testing.assert_close(changed[:, :, :t], out[:, :, :t], atol=1e-6, rtol=1e-6)
        assert not torch.allclose(changed[:, :, t:], out[:, :, t:])


@pytest.mark.parametrize("attention", ["dpa", "ea"])
@pytest.mark.parametrize("per_token", [False, True])
def test_paper_head_stacked_equals_separate_with_mask_and_causal(float64: None, attention: str,
                                                                  per_token: bool) -> None:
    from trainables.stacked import stack_modules

    gen = torch.Generator().manual_seed(0)
    pos = (5,) if per_token else ()
    heads = [PaperHead({**{w: torch.randn(*pos, 4, 4, generator=gen) for w in ("wq", "wk", "wv")},
                        **{b: torch.randn(4, generator=gen) for b in ("bq", "bk", "bv")}},
                       attention=attention, beta=0.7, per_token=per_token) for _ in range(3)]
    stacked = stack_modules(heads)
    x = torch.randn(3, 2, 5, 4)  # (K, B, T, d)
    mask = torch.arange(5).view(1, 1, 5) < torch.tensor([[5, 3], [2, 5], [4, 1]]).view(3, 2, 1)  # (K, B, T)
    out = stacked(x, mask, causal=True)
    solo = torch.stack([h(x[k], mask[k], causal=True) for k, h in enumerate(heads)])
    torch.testing.assert_close(out, solo, atol=1e-12, rtol=1e-12)
    other = torch.where(mask[..., None], x, 30 * torch.randn(3, 2, 5, 4))  # padding content must not leak
    torch.testing.assert_close(stacked(other, mask, causal=True)[mask], out[mask], atol=1e-12, rtol=1e-12)
