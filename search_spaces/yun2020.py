"""Yun et al. 2020, "Are Transformers universal approximators of sequence-to-sequence functions?" (ICLR 2020,
arXiv:1912.10077), Sec. 5 and App. D: cheaper token mixers and hybrid stacks.

The paper pre-trains 12-layer BERT models (MLM on Wikipedia + BooksCorpus, 16 TPUs for 2 days) and fine-tunes
them on MNLI and SQuAD; that data and budget are out of reach here. What carries over (docs/yun2020.md)
is the **hybrid** question on this project's synthetic tasks: with L = 4 layers,
does replacing the bottom k layers' self-attention by the depth-wise separable convolution (GLU + shared
filters, ``trainables/mixers/sepconv.py``) help, and what does it save in parameters and time?
Paper finding (Sec. 5.3, Fig. 1): a few convolution layers at the bottom beat the all-attention stack. The text lost
the paper's two numbers of convolution layers; k = 1 and 2 (of L = 4) are the project's choice, named as such in the
findings and the deviations.

The cheap mixers themselves (bilinear, sepconv, average) are compared with every other mixer on every task
in the cross-paper ``atlas`` study (search_spaces/atlas.py). ``yun2020.theory`` measures two theory items without
training (Sec. 3.1: averaging is not a contextual mapping; App. B: softmax approaches hardmax as its logits are
scaled up) on the average and softmax mixers as initialised (trainables/pooling_scale/mixing.py);
``yun2020.mixers`` and ``yun2020.equivariance`` (search_spaces/yun2020_properties.py) measure what the paper says its
layers are: the cheaper mixers' cost, parameters and input dependence, and the permutation equivariance of Transformer
blocks.
"""

from __future__ import annotations

import math

from search_spaces import Finding, Linked, Plot, Study
from search_spaces.richter2020 import LEARNING_RATES
from search_spaces.yun2020_properties import EQUIVARIANCE, MIXERS

N_LAYERS = 4
CONV, ATTENTION = "sepconv", "softmax"


def hybrid_stack(k: int, n_layers: int = N_LAYERS) -> str:
    """The ``mixer_stack`` with k convolution layers at the bottom and softmax attention above."""
    if not 0 <= k <= n_layers:
        raise ValueError(f"invalid k={k!r}; allowed: 0..{n_layers} convolution layers")
    return ",".join([CONV] * k + [ATTENTION] * (n_layers - k))


#: The scientific axis: k -> the per-layer mixer stack (a label column ``conv_layers`` in the results).
CONV_LAYERS = Linked(options={k: {"mixer_stack": hybrid_stack(k)} for k in range(N_LAYERS + 1)})


def conv_layers(*ks: int) -> Linked:
    """The ``conv_layers`` axis restricted to the given k."""
    return Linked(options={k: CONV_LAYERS.options[k] for k in ks})

HYBRID_DEVIATIONS = (
    "Synthetic tasks (cases, mode of Richter & Wattenhofer 2020) instead of BERT pre-training + MNLI / SQuAD "
    "fine-tuning, and L = 4 layers instead of 12 (docs/yun2020.md).",
    "BERT recipe as in the paper's baseline (post-LN, warm-up, per-tensor clipping; Adam eps 1e-7, linear "
    "decay), trained from scratch on fresh batches (no pre-training / fine-tuning split).",
    "Convolution layer (Wu et al. 2019 style, App. D): GLU input projection d -> 2d -> d, H = n_heads "
    "softmax-normalised filters each shared by d/H channels, filter length conv_width = 31 (paper: 16 filters "
    "of length 128 at d = 768, N = 512), centred non-causal zero padding, output projection d -> d; skip "
    "connection, LayerNorm and feed-forward layer as in the attention layers.",
    "Validated at training length (val_seq_len = seq_len): the paper's claim is about in-distribution "
    "accuracy, and the atlas compares mixers (bilinear among them) on the same footing; length "
    "generalisation is richter2020's question.",
    "Throughput per k is the trials' wall time (training + evaluations, other processes sharing the CPU); "
    "bench/hybrid_throughput.py measures training steps/s alone (median of repeated runs).",
    "The findings' k = 1 and k = 2 bottom convolution layers are the project's choice, not the paper's numbers: its "
    "text lost them ('models with [n] or [m] convolution layers and rest the self-attention layers'); 1 and 2 are "
    "'the first few' of L = 4 layers, itself the project's choice (paper: 12).",
)

