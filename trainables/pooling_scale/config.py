"""The trial configuration of the measurement family: one pooling at one sequence length (task ``pooling_scale``,
Richter & Wattenhofer 2020 Fig. 1), one attention mixer at one sequence length and logit scale (task
``token_mixing``, Yun et al. 2020's two theory items: ``trainables/pooling_scale/mixing.py``), or one architecture's
first layer at one sequence length (task ``context_share``, Richter & Wattenhofer's Sec. 3:
``trainables/pooling_scale/context.py``), one token mixer's cost, parameters and input dependence (task
``mixer_properties``, Yun et al.'s Sec. 5.1: ``mixer_properties.py``) or one architecture's stack of layers under
permuted inputs (task ``equivariance``, Yun et al.'s Claim 1: ``equivariance.py``); Csordás et al. 2021's geometric
attention's matches and cost and its data set's splits (tasks ``ndr_matches``, ``ndr_cost``, ``ctl_splits``:
``trainables/csordas2021/properties.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainables.config_fields import ConfigFields

TASKS: tuple[str, ...] = ("pooling_scale", "token_mixing", "context_share", "mixer_properties", "equivariance",
                          "ndr_matches", "ndr_cost", "ndr_sides", "ctl_splits")
#: softmax attention without projections, the registry's reduce mixers mean / sum / max, the sum
#: standardised over the vector dimension (App. B's "normalized"; not the NAP mixer, which has projections),
#: NON's weighting (Sec. 4: the raw logits as weights, the sum scaled by 1 / sqrt(N); before its GELU), and the
#: same standardisation applied to mean, max and softmax outputs (App. B: "to any of the aggregation methods").
POOLINGS: tuple[str, ...] = ("softmax", "mean", "sum", "max", "normalized", "non", "normalized_mean", "normalized_max",
                             "normalized_softmax")
#: the prefix of a pooling standardised over the vector dimension (the pooling after it, on the same draws)
STANDARDISED = "normalized_"
#: task ``token_mixing``: the registry's average attention (App. D: constant weights 1/N) and softmax attention, each
#: with its projections as initialised (``trainables.mixers``).
MIXINGS: tuple[str, ...] = ("average", "softmax")
#: task ``context_share``: the Richter architectures whose mixer is an attention (their first layer as initialised).
CONTEXT_ARCHITECTURES: tuple[str, ...] = ("BERT", "MTE", "NAP", "NON")
#: task ``mixer_properties``: dot-product attention and Yun et al.'s two cheaper mixers (Sec. 5.1), as the registry
#: builds them (``trainables/pooling_scale/mixer_properties.py``).
PROPERTY_MIXERS: tuple[str, ...] = ("softmax", "bilinear", "sepconv")
#: task ``ndr_matches``: Eq. 7's geometric attention and its match probabilities alone (no (1 - P) term).
MATCH_POOLINGS: tuple[str, ...] = ("geometric", "sigmoid")
#: task ``ndr_cost``: NDR's geometric attention and the registry's softmax attention.
COST_ATTENTIONS: tuple[str, ...] = ("geometric", "softmax")
#: task ``ndr_sides``: NDR's geometric attention with its directional term.
SIDE_ATTENTIONS: tuple[str, ...] = ("geometric",)
#: task ``ctl_splits``: the CTL generator's train set and its depth validation and test sets.
CTL_SPLITS: tuple[str, ...] = ("train", "depth_valid", "depth_test")
#: task ``ctl_splits``: its one ``seq_len``, the longest CTL input (SOS, 10 functions, the argument, EOS): the
#: generator's, not a choice (``trainables.csordas2021.ctl.MAX_INPUT_LEN``).
CTL_LENGTH = 13
#: the shortest sequence a task measures, and why
SHORTEST: dict[str, tuple[int, str]] = {
    "token_mixing": (3, "two tokens change, one stays"), "context_share": (2, "token 0 and its context"),
    "equivariance": (2, "a permutation other than the identity"),
    "ndr_matches": (3, "a query and two keys at different distances"), "ndr_sides": (2, "a key beside the query")}
#: what ``pooling`` names per task (``equivariance``: an architecture's stack of layers, as ``context_share``'s)
CHOICES: dict[str, tuple[str, ...]] = {"pooling_scale": POOLINGS, "token_mixing": MIXINGS,
                                       "context_share": CONTEXT_ARCHITECTURES, "mixer_properties": PROPERTY_MIXERS,
                                       "equivariance": CONTEXT_ARCHITECTURES, "ndr_matches": MATCH_POOLINGS,
                                       "ndr_cost": COST_ATTENTIONS, "ndr_sides": SIDE_ATTENTIONS,
                                       "ctl_splits": CTL_SPLITS}


@dataclass(frozen=True, kw_only=True)
class PoolingScaleConfig(ConfigFields):
    """Hyperparameters of one measurement (names identical to the Parquet columns).

    Attributes:
        task: one of :data:`TASKS`.
        pooling: one of :data:`POOLINGS` (``pooling_scale``), :data:`MIXINGS` (``token_mixing``),
            :data:`PROPERTY_MIXERS` (``mixer_properties``) or :data:`CONTEXT_ARCHITECTURES` (``context_share``,
            ``equivariance``), :data:`MATCH_POOLINGS` (``ndr_matches``), :data:`COST_ATTENTIONS` (``ndr_cost``),
            :data:`SIDE_ATTENTIONS` (``ndr_sides``) or :data:`CTL_SPLITS` (``ctl_splits``).
        seq_len: sequence length N; must divide ``n_vectors`` (``token_mixing``: N >= 3, two tokens change and one
            stays; ``ctl_splits``: not read, 13 only).
        d_head: dimension d_h of the value / key / query vectors (the paper: 128); ``token_mixing``,
            ``mixer_properties``: the mixer's d_model (one head); ``context_share``, ``equivariance``: the model's;
            ``ndr_matches``: the queries' and keys'; ``ndr_cost``, ``ndr_sides``: the attention's d_model (one head);
            ``ctl_splits``: not read (left out of its rows).
        n_vectors: vectors drawn from N(0, I) per seed, split into sequences of length N (``ndr_cost``: not read;
            ``ctl_splits``: not read, left out of its rows).
        logit_scale: ``token_mixing`` only: the factor on the mixer's logits (softmax: q.k / sqrt(d_h) times it;
            average: constant logits, which no factor changes); ``pooling_scale`` takes 1 only and leaves it out of
            its rows.

    ``context_share`` needs N >= 2 (token 0 and a context), two sequences or more and ``d_head`` (its model's
    d_model) a multiple of the model's 4 heads; ``equivariance`` N >= 2 and the same ``d_head``; ``ndr_sides`` N >= 2;
    ``ndr_matches`` N >= 3 (a query and two keys at different distances); ``ctl_splits`` N = :data:`CTL_LENGTH` only
    (its ``n_vectors`` is not read either).
    """

    REQUIRED = ("task", "pooling", "seq_len")
    task: str
    pooling: str
    seq_len: int
    d_head: int = 128
    n_vectors: int = 16384
    logit_scale: float = 1.0

    def __post_init__(self) -> None:
        self.require_choice("task", TASKS)
        self.require_choice("pooling", CHOICES[self.task])
        self.require_ints(["seq_len", "d_head", "n_vectors"])
        self.require_real("logit_scale", low=0.0)
        if self.task == "ctl_splits" and self.seq_len != CTL_LENGTH:
            raise self.invalid("seq_len", f"{CTL_LENGTH} with task ctl_splits (the longest CTL input: the generator's)")
        if self.task != "ctl_splits" and self.n_vectors % self.seq_len:
            raise self.invalid("seq_len", f"a positive divisor of n_vectors={self.n_vectors}")
        if self.task in SHORTEST and self.seq_len < SHORTEST[self.task][0]:
            least, why = SHORTEST[self.task]
            raise self.invalid("seq_len", f"{least} or more with task {self.task} ({why})")
        if self.task == "context_share" and self.n_vectors // self.seq_len < 2:
            raise self.invalid("n_vectors", f"at least 2 x seq_len={self.seq_len} with task context_share (a variance "
                                            "over sequences)")
        if self.task in ("context_share", "equivariance") and self.d_head % 4:
            raise self.invalid("d_head", f"a multiple of 4 with task {self.task} (the model's 4 heads)")
        if self.task != "token_mixing" and self.logit_scale != 1.0:
            raise self.invalid("logit_scale", f"1 with task {self.task} (a factor on the logits is token_mixing's)")

    def resolved(self) -> dict[str, Any]:
        """Every field as used (nothing is left to a default that depends on another): the Parquet columns
        (rows of every task but ``token_mixing`` without ``logit_scale``, ``ctl_splits`` rows without ``d_head`` and
        ``n_vectors``: fields they do not use)."""
        fields = self.to_dict()
        if self.task != "token_mixing":
            del fields["logit_scale"]
        if self.task == "ctl_splits":
            del fields["d_head"], fields["n_vectors"]
        return fields
