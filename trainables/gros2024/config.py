"""The trial configuration of the Gros 2024 family (NT tasks on one pre-LN bilayer, d = N)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.probe_names import WEIGHT_PROBES
from trainables.config_fields import ConfigFields
from trainables.gros2024.tasks import GROS_TASKS

ATTENTIONS: tuple[str, ...] = ("dpa", "ea")
WEIGHTS: tuple[str, ...] = ("per_token", "shared")
LOSS_REDUCTIONS: tuple[str, ...] = ("mean", "sum_outputs")
OPTIMIZER_STEPS: tuple[str, ...] = ("per_epoch", "per_prediction")
#: What a Gros trial may probe (trainables.probes): the attention of its one layer, per head.
GROS_PROBES = WEIGHT_PROBES


@dataclass(frozen=True, kw_only=True)
class GrosConfig(ConfigFields):
    """Hyperparameters of one Gros 2024 trial (names identical to the Parquet columns).

    Attributes:
        task: nt, nt_s, nt_r or nt_mix (the 50/50 mixture of nt and nt_s).
        basis: symbol alphabet size N.
        d_model: model width d; None = N (the paper). A larger d (for the cross-paper atlas) keeps the one-hot
            symbols in the first N dimensions; the readout still predicts N symbols.
        delay: delay tau of the rule.
        n_context: context length N_con (tokens the model sees; the readout is N_con * d -> d).
        attention: ``dpa`` (softmax of beta * Q^T K) or ``ea`` (expressive attention, Eq. 2); unused (its column
            null) when ``mixer`` replaces the paper's head.
        mixer: None (the paper's causal single head, chosen by ``attention``) or a name of
            ``trainables.mixers.MIXERS`` replacing it (called causal like the paper's head, ``n_heads`` heads,
            its own projections; before issue 25 it ran non-causal).
        n_heads: heads of ``mixer`` (must divide basis); the paper's head is single.
        weights: ``per_token`` (each context position has its own Q/K/V and FFN matrices: the reading that
            reproduces the size of the paper's parameter counts) or ``shared`` (one set for all positions).
        beta: DPA's inverse temperature (the paper: 1, no 1/sqrt(d)).
        loss_reduction: ``mean`` (squared error averaged over the batch and the N outputs) or ``sum_outputs``
            (summed over the N outputs, averaged over the batch: N times the gradient); the paper does not say.
        optimizer_steps: ``per_epoch`` (the epoch's ``batch_predictions`` predictions are one batch, one SGD step)
            or ``per_prediction`` (one SGD step per prediction, in order along the series).
        init_scale: factor on every initial weight and bias bound (PyTorch's U(-1/sqrt(fan_in), 1/sqrt(fan_in)));
            1 = PyTorch's default (the paper does not state its initialisation).
        qkv_bias: whether the attention's query, key and value projections have biases (the paper names Q, K
            and V only; True = nn.Linear's default).
        ln_affine: whether the two LayerNorms have a learned gain and bias (True = PyTorch's default; False:
            plain standardisation).
        readout_lr_context: None (the readout steps at ``learning_rate``, the paper's literal setting) or C: the
            readout's learning rate is ``learning_rate * min(1, C / n_context)``. The readout is linear over all
            N_con x d activations, so its curvature grows with N_con; this keeps its step stable at long contexts.
        learning_rate: SGD learning rate (paper: 0.02).
        momentum: SGD momentum (paper: 0.8).
        n_epochs: epochs; one epoch = one fresh series and ``batch_predictions`` predictions.
        eval_every: epochs between evaluations; must divide n_epochs.
        batch_predictions: next-symbol predictions per epoch (paper N_batch = 40).
        eval_series: fresh series per evaluation during training (paper N_test = 100).
        eval_predictions: greedy free-running predictions per series (paper N_g = 50).
        final_eval_series: series of the final evaluation after training (paper: at least 10^4).
        lr_drop_epoch: None, or the epoch from which the learning rate is divided by ``lr_drop_factor`` (Fig. 6).
        lr_drop_factor: the divisor of that drop (paper: 4).
        snapshot_seeds: how many seeds (the first ones) save their final attention matrices on a probe series.
        probes: None (nothing probed, no column), True / ``"all"``, or some of entropy, peak, distance, range
            (comma-separated or a list): statistics of the attention per head at every evaluation, as ``probe_*``
            columns (docs/gros2024.md, "Probes").
    """

    REQUIRED = ("task",)
    task: str
    basis: int = 16
    d_model: int | None = None
    delay: int = 2
    n_context: int = 32
    attention: str = "ea"
    mixer: str | None = None
    n_heads: int = 1
    weights: str = "per_token"
    beta: float = 1.0
    loss_reduction: str = "mean"
    optimizer_steps: str = "per_epoch"
    init_scale: float = 1.0
    qkv_bias: bool = True
    ln_affine: bool = True
    readout_lr_context: int | None = None
    learning_rate: float = 0.02
    momentum: float = 0.8
    n_epochs: int = 1000
    eval_every: int = 20
    batch_predictions: int = 40
    eval_series: int = 100
    eval_predictions: int = 50
    final_eval_series: int = 10_000
    lr_drop_epoch: int | None = None
    lr_drop_factor: float = 4.0
    snapshot_seeds: int = 2
    probes: str | None = None

    def __post_init__(self) -> None:
        self.require_choice("task", GROS_TASKS)
        for name, low in {"basis": 2, "delay": 1, "n_context": 1, "n_heads": 1, "n_epochs": 1, "eval_every": 1,
                          "batch_predictions": 1, "eval_series": 1, "eval_predictions": 1, "final_eval_series": 0,
                          "snapshot_seeds": 0}.items():
            self.require_ints([name], minimum=low, allowed=f"an integer >= {low}")
        self.require_ints(["d_model"], minimum=self.basis, optional=True,
                          allowed=f"None (= basis) or an integer >= basis={self.basis}")
        if self.n_context < self.delay + 1:
            raise self.invalid("n_context", f"an integer >= delay + 1 = {self.delay + 1} (the rule's inputs)")
        if self.n_epochs % self.eval_every:
            raise self.invalid("n_epochs", f"a multiple of eval_every={self.eval_every}")
        for name, choices in (("attention", ATTENTIONS), ("loss_reduction", LOSS_REDUCTIONS),
                              ("optimizer_steps", OPTIMIZER_STEPS), ("weights", WEIGHTS)):
            self.require_choice(name, choices)
        self._check_mixer()
        self.require_probes(GROS_PROBES)
        for name in ("learning_rate", "beta", "lr_drop_factor", "init_scale"):
            self.require_real(name, low=0)
        self.require_real("momentum", low=0, high=1, low_open=False)
        self.require_bools(["qkv_bias", "ln_affine"], optional=False, allowed="True or False")
        self.require_ints(["readout_lr_context"], optional=True, allowed="None or an integer >= 1")
        drop_allowed = f"None or an integer in (0, n_epochs={self.n_epochs})"
        self.require_ints(["lr_drop_epoch"], optional=True, allowed=drop_allowed)
        if self.lr_drop_epoch is not None and self.lr_drop_epoch >= self.n_epochs:
            raise self.invalid("lr_drop_epoch", drop_allowed)

    def _check_mixer(self) -> None:
        """A registry mixer in place of the paper's head must exist and split the width into heads."""
        from trainables.mixers import MIXERS

        self.require_choice("mixer", (None, *MIXERS.names()),
                            allowed="None (the paper's causal head) or one of " + ", ".join(MIXERS.names()))
        if self.mixer is None:
            return
        if not MIXERS.get(self.mixer).supports_causal:
            raise self.invalid("mixer", "a mixer that supports causal=True (the bilayer's attention is causal)"
                               + MIXERS.get(self.mixer).interface_hint())
        if self.width % self.n_heads:
            raise self.invalid("n_heads", f"a divisor of the model width d={self.width}")

    def resolved(self) -> dict[str, Any]:
        """Every field as the concrete value used in training (the Parquet hyperparameter columns).

        ``mixer`` stays the registry mixer's name or None (the paper's head), ``attention`` the paper's head
        that ran (``dpa``/``ea``) or None where a registry mixer replaces it, and ``d_model`` resolves to the
        width used.
        """
        out = self.to_dict()
        if self.mixer is not None:
            out["attention"] = None
        out["d_model"] = self.width
        return self.without_unasked_probes(out)

    @property
    def width(self) -> int:
        """The model width d (``d_model``, or N when None as in the paper)."""
        return self.basis if self.d_model is None else self.d_model

    @property
    def readout_lr_factor(self) -> float:
        """The readout's learning rate relative to ``learning_rate``."""
        if self.readout_lr_context is None:
            return 1.0
        return min(1.0, self.readout_lr_context / self.n_context)

    def learning_rate_at(self, epoch: int) -> float:
        """The learning rate of the optimiser step of ``epoch`` (0-based)."""
        if self.lr_drop_epoch is not None and epoch >= self.lr_drop_epoch:
            return self.learning_rate / self.lr_drop_factor
        return self.learning_rate