#: Sec. 5.3's observations on the hybrid grid (docs/yun2020.md lists every observation of the paper). The text has
#: no result numbers (its Table 1 and Fig. 1 are missing, the number of convolution layers in the key sentence is
#: stripped): direction only, each a lead beyond seed noise per task; on synthetic tasks, not MNLI / SQuAD. The k of
#: findings 1 and 2 (1 and 2 convolution layers) is the project's choice, and each says so.
_HYBRID_QUOTE = ('Sec. 5.3: "Interestingly, models with [n] or [m] convolution layers and rest the self-attention '
                 'layers, perform better than models with only the self-attention layers." ([n], [m]: numbers the '
                 'text lost; "the first few self-attention layers" are swapped)')


def _hybrid_beats_attention(k: int) -> Finding:
    return Finding(description=f"Fig. 1 (Sec. 5.3): {k} convolution layer{'s' if k > 1 else ''} at the bottom "
                               "(attention above) beat the all-attention stack: best validation G higher on each task, "
                               f"by more than seed noise (k = {k} of L = 4 is the project's choice: the text lost the "
                               "paper's numbers)",
                   quote=_HYBRID_QUOTE, metric="val_accuracy", where={"conv_layers": (k,)},
                   versus_where={"conv_layers": (0,)}, ahead={t: (t,) for t in ("cases", "mode")},
                   chosen=(f"k = {k} of L = 4: the text lost the paper's numbers of convolution layers (of 12)",
                           "margin 0: 'perform better' read as any lead beyond seed noise"))


HYBRID_FINDINGS = (
    _hybrid_beats_attention(1),
    _hybrid_beats_attention(2),
    Finding(description="Sec. 5.3 / App. D: a model of convolution layers only is weaker than self-attention: the "
                        "all-attention stack's best validation G leads the all-convolution stack's (k = 4) on each "
                        "task, by more than seed noise",
            quote='Sec. 5.3: "We notice that, as expected, these simpler models have weaker performance than the '
                  'self-attention layer."',
            metric="val_accuracy", where={"conv_layers": (0,)}, versus_where={"conv_layers": (4,)},
            ahead={t: (t,) for t in ("cases", "mode")},
            chosen=("k = 4 of L = 4: 'these simpler models' read as a stack of convolution layers only",
                    "margin 0: 'weaker' read as any lead beyond seed noise")),
    Finding(description="Sec. 5.3: replacing self-attention layers by convolution reduces the number of parameters: "
                        "the all-attention stack has more than any stack with convolution layers",
            quote='Sec. 5.3: "Note that, replacing self-attention layer with [convolution] also reduces the '
                  'computational cost and the number of parameters."',
            metric="n_params", where={"conv_layers": (0,)}, versus_where={"conv_layers": (1, 2, 3, 4)},
            ahead={t: (t,) for t in ("cases", "mode")},
            chosen=("none of the paper's: a count, any difference; L = 4 and d = 128 are the study's sizes",)),
)

HYBRID = Study(
    name="yun2020.hybrid",
    goal="With L = 4 layers, do k = 1-2 depth-wise separable convolution layers at the bottom (softmax "
         "attention above) beat the all-attention stack on case distinction and mode finding, across "
         "learning rates and seeds, and what do they save in parameters and training time (Yun et al. "
         "2020, Fig. 1)?",
    scientific={"task": ("cases", "mode"), "conv_layers": CONV_LAYERS},
    nuisance={"learning_rate": LEARNING_RATES},
    fixed={"architecture": "BERT", "n_layers": N_LAYERS, "d_model": 128, "n_heads": 4, "seq_len": 128,
           "val_seq_len": 128, "batch_size": 32, "n_steps": 3200},
    plot=Plot(panel="task", x="conv_layers", y="learning_rate"),
    findings=HYBRID_FINDINGS,
    deviations=HYBRID_DEVIATIONS,
    sections=("hybrid",),
    scales={
        "cpu": {
            "fixed": {"d_model": 32, "seq_len": 32, "val_seq_len": 32, "n_steps": 600, "eval_every": 75,
                      "eval_batches": 8, "case_eval_per_case": 200},
            "nuisance": {"learning_rate": tuple(0.3**k for k in (3, 4, 5, 6))},
            "seeds": (0, 1, 2),
            "deviations": HYBRID_DEVIATIONS + (
                "cpu scale: d = 32, N = 32, 600 steps instead of 3200 (the smallest budget at which the k = 0 stack "
                "reaches >= 90% on cases: 97.4% at lr 2.4e-3, against 55.1% at 400 steps; study yun2020.budget), "
                "an evaluation every 75 steps, 4 learning rates (0.3^3 .. 0.3^6) instead of 10, 3 seeds "
                "instead of 5, 8 validation batches and 200 examples per case.",),
        },
        "smoke": {
            "fixed": {"d_model": 8, "n_heads": 2, "seq_len": 8, "val_seq_len": 8, "batch_size": 4,
                      "n_steps": 20, "eval_every": 10, "eval_batches": 2, "case_eval_per_case": 4,
                      "conv_width": 5},
            "nuisance": {"learning_rate": (0.3**3, 0.3**6)},
            "scientific": {"task": ("cases", "mode"),
                           "conv_layers": conv_layers(0, 2, 4)},
            "seeds": (0, 1),
            "deviations": HYBRID_DEVIATIONS + ("smoke scale: a few steps on tiny inputs; tests only.",),
        },
    },
)


