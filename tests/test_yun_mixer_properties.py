"""yun2020.mixers: Yun et al.'s Sec. 5.1 / 5.3 sentences on the cheaper mixers, counted and measured on the registry's
mixers as built (task ``mixer_properties``): matrix products and multiply-adds against dot-product attention, the
parameter count against the sequence length, and whether the token-mixing weights depend on the input."""

from __future__ import annotations

import polars as pl
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode, sdpa_flop_count

import trainables.mixers.sepconv as sepconv_module
from analysis.stats.verdicts.data import FindingData
from analysis.stats.verdicts.evaluate import evaluate_findings
from analysis.stats.verdicts.status import Status
from search_spaces import get_study
from search_spaces.record import StudyRecord
from trainables.catalog import family_for_task
from trainables.mixers import build_mixer
from trainables.mixers.base import Mixer
from trainables.pooling_scale.config import PoolingScaleConfig
from trainables.pooling_scale.cost import macs, matmuls, products
from trainables.pooling_scale.mixer_properties import changed_share, mixer_measures, token_weights
from trainables.richter2020.config import TrainConfig
from trainables.richter2020.model import build_model

METRICS = ("mixer_params", "matmuls", "macs", "matmuls_saved", "macs_saved", "input_dependent_share")


def _cpu_sdpa(query: tuple[int, ...], key: tuple[int, ...], value: tuple[int, ...], *_: object,
              **__: object) -> int:
    return int(sdpa_flop_count(query, key, value))


#: torch's FlopCounterMode has no formula for the CPU kernel of scaled_dot_product_attention: its own sdpa count
CPU_SDPA = {torch.ops.aten._scaled_dot_product_flash_attention_for_cpu: _cpu_sdpa}


def _mixer(name: str, d: int, heads: int, n: int) -> Mixer:
    return build_mixer(name, d, heads, hidden_norm=False, attention_gelu=False, dropout=0.0,
                       options={"seq_len": n}).eval()


def _counted_macs(module: torch.nn.Module, x: torch.Tensor) -> int:
    """Multiply-adds of one forward as torch's FlopCounterMode counts them (half its FLOPs)."""
    with FlopCounterMode(display=False, custom_mapping=CPU_SDPA) as counter, torch.no_grad():
        module(x)
    return counter.get_total_flops() // 2


def _config(pooling: str, n: int, d: int = 32, **kw: int) -> PoolingScaleConfig:
    return PoolingScaleConfig.from_dict({"task": "mixer_properties", "pooling": pooling, "seq_len": n,
                                         "d_head": d, "n_vectors": 256, **kw})


def test_the_counts_by_hand() -> None:
    """d = 32, N = 4, one head: attention 6 products, 4 N d^2 + 2 N^2 d = 16,384 + 1,024; bilinear 2, N^2 d + N d^2 =
    512 + 4,096; the convolution 2 products, 3 N d^2 + N k d = 12,288 + 3,968 (k = 31)."""
    assert [matmuls(_mixer(m, 32, 1, 4), 4) for m in ("softmax", "bilinear", "sepconv")] == [6, 2, 2]
    assert [macs(_mixer(m, 32, 1, 4), 4) for m in ("softmax", "bilinear", "sepconv")] == [17_408, 4_608, 16_256]
    assert matmuls(_mixer("softmax", 32, 4, 4), 4) == 24  # per head, as eq. 1 writes it; the work is the same
    assert macs(_mixer("softmax", 32, 4, 4), 4) == 17_408
    assert products(_mixer("bilinear", 8, 1, 3), 3) == ((3, 3, 8), (3, 8, 8))
    with pytest.raises(ValueError, match="invalid mixer='average' for a cost count; allowed: softmax, bilinear, "
                                         "sepconv"):
        products(_mixer("average", 8, 1, 3), 3)


