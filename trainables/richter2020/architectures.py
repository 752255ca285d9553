"""The six architectures of Richter & Wattenhofer 2020 (Sec. 4, App. C, D) as data.

An architecture is a mixer plus four switches that the ablation (paper Fig. 9 / Table 1) toggles one at a
time on the walk BERT -> MTE: - warm-up, - clipping, + normalise (``ln_placement="pre_residual"``),
+ GELU (``attention_gelu=True``). Each switch can be overridden per config (None = the default here).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypedDict

from core.registry import Registry

LnPlacement = Literal["post", "pre_residual"]
LN_PLACEMENTS: tuple[str, ...] = ("post", "pre_residual")


@dataclass(frozen=True, kw_only=True)
class Architecture:
    """One architecture.

    Attributes:
        name: stable name (config value and Parquet column value).
        mixer: name in :data:`trainables.mixers.MIXERS`.
        ln_placement: ``"post"`` (BERT: LN(x + sub(x))) or ``"pre_residual"`` (MTE: x + LN(sub(x)), plus the
            hidden LNs: on the concatenated head outputs and on the FFN hidden layer before its GELU).
        attention_gelu: GELU on the concatenated head outputs before the mixing linear (MTE).
        warmup: linear LR warm-up over the first 10% of steps (BERT).
        grad_clip: clip each gradient tensor separately to norm 1.0 (BERT).
        ffn_rule: ``"4d"`` or ``"param_matched"`` (sum/max: round((12d + 8) / (2d + 1) * d)).
    """

    name: str
    mixer: str
    ln_placement: LnPlacement
    attention_gelu: bool
    warmup: bool
    grad_clip: bool
    ffn_rule: Literal["4d", "param_matched"] = "4d"

    def ffn_hidden(self, d_model: int) -> int:
        """Hidden width of the feed-forward sub-module for model width ``d_model``."""
        if self.ffn_rule == "4d":
            return 4 * d_model
        # Matches 12d^2 + 9d weights+biases of attention (4d^2 + 4d) + FFN (8d^2 + 5d), as in the release.
        return round((12 * d_model + 8) / (2 * d_model + 1) * d_model)


ARCHITECTURES: Registry[Architecture] = Registry("architecture")


def _add(arch: Architecture) -> None:
    ARCHITECTURES.add(arch.name, arch, module=__name__)  # an instance names no module of its own


class _Switches(TypedDict):
    """The four switches of an architecture (:class:`Architecture`'s fields of the same names)."""

    ln_placement: LnPlacement
    attention_gelu: bool
    warmup: bool
    grad_clip: bool


_MTE_STYLE = _Switches(ln_placement="pre_residual", attention_gelu=True, warmup=False, grad_clip=False)

# BERT encoder as in google-research/bert (https://arxiv.org/abs/1810.04805).
_add(Architecture(name="BERT", mixer="softmax", ln_placement="post", attention_gelu=False, warmup=True, grad_clip=True))
# Modified Transformer Encoder, Richter & Wattenhofer 2020 Sec. 4 (https://arxiv.org/abs/2005.09561).
_add(Architecture(name="MTE", mixer="softmax", **_MTE_STYLE))
# Normalized Attention Pooling, ibid. Eq. 1.
_add(Architecture(name="NAP", mixer="normalized", **_MTE_STYLE))
# No Online logit Normalisation, ibid. Sec. 4.
_add(Architecture(name="NON", mixer="no_norm", **_MTE_STYLE))
# Sum / max reduce-broadcast, ibid. Sec. 4; FFN widened to match parameter counts.
_add(Architecture(name="sum", mixer="sum", ffn_rule="param_matched", **_MTE_STYLE))
_add(Architecture(name="max", mixer="max", ffn_rule="param_matched", **_MTE_STYLE))
# MTE with expressive attention (Gros 2024, "Climbing the Complexity Ladder with Expressive Attention").
_add(Architecture(name="EA", mixer="expressive", **_MTE_STYLE))


def get_architecture(name: str) -> Architecture:
    """The registered architecture ``name`` (ValueError listing valid names otherwise)."""
    return ARCHITECTURES.get(name)