#: The hybrid question where the stacks are further trained than at the hybrid's cpu scale.
HYBRID_LONG = Study(
    name="yun2020.hybrid_long",
    goal="Does yun2020.hybrid's cpu-scale answer (600 steps: every convolution layer costs accuracy) hold where "
         "the stacks are further trained: 1600 steps, at which the k = 0 stack reaches >= 99% on cases at three "
         "of the four learning rates (yun2020.budget)?",
    scientific={"task": ("cases", "mode"),
                "conv_layers": conv_layers(0, 1, 2)},
    nuisance={"learning_rate": tuple(0.3**k for k in (4, 5, 6))},
    fixed={**HYBRID.at_scale("cpu").fixed, "n_steps": 1600, "eval_every": 200},
    seeds=(0, 1, 2),
    plot=HYBRID.plot,
    # the hybrid's observations on the stacks it trains (no k = 3, 4 here)
    findings=(HYBRID_FINDINGS[0], HYBRID_FINDINGS[1],
              HYBRID_FINDINGS[3].replace(versus_where={"conv_layers": (1, 2)})),
    deviations=HYBRID_DEVIATIONS + (
        "Not a paper scale: d = 32, N = 32 as the hybrid's cpu scale but 1600 steps (an evaluation every 200), "
        "k = 0..2 only, and the three learning rates that train at all (0.3^4 .. 0.3^6; 0.3^3 learns nothing at "
        "any budget in yun2020.budget).",),
    sections=("hybrid",),
    scales={"smoke": {**HYBRID.scales["smoke"], "nuisance": {"learning_rate": (0.3**4,)},
                      "scientific": {"task": ("cases", "mode"),
                                     "conv_layers": conv_layers(0, 2)}}},
)

