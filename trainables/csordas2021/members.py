"""K members (seeds) of one CTL configuration as one model; one seed is K = 1.

Each member is built alone (``torch.manual_seed(seed); build_model(cfg)``), so its initialisation is the one-seed
run's; K > 1 members are stacked by :func:`trainables.csordas2021.models.stack_members` (every parameter gets a
leading member axis and the models' own forward pass runs them all at once), one member trains its own model (its
layers are then ``nn``'s own calls). Each member's dropout comes from its own generator
(:mod:`trainables.csordas2021.noise`), and its batches from its own data stream (the loop), padded to the widest
member's batch: so member k's rows equal seed k's alone up to float rounding.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from trainables.csordas2021.config import CTLConfig
from trainables.csordas2021.geometric import GeometricAttention
from trainables.csordas2021.models import (
    Attention,
    CTLModel,
    GatedLayer,
    LSTMClassifier,
    PostLNLayer,
    RegistryMixer,
    SharedLayerClassifier,
    stack_members,
)
from trainables.csordas2021.noise import MemberNoise, member_generator
from trainables.csordas2021.relative import RelativeAttention
from trainables.stacked import count_parameters

#: Fields that may differ between the configs of one stack (a scalar of the update that changes no shape).
PACKABLE_FIELDS: tuple[str, ...] = ("learning_rate",)


def build_model(cfg: CTLConfig) -> CTLModel:
    """The model of ``cfg.model`` with the resolved hyperparameters (drawn from torch's current RNG state)."""
    r = cfg.resolved()
    d, h = r["d_model"], r["n_heads"]
    if r["layer"] == "lstm":
        return LSTMClassifier(d, r["dropout"])
    attention: Attention
    if r["mixer"] is not None:
        attention = RegistryMixer(r["mixer"], d, h, dropout=r["att_dropout"])
    elif r["attention"] == "masked_softmax":
        attention = RegistryMixer("softmax", d, h, dropout=r["att_dropout"], torch_mha_init=True)
    elif r["attention"] in ("relative", "abs_relative"):
        attention = RelativeAttention(d, h, dropout=r["att_dropout"], abs_gate=r["attention"] == "abs_relative")
    elif r["attention"] in ("geometric", "geometric_normalized"):
        attention = GeometricAttention(d, h, dropout=r["att_dropout"],
                                       normalize=r["attention"] == "geometric_normalized", directional=cfg.directional)
    else:
        raise ValueError(f"invalid attention={r['attention']!r}; allowed: masked_softmax, relative, abs_relative, "
                         "geometric, geometric_normalized")
    layer: PostLNLayer | GatedLayer
    if r["layer"] == "post_ln":
        layer = PostLNLayer(attention, d, r["d_ff"], r["dropout"])
    else:
        layer = GatedLayer(attention, d, r["d_ff"], r["dropout"], update="ln" if r["layer"] == "gate_ln" else "tanh",
                           gate_dropout=r["gate_dropout"], gate_bias=cfg.gate_bias)
    # Sinusoidal positions for the plain Transformer and the registry mixers (which have no positions).
    absolute = r["attention"] not in ("relative", "abs_relative", "geometric", "geometric_normalized")
    return SharedLayerClassifier(layer, d, r["n_layers"], absolute_positions=absolute,
                                 embedding_init=r["embedding_init"])


def check_packable(configs: Sequence[CTLConfig]) -> None:
    """ValueError naming the field if the configs differ in anything but :data:`PACKABLE_FIELDS`."""
    first = configs[0].to_dict()
    for c in configs[1:]:
        for key, value in c.to_dict().items():
            if key not in PACKABLE_FIELDS and value != first[key]:
                raise ValueError(f"cannot pack configs that differ in {key!r} ({first[key]!r} vs {value!r}); "
                                 f"packable: {', '.join(PACKABLE_FIELDS)}")


class Members:
    """K models of one configuration, each built from its seed: one stacked module (K > 1) or the model itself.

    Args:
        configs: one config per member (they may differ only in :data:`PACKABLE_FIELDS`).
        seeds: one seed per member (its initialisation and, through :attr:`noise`, its dropout).
        device: where the parameters live.
    """

    def __init__(self, configs: Sequence[CTLConfig], seeds: Sequence[int], *, device: str = "cpu") -> None:
        if len(configs) != len(seeds) or not configs:
            raise ValueError("need one seed per config and at least one member")
        check_packable(configs)
        self.k = len(configs)
        models, generators = [], []
        for c, seed in zip(configs, seeds, strict=True):
            torch.manual_seed(seed)  # the init draws follow the seed
            models.append(build_model(c))
            generators.append(member_generator(device, seed, alone=self.k == 1))
        self.n_params = count_parameters(models[0])
        self.module: CTLModel = (models[0] if self.k == 1 else stack_members(models)).to(device)
        self.params = list(self.module.parameters())
        self.noise = MemberNoise(generators, stacked=self.k > 1)

    def __call__(self, tokens: torch.Tensor, lengths: torch.Tensor, widths: Sequence[int] | None = None
                 ) -> torch.Tensor:
        """Logits (K, B, 8) for tokens (K, B, N) and lengths (K, B), in the module's current mode; ``widths``: each
        member's own batch width (its dropout masks take that shape), None for all N."""
        self.noise.widths = None if widths is None else list(widths)
        if self.k > 1:
            logits: torch.Tensor = self.module(tokens, lengths, self.noise)
            return logits
        one: torch.Tensor = self.module(tokens[0], lengths[0], self.noise)
        return one.unsqueeze(0)
