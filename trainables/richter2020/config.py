"""The trial configuration: every hyperparameter of one trained model (except the seed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.probe_names import PARAMETER_PROBES, WEIGHT_PROBES
from trainables.config_fields import ConfigFields
from trainables.mixers import MIXERS
from trainables.mixers.sepconv import DEFAULT_CONV_WIDTH
from trainables.richter2020.architectures import ARCHITECTURES, LN_PLACEMENTS
from trainables.richter2020.tasks import TASKS, parse_case_mix

#: What a Richter trial may probe (trainables.probes): the attention of each layer, per head, and NAP's bias share
#: (last: every column an older request wrote keeps its place).
RICHTER_PROBES = (*WEIGHT_PROBES, *PARAMETER_PROBES)


@dataclass(frozen=True, kw_only=True)
class TrainConfig(ConfigFields):
    """Hyperparameters of one trial (names identical to the Parquet columns).

    Attributes:
        architecture: one of BERT, MTE, NAP, NON, sum, max.
        task: one of cases, cases_first_token, mode.
        d_model: model width d.
        n_layers: number of Transformer layers L (mixer + feed-forward each).
        n_heads: attention heads M (ignored by sum/max but still must divide d_model).
        learning_rate: initial Adam learning rate (linearly decayed to 0 over n_steps).
        batch_size: sequences per training batch.
        n_steps: optimiser steps; must be a multiple of eval_every.
        seq_len: training sequence length N.
        val_seq_len: validation sequence length; None = task default (N/2 for cases tasks, 2N for mode).
        vocab_size: number of tokens S; None = task default (100 for cases tasks, 10 for mode).
        eval_every: optimiser steps between evaluations (one "epoch" in the paper).
        eval_batches: fresh validation batches (of batch_size) per evaluation.
        case_eval_per_case: examples per case in the equalised case-accuracy sets (cases tasks).
        dropout: dropout probability (attention weights, sub-module outputs, embeddings); 0 = off.
        l2_weight: adds l2_weight * sum(w^2) over the dense-layer weight matrices to the loss (Keras l2).
        init_scale: factor on the 0.02 std of the truncated-normal initialisation.
        warmup: linear LR warm-up over the first 10% of steps; None = architecture default.
        grad_clip: clip each gradient tensor to norm 1.0; None = architecture default.
        ln_placement: "post" or "pre_residual"; None = architecture default.
        attention_gelu: GELU before the attention mixing linear; None = architecture default.
        case_mix: "natural" or "a,f,m" shares of the argmin/first/argmax cases (cases tasks).
        mixer: token mixer of every layer (a name in trainables.mixers.MIXERS); None = architecture default.
        mixer_stack: one mixer name per layer, bottom first, comma-separated ("sepconv,softmax" for L = 2);
            None = ``mixer`` in every layer. Set at most one of mixer / mixer_stack.
        conv_width: filter length k of the sepconv mixer (centred, non-causal; ignored by other mixers).
        probes: None (nothing probed, no column), True / ``"all"``, or some of entropy, peak, distance, range,
            bias (comma-separated or a list): statistics of each layer's attention per head at every evaluation
            (bias: NAP's share of its bias b in the token weights), as ``probe_*`` columns (docs/richter2020.md,
            "Probes").
    """

    REQUIRED = ("architecture", "task")
    architecture: str
    task: str
    d_model: int = 128
    n_layers: int = 2
    n_heads: int = 4
    learning_rate: float = 1e-3
    batch_size: int = 32
    n_steps: int = 3200
    seq_len: int = 128
    val_seq_len: int | None = None
    vocab_size: int | None = None
    eval_every: int = 100
    eval_batches: int = 32
    case_eval_per_case: int = 1000
    dropout: float = 0.0
    l2_weight: float = 0.0
    init_scale: float = 1.0
    warmup: bool | None = None
    grad_clip: bool | None = None
    ln_placement: str | None = None
    attention_gelu: bool | None = None
    case_mix: str = "natural"
    mixer: str | None = None
    mixer_stack: str | None = None
    conv_width: int = DEFAULT_CONV_WIDTH
    probes: str | None = None

    def __post_init__(self) -> None:
        self.require_choice("architecture", ARCHITECTURES.names())
        self.require_choice("task", TASKS.names())
        self.require_ints(["d_model", "n_layers", "n_heads", "batch_size", "n_steps", "seq_len", "eval_every",
                           "eval_batches", "case_eval_per_case", "conv_width"])
        self.require_ints(["val_seq_len", "vocab_size"], optional=True,
                          allowed="None (task default) or a positive integer")
        if self.d_model % self.n_heads:
            raise self.invalid("d_model", f"a multiple of n_heads={self.n_heads}")
        if self.n_steps % self.eval_every:
            raise self.invalid("n_steps", f"a multiple of eval_every={self.eval_every}")
        self.require_real("learning_rate", low=0)
        self.require_real("dropout", low=0, high=1, low_open=False)
        self.require_real("l2_weight", low=0, low_open=False)
        self.require_real("init_scale", low=0)
        self.require_bools(["warmup", "grad_clip", "attention_gelu"],
                           allowed="None (architecture default), True or False")
        if self.ln_placement is not None:
            self.require_choice("ln_placement", LN_PLACEMENTS,
                                allowed="None (architecture default), " + ", ".join(LN_PLACEMENTS))
        self._check_task_options()
        self._check_mixers()
        self.require_probes(RICHTER_PROBES)

    def _check_task_options(self) -> None:
        """vocab_size and case_mix suit the task."""
        task_cls = TASKS.get(self.task)
        if self.vocab_size is not None:
            problem = task_cls.check_vocab_size(self.vocab_size)
            if problem:
                raise ValueError(problem)
        if not isinstance(self.case_mix, str):
            raise self.invalid("case_mix", "'natural' or 'a,f,m'")
        if self.case_mix != "natural":
            if not task_cls.has_cases:
                raise self.invalid("case_mix", f"'natural' (task {self.task!r} has no cases)")
            parse_case_mix(self.case_mix)

    def _check_mixers(self) -> None:
        """mixer / mixer_stack name registered mixers (one per layer); fixed-length mixers validate at N."""
        self.require_choice("mixer", (None, *MIXERS.names()),
                            allowed="None (architecture default), " + ", ".join(MIXERS.names()))
        if self.mixer_stack is not None:
            if self.mixer is not None:
                raise ValueError(f"invalid mixer_stack={self.mixer_stack!r} with mixer={self.mixer!r}; allowed: "
                                 "set one of mixer / mixer_stack, not both")
            names = str(self.mixer_stack).split(",") if isinstance(self.mixer_stack, str) else []
            if len(names) != self.n_layers:
                raise ValueError(f"invalid mixer_stack={self.mixer_stack!r}; allowed: {self.n_layers} comma-separated "
                                 f"mixer names (one per layer, n_layers={self.n_layers})")
            for name in names:
                if name not in MIXERS:
                    raise ValueError(f"invalid mixer_stack={self.mixer_stack!r}: unknown mixer {name!r}; allowed: "
                                     + ", ".join(MIXERS.names()))
        fixed = sorted({m for m in self.layer_mixers() if getattr(MIXERS.get(m), "fixed_length", False)})
        if fixed:
            val = self.val_seq_len
            if val != self.seq_len:
                shown = f"None (task default {TASKS.get(self.task).default_val_seq_len(self.seq_len)})" \
                    if val is None else repr(val)
                raise ValueError(
                    f"invalid val_seq_len={shown}; allowed: {self.seq_len} (= seq_len): mixer "
                    f"{', '.join(map(repr, fixed))} has parameters fixed to the training length and cannot "
                    "validate at another length (set val_seq_len=seq_len: validated at training length)"
                )

    def layer_mixers(self) -> tuple[str, ...]:
        """The mixer of each layer, bottom first (mixer_stack, else mixer, else the architecture's)."""
        if self.mixer_stack is not None:
            return tuple(self.mixer_stack.split(","))
        name = self.mixer if self.mixer is not None else ARCHITECTURES.get(self.architecture).mixer
        return (name,) * self.n_layers

    def resolved(self) -> dict[str, Any]:
        """All fields with every None replaced by the concrete value used in training (Parquet columns)."""
        arch = ARCHITECTURES.get(self.architecture)
        task_cls = TASKS.get(self.task)
        out = self.to_dict()
        defaults = {
            "val_seq_len": task_cls.default_val_seq_len(self.seq_len),
            "vocab_size": task_cls.default_vocab_size,
            "warmup": arch.warmup,
            "grad_clip": arch.grad_clip,
            "ln_placement": arch.ln_placement,
            "attention_gelu": arch.attention_gelu,
        }
        stack = self.layer_mixers()
        # Parquet columns: the per-layer stack always; ``mixer`` names the one mixer, None when the layers differ.
        out["mixer_stack"] = ",".join(stack)
        out["mixer"] = stack[0] if len(set(stack)) == 1 else None
        for key, value in defaults.items():
            if out[key] is None:
                out[key] = value
        return self.without_unasked_probes(out)