#: Step budgets for the all-attention stack, each evaluated 8 times over its run.
BUDGETS = Linked(options={n: {"n_steps": n, "eval_every": n // 8} for n in (400, 600, 800, 1600, 3200)})

BUDGET = Study(
    name="yun2020.budget",
    tasks=("cases",),
    goal="At the cpu scale of yun2020.hybrid (d = 32, N = 32), what is the smallest step budget at which the "
         "all-attention stack (k = 0) reaches >= 90% best mean validation accuracy on cases, so that the hybrid "
         "question is asked of trained stacks?",
    scientific={"budget": BUDGETS},
    nuisance={"learning_rate": tuple(0.3**k for k in (3, 4, 5, 6))},
    fixed={"architecture": "BERT", "n_layers": N_LAYERS, "mixer_stack": hybrid_stack(0), "d_model": 32,
           "n_heads": 4, "seq_len": 32, "val_seq_len": 32, "batch_size": 32, "eval_batches": 8,
           "case_eval_per_case": 200},
    seeds=(0, 1, 2),
    # One panel per budget, so that the finding can name budgets.
    plot=Plot(panel="budget", x="task", y="learning_rate"),
    # The answer the hybrid study's cpu scale rests on (n_steps = 600); a rerun that breaks it says so (exit 3).
    findings=(Finding(description="600 steps is the smallest budget at which the all-attention stack (k = 0) "
                      "reaches >= 90% best mean validation accuracy on cases; at 400 it stays below",
                      below={"400": 0.9}, above={"600": 0.9},
                      chosen=("90%: the level the hybrid study's cpu scale asks of its all-attention stack",
                              "400 and 600 steps: the budgets this search tried (not a paper number)")),),
    deviations=HYBRID_DEVIATIONS + (
        "Not a paper experiment: the budget search behind the hybrid study's cpu scale; k = 0 only, 8 "
        "evaluations per run (every n_steps / 8 steps), the linear decay spans each budget.",),
    scales={"smoke": {"scientific": {"budget": Linked(options={40: {"n_steps": 40, "eval_every": 20}})},
                      "fixed": {"d_model": 8, "n_heads": 2, "seq_len": 8, "val_seq_len": 8, "batch_size": 4,
                                "eval_batches": 2, "case_eval_per_case": 4},
                      "nuisance": {"learning_rate": (0.3**3,)}, "seeds": (0,)}},
)


#: Sec. 5.3's explanation, read from the probes (docs/results.md, "Probe columns") of the all-attention stack at each
#: cell's checkpoint (its best validation evaluation), 8 validation sequences of N = 32. "Broadly": as broad as
#: attention spread evenly over half of the sequence, entropy >= log 16 nats (the project's number; the whole sequence,
#: log 32); "the first few" read as the first of L = 4.
BREADTH_QUOTE = ('Sec. 5.3: "One explanation we have is that the first few attention layers tend to attend broadly to '
                 'the whole sequence (as empirically observed in (Clark et al., 2019)), and the cheaper convolution '
                 'layers can perform this job more efficiently."')
BROADEST_HEAD_OF_LAYER_1 = "max(" + ", ".join(f"probe_entropy_l1_h{h}" for h in range(1, 5)) + ")"
BREADTH = Study(
    name="yun2020.breadth",
    goal="Does the first attention layer of the all-attention stack attend broadly (Yun et al. 2020, Sec. 5.3's "
         "explanation of why convolution layers can replace the first few), and more broadly than the last layer?",
    scientific={"task": ("cases", "mode"), "conv_layers": conv_layers(0)},
    nuisance={"learning_rate": (0.3**5,)},
    fixed={**HYBRID.at_scale("cpu").fixed, "n_steps": 1600, "eval_every": 200, "probes": True},
    seeds=(0, 1, 2),
    plot=HYBRID.plot,
    findings=(
        Finding(description="Sec. 5.3: the first attention layer attends broadly: its broadest head's attention "
                            "entropy is at least log 16 nats (as broad as even attention over half of the 32 "
                            "positions; the project's number) on each task",
                quote=BREADTH_QUOTE, metric=BROADEST_HEAD_OF_LAYER_1,
                above={"cases": math.log(16), "mode": math.log(16)},
                chosen=("log 16 nats: 'broadly' read as even attention over half of the 32 positions",
                        "layer 1 of L = 4: 'the first few attention layers' read as the first")),
        Finding(description="Sec. 5.3: the first layer attends more broadly than the last: head 1's entropy in layer "
                            "1 above head 1's in layer 4 (heads are exchangeable: one pair, drawn blind) on each task",
                quote=BREADTH_QUOTE, metric="probe_entropy_l1_h1 - probe_entropy_l4_h1",
                above={"cases": 0.0, "mode": 0.0},
                chosen=("layer 4 of L = 4: the last layer as the contrast to 'the first few'",
                        "head 1: one pair of heads, drawn blind (heads are exchangeable)")),
    ),
    deviations=HYBRID_DEVIATIONS + (
        "Not a paper experiment (the paper cites Clark et al. 2019 for it, on BERT-base and natural language): the "
        "all-attention stack of yun2020.hybrid_long (d = 32, N = 32, 1600 steps) at its best learning rate "
        "(2.4e-3), probes on.",),
    sections=("hybrid",),
    scales={"smoke": {**HYBRID.scales["smoke"], "nuisance": {"learning_rate": (0.3**4,)},
                      "scientific": {"task": ("cases", "mode"), "conv_layers": conv_layers(0)}}},
)


#: Yun et al.'s two theory items that show without training (Sec. 3.1, App. B), measured on the registry's average and
#: softmax attention mixers as initialised (task ``token_mixing``, trainables/pooling_scale/mixing.py). The logit
#: scales, lengths and bounds are the project's choice (the paper states limits, not numbers).
_AVERAGE_QUOTE = ('Sec. 3.1: "At the first thought, we can consider getting a contextual mapping by simply averaging '
                  'all the tokens [...] However, if there are multiple words that are different, it is not guaranteed '
                  'that the average will be different."')
_LEMMA6_QUOTE = ('Sec. 1: "the attention layers can compute contextual mappings, where each unique context is '
                 'mapped to a unique vector (Lemma 6)."')
_HARDMAX_QUOTE = ('App. B (proof details of Theorem 2): "Note that the softmax operator on a matrix can be made '
                  'arbitrarily close to hardmax by scaling up [its argument]."')
THEORY_FINDINGS = (
    Finding(description="Sec. 3.1: averaging is not a contextual mapping (Definition 3.1, property 1): average "
                        "attention gives every token of a sequence the same output (one distinct output, a share 1/N): "
                        "the share of tokens whose output is another token's is at least 0.99, at every N and logit "
                        "scale",
            quote=_AVERAGE_QUOTE, metric="token_collision", statistic="worst", above={"average": 0.99},
            chosen=("0.99: 'not guaranteed to be different' read as (nearly) every token colliding",
                    "N and logit scales: the measurement's grid (the paper states no numbers)")),
    Finding(description="Sec. 1 / Lemma 6, the contrast: one softmax attention layer as initialised (logit scale 1) "
                        "maps the tokens of a context to distinct vectors: at most 0.01 of the tokens share an output, "
                        "at every N",
            quote=_LEMMA6_QUOTE, metric="token_collision", statistic="best", where={"logit_scale": (1.0,)},
            below={"softmax": 0.01},
            chosen=("0.01: 'unique vector' read as at most 1% of tokens sharing an output",
                    "logit scale 1: attention as initialised, the contrast the project draws")),
    Finding(description="Sec. 3.1: with two words changed so that their sum stays, average attention gives every "
                        "unchanged token the same output in both contexts (Definition 3.1, property 2 fails): a "
                        "collision share of at least 0.99 at every N and logit scale",
            quote=_AVERAGE_QUOTE, metric="context_collision", statistic="worst", above={"average": 0.99},
            chosen=("0.99: property 2's failure read as (nearly) every unchanged token colliding",
                    "N and logit scales: the measurement's grid (the paper states no numbers)")),
    Finding(description="Sec. 1 / Lemma 6, the contrast: softmax attention as initialised (logit scale 1) tells the "
                        "two contexts apart: a collision share of at most 0.01 at every N",
            quote=_LEMMA6_QUOTE, metric="context_collision", statistic="best", where={"logit_scale": (1.0,)},
            below={"softmax": 0.01},
            chosen=("0.01: 'unique vector' read as at most 1% of tokens sharing an output",
                    "logit scale 1: attention as initialised, the contrast the project draws")),
    Finding(description="App. B: softmax approaches hardmax as its logits are scaled up: at logit scale 1000 (the "
                        "project's choice) a query's largest attention weight is at least 0.99 on average (total "
                        "variation distance to the argmax one-hot at most 0.01), at every N",
            quote=_HARDMAX_QUOTE, metric="max_weight", statistic="worst", where={"logit_scale": (1000.0,)},
            above={"softmax": 0.99},
            chosen=("logit scale 1000: 'scaling up' read as a factor of 1000",
                    "0.99: 'arbitrarily close to hardmax' read as a largest weight of at least 0.99")),
    Finding(description="App. B: ... which the scale does, not the initialisation: at logit scale 1 softmax attention "
                        "is far from hardmax, its largest weight at most 0.5 on average at every N",
            quote=_HARDMAX_QUOTE, metric="max_weight", statistic="best", where={"logit_scale": (1.0,)},
            below={"softmax": 0.5},
            chosen=("0.5: 'far from hardmax' read as a largest weight of at most one half",
                    "logit scale 1: attention as initialised")),
)

THEORY = Study(
    name="yun2020.theory", tasks=("token_mixing",),
    goal="Without training: is average attention a contextual mapping (does it give the tokens of a sequence, or a "
         "token in two contexts with the same average, different outputs), and does softmax attention approach "
         "hardmax as its logits are scaled up (Yun et al. 2020, Sec. 3.1 and App. B)?",
    scientific={"pooling": ("average", "softmax"), "seq_len": (4, 16, 64),
                "logit_scale": (1.0, 10.0, 100.0, 1000.0)},
    fixed={"d_head": 128, "n_vectors": 4096},
    # 5 seeds (each its own draws and initialisation): a finding's interval needs seed variation
    seeds=(0, 1, 2, 3, 4), metric="max_weight",
    plot=Plot(panel="pooling", x="logit_scale", y="seq_len"), findings=THEORY_FINDINGS,
    deviations=(
        "Not a paper experiment: the paper proves both items; here they are measured on random N(0, I) tokens "
        "through the registry's mixers as initialised (one head, d = 128), nothing trained.",
        "The logit scales (1 .. 1000), the lengths N = 4, 16, 64 and the bounds (0.99 / 0.01 collision shares, "
        "0.99 / 0.5 weights) are the project's choice; the paper states limits, not numbers.",
        "The second context changes two tokens by +delta and -delta (their average stays): the paper's 'multiple "
        "words that are different' in its smallest form.",),
    scales={"smoke": {"scientific": {"pooling": ("average", "softmax"), "seq_len": (4, 16),
                                     "logit_scale": (1.0, 1000.0)},
                      "fixed": {"n_vectors": 256}, "seeds": (0, 1)}},
)


STUDIES = (HYBRID, HYBRID_LONG, BUDGET, BREADTH, THEORY, MIXERS, EQUIVARIANCE)