@pytest.mark.parametrize("name", ["softmax", "bilinear", "sepconv"])
def test_the_multiply_adds_are_torch_s_flop_count_of_the_real_module(name: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """An independent count: FlopCounterMode on the module's own forward (the convolution as F.conv1d, its form beyond
    N = 512; the banded-matmul form below it multiplies the band's zeros too: N^2 d instead of N k d)."""
    monkeypatch.setattr(sepconv_module, "TOEPLITZ_MAX_LEN", 0)
    for d, heads, n in ((32, 1, 4), (32, 4, 32), (128, 4, 128), (16, 2, 7)):
        mixer = _mixer(name, d, heads, n)
        assert _counted_macs(mixer, torch.randn(1, n, d)) == macs(mixer, n), (d, heads, n)


def test_the_banded_form_counts_the_band_s_zeros() -> None:
    mixer = _mixer("sepconv", 32, 4, 32)
    assert _counted_macs(mixer, torch.randn(1, 32, 32)) == macs(mixer, 32) - 32 * 31 * 32 + 32 * 32 * 32


def test_the_model_s_cost_falls_by_the_mixer_s_saving_per_convolution_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hybrid stacks (yun2020.hybrid's cpu scale: d = 32, N = 32, 4 heads, L = 4) counted whole: each convolution
    layer at the bottom takes off exactly macs_saved of one layer (the rest of the model is the same)."""
    monkeypatch.setattr(sepconv_module, "TOEPLITZ_MAX_LEN", 0)
    hybrid = get_study("yun2020.hybrid", "cpu")
    tokens = torch.zeros(1, 32, dtype=torch.long)
    counts = []
    for k in range(5):
        cfg = TrainConfig.from_dict({**hybrid.fixed, "task": "cases", "learning_rate": 1e-3,
                                     "mixer_stack": hybrid.scientific["conv_layers"].options[k]["mixer_stack"]})
        counts.append(_counted_macs(build_model(cfg).eval(), tokens))
    saved = mixer_measures(_config("sepconv", 32, n_vectors=32), seed=0)["macs_saved"]
    assert [counts[0] - c for c in counts] == [k * saved for k in range(5)]
    assert saved == 4 * 32 * 32**2 + 2 * 32**2 * 32 - (3 * 32 * 32**2 + 32 * 31 * 32) > 0


def test_the_parameter_counts() -> None:
    """bilinear N^2 + d^2 + d, attention 4 d^2 + 4 d, the convolution 3 d^2 + 3 d + H k (one head: one filter)."""
    for n in (4, 256):
        m = {p: mixer_measures(_config(p, n, n_vectors=256), seed=1)["mixer_params"]
             for p in ("softmax", "bilinear", "sepconv")}
        assert m == {"softmax": 4 * 32**2 + 4 * 32, "bilinear": n**2 + 32**2 + 32, "sepconv": 3 * 32**2 + 3 * 32 + 31}


def test_the_token_weights_are_the_ones_the_forward_mixes_with() -> None:
    x = torch.randn(3, 8, 16, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        softmax = _mixer("softmax", 16, 2, 8)
        _, _, v = softmax.project(x)  # (S, H, N, d_h)
        mixed = (token_weights(softmax, x) @ v).transpose(1, 2).flatten(-2)
        assert torch.allclose(softmax.output(mixed), softmax(x), atol=1e-6)
        bilinear = _mixer("bilinear", 16, 1, 8)
        assert torch.allclose(bilinear.output(token_weights(bilinear, x)[:, 0] @ x), bilinear(x), atol=1e-6)
        conv = _mixer("sepconv", 16, 4, 8)
        u = torch.nn.functional.glu(conv.glu(x), dim=-1)  # (S, N, d); channel c uses filter c mod H
        w = token_weights(conv, x)  # (S, H, N, N)
        by_hand = torch.stack([(w[:, c % 4] @ u[..., c, None])[..., 0] for c in range(16)], dim=-1)
        assert torch.allclose(conv.output(by_hand), conv(x), atol=1e-6)
        taps = conv.taps()  # (H, k): w[h, i, j] is tap j - i + (k - 1) // 2 of filter h (centred)
        assert all(w[0, h, i, j] == taps[h, j - i + 15] for h in range(4) for i in range(8) for j in range(8))


def test_changed_share_by_hand() -> None:
    a = torch.tensor([[0.5, 0.5], [1.0, 0.0], [0.2, 0.8]])
    b = torch.tensor([[0.5, 0.5], [0.9, 0.1], [0.2, 0.8 + 1e-7]])
    assert changed_share(a, b) == pytest.approx(1 / 3)  # the second row; the third within 1e-5 of its largest weight


def test_only_attention_s_weights_depend_on_the_input() -> None:
    for n in (4, 64):
        shares = {p: mixer_measures(_config(p, n, n_vectors=256), seed=2)["input_dependent_share"]
                  for p in ("softmax", "bilinear", "sepconv")}
        assert shares == {"softmax": 1.0, "bilinear": 0.0, "sepconv": 0.0}


def test_validation_and_the_family() -> None:
    with pytest.raises(ValueError, match="invalid pooling='average'; allowed: softmax, bilinear, sepconv"):
        _config("average", 4)
    family = family_for_task("mixer_properties")
    result = family.train([_config("bilinear", 8)], [0, 1], device="cpu")
    assert [r["seed"] for r in result.rows] == [0, 1] and all(set(METRICS) <= set(r) for r in result.rows)
    assert result.rows[1]["macs_saved"] == mixer_measures(_config("bilinear", 8), seed=1)["macs_saved"]


def _data(study_name: str = "yun2020.mixers") -> tuple[StudyRecord, FindingData]:
    study = get_study(study_name)
    rows = [{"pooling": p, "d_head": d, "seq_len": n, "seed": seed,
             **mixer_measures(_config(p, n, d, n_vectors=256), seed)}
            for p in study.axis_values("pooling") for d in study.axis_values("d_head")
            for n in study.axis_values("seq_len") for seed in study.seeds]
    frame = pl.DataFrame(rows)
    cells = {m: frame.group_by("pooling", "d_head", "seq_len").agg(
        pl.col(m).mean().alias("g"), pl.col(m).std().alias("sd"), pl.len().alias("n_seeds")) for m in METRICS}
    return StudyRecord.of(study), FindingData(cells=cells, panel="pooling", select_metric="input_dependent_share",
                                              max_seeds=len(study.seeds))


def test_the_findings_pass_on_the_measurement_and_fail_on_a_mixer_without_the_property() -> None:
    record, data = _data()
    verdicts = evaluate_findings(record, data)
    assert [v.status for v in verdicts] == [Status.PASS] * 7, [line for v in verdicts for line in v.lines()]
    study = get_study("yun2020.mixers")
    f = study.findings
    wrong = study.replace(findings=(
        f[0].replace(above={"softmax": 1.0}),  # attention saves no product against itself
        f[1].replace(above={"softmax": 1.0}),
        f[2].replace(ahead={"sepconv": ("sepconv",)}, level_with={}, equivalence_margin=None),  # no growth with N
        f[2].replace(ahead={}, level_with={"bilinear": ("bilinear",)}),  # the bilinear's count is not level
        f[3].replace(below={"softmax": 0.01}),  # attention's weights move with the input
        f[4].replace(above={"bilinear": 0.99}),  # the bilinear's do not
        f[5].replace(level_with={"bilinear": ("bilinear",)}),
        f[6].replace(above={"softmax": 1.0}),
    ))
    assert [v.status for v in evaluate_findings(StudyRecord.of(wrong), data)] == [Status.FAIL] * 8


def test_mixers_scales() -> None:
    assert get_study("yun2020.mixers").trial_count() == 3 * 2 * 4
    smoke = get_study("yun2020.mixers", "smoke")
    assert smoke.trial_count() == 3 * 2 and smoke.seeds == (0, 1)
