"""The observations Richter & Wattenhofer 2020 state in their appendices (App. D, E, G.1, G.3, H), as findings of
the studies of Figs. 9, 13, 15, 16 and Tables 2-4; the thresholds are argued in
:mod:`search_spaces.richter2020_findings` (the main text's findings) and docs/richter2020.md lists every
observation, its finding or why it has none, and the verdicts.
"""

from __future__ import annotations

from collections.abc import Mapping

from search_spaces import Finding
from search_spaces.richter2020_findings import ALL, FIRST_OVER_ARGMIN, HIGH_RATES, LOW_RATES, MODE_BASE_RATE, PAPER


def _lr(k: int) -> float:
    """The release's learning rate 0.3**k."""
    return 0.3**k


#: "similar", "no big impact", "not significant": at most 2 points apart (the conventions of richter2020_findings)
SIMILAR = 0.02
ORIGINAL_NORM = ("BERT", "- warm up", "- grad. clip")
FIG9 = (
    Finding(description="Fig. 9 / Table 1 (App. D): the best validation G of every step from BERT to MTE is within "
                        "2 points of BERT's",
            quote='App. D: "Apart from the performance landscape changes just mentioned, the best hyper-parameter '
                  'accuracies remain similar throughout all modifications, cf. Table 1."',
            metric="val_accuracy",
            ahead={**{a: ("BERT",) for a in ("- warm up", "- grad. clip", "+ normalize", "+ GELU")},
                   "BERT": ("- warm up", "- grad. clip", "+ normalize", "+ GELU")},
            margin=-SIMILAR, scales=PAPER,
            chosen=(f"{100 * SIMILAR:.0f} points: 'remain similar' read as within 2 points either way (Table 1's "
                    f"five lie within 0.8)",)),
    Finding(description="Fig. 9 (App. D): without warm-up BERT learns less at high learning rates (>= 0.027): mean "
                        "training G there at most BERT's",
            quote='App. D: "Here we see that too high learning rates learn even less without learning rate warm up '
                  'in the BERT architecture, hinting at a necessity for learning rate warm up for the original '
                  'architecture."',
            metric="train_accuracy", where={"learning_rate": {"min": _lr(3)}}, statistic="mean",
            ahead={"BERT": ("- warm up",)}, scales=PAPER,
            chosen=("margin 0: 'learn even less' read as any deficit beyond seed noise",
                    "rates >= 0.027: 'too high learning rates' read as the three largest rates")),
    Finding(description="Fig. 9 (App. D): at high learning rates (>= 0.09) the original normalisation learns the "
                        "first case 20 points better than argmin somewhere, the moved LayerNorm (+ normalize, "
                        "+ GELU) nowhere by more than 10",
            quote='App. D: "models with the original normalization focus the (local) first-case, while models with '
                  'our normalization focus on the (majority) argmin-case."',
            metric=FIRST_OVER_ARGMIN, where=HIGH_RATES, above=dict.fromkeys(ORIGINAL_NORM, 0.2),
            below={"+ normalize": 0.1, "+ GELU": 0.1}, scales=PAPER,
            chosen=("20 points: 'focus' read as a 20-point lead; 10 points: 'no focus' read as at most 10",
                    "rates >= 0.09: 'too high' read as the two largest rates of the grid")),
    Finding(description="Fig. 9 (App. D): ... and there the moved LayerNorm focuses the majority argmin case: argmin "
                        "20 points above first somewhere at rates >= 0.09",
            quote='App. D: "models with our normalization focus on the (majority) argmin-case."',
            metric="train_argmin_accuracy - train_first_accuracy", where=HIGH_RATES,
            above={"+ normalize": 0.2, "+ GELU": 0.2}, scales=PAPER,
            chosen=("20 points: 'focus' read as a 20-point lead",
                    "rates >= 0.09: the two largest rates of the grid")),
    Finding(description="Fig. 9 (App. D): removing gradient clipping has no big impact: the best validation G of "
                        "'- grad. clip' is within 2 points of '- warm up' (the step before it), both ways",
            quote='App. D: "The third column (- grad. clip) reports the results if we further remove gradient clipping '
                  'from the training schedule. This does not seem to have a big impact in our setup."',
            metric="val_accuracy", ahead={"- grad. clip": ("- warm up",), "- warm up": ("- grad. clip",)},
            margin=-SIMILAR, scales=PAPER,
            chosen=(f"{100 * SIMILAR:.0f} points: 'no big impact' read as within 2 points either way",)),
    Finding(description="Fig. 9 (App. D): ... nor on the landscape: the mean training G over the grid of "
                        "'- grad. clip' is within 5 points of '- warm up', both ways",
            quote='App. D: "This does not seem to have a big impact in our setup."',
            metric="train_accuracy", statistic="mean",
            ahead={"- grad. clip": ("- warm up",), "- warm up": ("- grad. clip",)}, margin=-0.05, scales=PAPER,
            chosen=("5 points: 'no big impact' on a mean over the grid read as within 5 points either way",)),
)

FIG13 = (
    Finding(description="Fig. 13 (App. G.1, obs. 1): smaller batches need smaller learning rates - at rates >= 8.1e-3 "
                        "every architecture's best training G at batch >= 64 leads its best at batch <= 2 by 10 points",
            quote='App. G.1: "(1) smaller batches require a smaller learning rate, supporting our argument that '
                  'hyper-parameters should not be optimized independent of each other."',
            metric="train_accuracy", where={"learning_rate": {"min": _lr(4)}, "batch_size": {"min": 64}},
            versus_where={"learning_rate": {"min": _lr(4)}, "batch_size": {"max": 2}},
            ahead={a: (a,) for a in ALL}, margin=0.1, scales=PAPER,
            chosen=("10 points: 'require a smaller learning rate' read as a 10-point lead across batch sizes",
                    "rates >= 8.1e-3, batches >= 64 against <= 2: the corners the crossing shows in")),
    Finding(description="Fig. 13 (App. G.1, obs. 1): ... the crossing's other side: at rates <= 6.6e-5 every "
                        "architecture's best training G at batch <= 2 leads its best at batch >= 64 by 10 points",
            quote='App. G.1: "(1) smaller batches require a smaller learning rate."',
            metric="train_accuracy", where={**LOW_RATES, "batch_size": {"max": 2}},
            versus_where={**LOW_RATES, "batch_size": {"min": 64}},
            ahead={a: (a,) for a in ALL}, margin=0.1, scales=PAPER,
            chosen=("10 points: the crossing's other side read as a 10-point lead across batch sizes",
                    "rates <= 6.6e-5: the three smallest rates of the grid")),
    Finding(description="Fig. 13 (App. G.1, obs. 2): BERT's first-case focus at high rates (>= 0.09) is stronger at "
                        "batch <= 4 than at batch >= 32 (mean first-minus-argmin case accuracy), by more than seed "
                        "noise",
            quote='App. G.1: "(2) The focus of BERT on the first-case when the learning rate is too high is amplified '
                  'in smaller batches."',
            metric=FIRST_OVER_ARGMIN, statistic="mean", where={**HIGH_RATES, "batch_size": {"max": 4}},
            versus_where={**HIGH_RATES, "batch_size": {"min": 32}}, ahead={"BERT": ("BERT",)}, scales=PAPER,
            chosen=("margin 0: 'stronger' read as a lead beyond seed noise",
                    "batch <= 4 against >= 32, rates >= 0.09: the sizes and rates the figure contrasts")),
)

#: The validation cases of the first-token task (N = 64): all three learned at one evaluation, each at 50% or more.
#: A model that learns two of the three cases scores about 72% overall (argmin 47.4% + first 25.1% of the examples)
#: and fails this; "performs well" read as overall accuracy >= 50% would call it well.
VAL_ALL_CASES = "min(val_argmin_accuracy, val_first_accuracy, val_argmax_accuracy)"
#: "A wide range of depths": L = 1 ... 16 (16x), five of Fig. 15's seven depths (our reading; the figure's pixels are
#: not in the text).
WIDE_DEPTHS = (1, 2, 4, 8, 16)


def _nap_performs_well_at(depth: int) -> Finding:
    return Finding(description=f"Fig. 15 (App. G.3, obs. 2): ... and performs well on a wide range of depths: at L = "
                               f"{depth} NAP learns all three cases (each >= 50% at one evaluation, validation)",
                   quote='App. G.3: "(2) The NAP architecture achieves a higher best mean accuracy and performs well '
                         'on a wide range of depths."',
                   metric=VAL_ALL_CASES, where={"n_layers": (depth,)}, above={"NAP": 0.5}, scales=PAPER,
                   chosen=("50%: 'learns' a case read as at least half its examples, all three at one evaluation",
                           f"L = {depth}: one of the depths read as 'a wide range' (WIDE_DEPTHS)"))


FIG15 = (
    Finding(description="Fig. 15 (App. G.3, obs. 1): BERT does better at L = 4 than at L = 2 (best validation G "
                        "higher by more than seed noise) ...",
            quote='App. G.3: "(1) The BERT architecture does seem to perform better when the number of Transformer '
                  'layers is increased to L = 4."',
            metric="val_accuracy", where={"n_layers": (4,)}, versus_where={"n_layers": (2,)},
            ahead={"BERT": ("BERT",)}, scales=PAPER,
            chosen=("margin 0: 'better' read as a lead beyond seed noise",)),
    Finding(description="Fig. 15 (App. G.3, obs. 1): ... and degrades deeper: its best at L = 4 leads its best at "
                        "L >= 32 by 5 points",
            quote='App. G.3: "However, the performance degrades if we further increase the depth."',
            metric="val_accuracy", where={"n_layers": (4,)}, versus_where={"n_layers": {"min": 32}},
            ahead={"BERT": ("BERT",)}, margin=0.05, scales=PAPER,
            chosen=("5 points: 'degrades' read as a 5-point fall",
                    "L >= 32: 'deeper' read as the grid's two deepest")),
    Finding(description="Fig. 15 (App. G.3, obs. 2): NAP reaches a higher best validation G than BERT, by more than "
                        "seed noise ...",
            quote='App. G.3: "(2) The NAP architecture achieves a higher best mean accuracy and performs well on a '
                  'wide range of depths."',
            metric="val_accuracy", ahead={"NAP": ("BERT",)}, scales=PAPER,
            chosen=("margin 0: 'better' read as a lead beyond seed noise",)),
    *(_nap_performs_well_at(depth) for depth in WIDE_DEPTHS),
    Finding(description="Fig. 15 (App. G.3, obs. 3): max pooling performs well (all three cases >= 50% at one "
                        "evaluation, validation) on the largest share of the depths x rates grid, ahead of every other "
                        "architecture by more than seed noise",
            quote='App. G.3: "(3) The max architecture performs well on the biggest range of hyperparameters."',
            metric=VAL_ALL_CASES, statistic="share", level=0.5,
            ahead={"max": ("BERT", "MTE", "NAP", "NON", "sum")}, scales=PAPER,
            chosen=("50%: 'learns' a case read as at least half its examples, all three at one evaluation",
                    "margin 0: 'the largest share' read as a share ahead beyond seed noise")),
    Finding(description="Fig. 15 (App. G.3, obs. 1): ... and degrades with any further depth: its best at L = 4 leads "
                        "its best at every deeper depth (L >= 8), by more than seed noise",
            quote='App. G.3: "However, the performance degrades if we further increase the depth."',
            metric="val_accuracy", where={"n_layers": (4,)}, versus_where={"n_layers": {"min": 8}},
            ahead={"BERT": ("BERT",)}, scales=PAPER,
            chosen=("margin 0: 'degrades' read as a fall beyond seed noise",
                    "L >= 8: 'further increase the depth' read as every depth of the grid beyond L = 4 (the best of "
                    "them below L = 4's)")),
)

#: "Fails" at mode finding: at most 5 points above the base rate (the paper's max: 1.1-2.9 points above it).
ABOVE_BASE = 0.05
SMALL_VOCABULARIES = (2, 4, 8)  # Table 5: every architecture but max at 99.2% or more


def _max_fails(size: int) -> Finding:
    return Finding(description=f"Fig. 16 (App. H, obs. 1): max pooling fails mode finding at S = {size}: best "
                               f"training G at most {100 * ABOVE_BASE:g} points above the majority-class base rate "
                               f"({100 * MODE_BASE_RATE[size]:.1f}%)",
                   quote='App. H: "(1) max completely fails to learn in any of the vocabulary sizes. Note that the '
                         'shading to the left merely corresponds to the majority class base rate."',
                   metric="train_accuracy", where={"vocab_size": (size,)},
                   below={"max": MODE_BASE_RATE[size] + ABOVE_BASE},
                   chosen=(f"{100 * ABOVE_BASE:g} points over the base rate: 'fails' read as near the "
                           f"majority-class rate",))


def _small_vocabulary(size: int) -> Finding:
    return Finding(description=f"Fig. 16 / Table 5 (App. H, obs. 3): every architecture but max learns mode finding "
                               f"at the small vocabulary S = {size} (best training G >= 95%)",
                   quote='App. H: "(3) While all models learn the task well on small vocabularies, NAP outperforms '
                         'all other approaches significantly when S gets larger then the training sequence length."',
                   metric="train_accuracy", where={"vocab_size": (size,)},
                   above=dict.fromkeys(("BERT", "MTE", "NAP", "NON", "sum"), 0.95), scales=PAPER,
                   chosen=("95%: 'learns' the small vocabularies read as G >= 95% (Table 5: 99.6-100%)",))


#: Table 5's bold numbers (all NAP's): (accuracy, S). Training at S = 64 and 256, validation (N = 256) at S = 256.
TABLE5_BOLD = (("train", 64), ("train", 256), ("val", 256))
OTHERS = ("BERT", "MTE", "NON", "sum", "max")


def _table5_bold(split: str, size: int) -> Finding:
    words = {"train": "training", "val": "validation (N = 256)"}[split]
    return Finding(description=f"Table 5 (bold, App. H obs. 3): NAP is significantly best at S = {size} in "
                               f"{words} accuracy by the paper's criterion: its worst seed beats every other "
                               f"architecture's best seed (each at its best learning rate)",
                   quote='Table 5: "Bold numbers indicate a min-accuracy higher than the best max accuracy of all '
                         'other models." App. H: "(3) [...] NAP outperforms all other approaches significantly when S '
                         'gets larger then the training sequence length, cf. Table 5."',
                   metric=f"{split}_accuracy", where={"vocab_size": (size,)}, worst_beats_best={"NAP": OTHERS},
                   scales=PAPER,
                   chosen=("none: the paper's own criterion (worst seed beats best seed) at each side's best "
                           "learning rate",))


FIG16 = (
    *(_max_fails(size) for size in MODE_BASE_RATE),
    Finding(description="Fig. 16 (App. H, obs. 2): NAP struggles at S = 2: there sum learns well (training G >= "
                        "90%) at a share of the learning rates 10 points larger than NAP's",
            quote='App. H: "(2) NAP struggles when the vocabulary consists of only 2 tokens. This is expected, as the '
                  'mean subtraction in the normalization effectively removes the task relevant information (the '
                  'mode) in this case."',
            metric="train_accuracy", statistic="share", level=0.9, where={"vocab_size": (2,)},
            ahead={"sum": ("NAP",)}, margin=0.1, scales=PAPER,
            chosen=("90%: 'learns well' read as G >= 90% (the paper's white pixels)",
                    "10 points: 'struggles' read as a 10-point smaller share of the rates")),
    Finding(description="Fig. 16 (App. H, obs. 2): ... an S = 2 effect: NAP learns well (training G >= 90%) at a "
                        "share of the learning rates at S = 4 and 8 that is 10 points larger than at S = 2",
            quote='App. H: "(2) NAP struggles when the vocabulary consists of only 2 tokens."',
            metric="train_accuracy", statistic="share", level=0.9, where={"vocab_size": (4, 8)},
            versus_where={"vocab_size": (2,)}, ahead={"NAP": ("NAP",)}, margin=0.1, scales=PAPER,
            chosen=("90%: 'learns well' read as G >= 90% (the paper's white pixels)",
                    "10 points: 'an S = 2 effect' read as a 10-point larger share at S = 4 and 8")),
    Finding(description="Fig. 16 (App. H, obs. 2): ... but at S = 2 and a high enough learning rate (>= 0.027) NAP "
                        "learns it (best training G >= 90%; Table 5: 100%)",
            quote='App. H: "Note however, that for a high enough learning rate, the model learns to use the bias '
                  'parameter b introduced in Equation 1 - effectively reverting to sum pooling."',
            metric="train_accuracy", where={"vocab_size": (2,), "learning_rate": {"min": _lr(3)}},
            above={"NAP": 0.9}, scales=PAPER,
            chosen=("90%: 'learns well' read as G >= 90% (the paper's white pixels)",
                    "rates >= 0.027: 'a high enough learning rate' read as the three largest rates")),
    *(_small_vocabulary(size) for size in SMALL_VOCABULARIES),
    Finding(description="Fig. 16 / Table 5 (App. H, obs. 3): at S = 256 (> N = 128) NAP's best training G leads "
                        "every other architecture's by 5 points",
            quote='App. H: "(3) While all models learn the task well on small vocabularies, NAP outperforms all '
                  'other approaches significantly when S gets larger then the training sequence length, cf. Table 5."',
            metric="train_accuracy", where={"vocab_size": (256,)},
            ahead={"NAP": ("BERT", "MTE", "NON", "sum", "max")}, margin=0.05, scales=PAPER,
            chosen=("5 points: 'performs best' read as a 5-point lead over every other architecture",)),
    *(_table5_bold(split, size) for split, size in TABLE5_BOLD),
)



DROPOUT = ("dropout 0.0625", "dropout 0.125", "dropout 0.25", "dropout 0.5")
L2 = ("L2 0.0001", "L2 0.001", "L2 0.01", "L2 0.1")
REGULARIZED = DROPOUT + L2
#: The printed values of a table App. E counts: per architecture, split (the training and the validation rows) and kind
#: of regularisation, its best mean over the four strengths and the ten rates against the unregularised best.
SPLITS = ("train_accuracy", "val_accuracy")
AGAINST_NONE = {"dropout": (DROPOUT, ("none",)), "L2": (L2, ("none",))}
#: App. E's superscripts: the smallest strength of each kind against the three larger ones.
SMALLEST_FIRST = {"dropout": (DROPOUT[:1], DROPOUT[1:]), "L2": (L2[:1], L2[1:])}
#: "Often": more than a quarter of the values (the project's reading; the printed tables: 40 of 72 are lower).
OFTEN = 0.25
_OVERALL = ('App. E: "Overall we note that none of the architectures consistently benefits from regularization in our '
            'setup and regularization often decreases mean performance.')
_COUNTED_TABLE = ("the table's own values: App. E's 'overall' counts Tables 2-4 together; each table is its own study "
                  "here, and a count that holds in each table holds over the three")


def _regularization_does_not_help(table: int, split: str) -> Finding:
    return Finding(description=f"Table {table} (App. E): neither dropout nor L2 helps beyond seed variation: no "
                               f"architecture's best {split} G with regularisation (the best of its eight settings) "
                               f"leads its best without by more than {100 * SIMILAR:.0f} points",
                   quote='App. E: "we show empirical results supporting the intuition that L2 as well as dropout '
                         'regularization does not help in our setup ... (1) none of these improvements is significant '
                         'considering the performance variation across random seeds"',
                   metric=f"{split}_accuracy", where={"regularization": REGULARIZED},
                   versus_where={"regularization": ("none",)}, not_ahead={a: (a,) for a in ALL},
                   equivalence_margin=SIMILAR, scales=PAPER,
                   chosen=(f"{100 * SIMILAR:.0f} points: 'not significant considering the variation across seeds' "
                           f"read as a lead of at most 2 points (equivalence)",))


def _counted(compare: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]], **count: object) -> dict[str, object]:
    """A ``counted`` bound over the table's printed values: every architecture x split x kind of regularisation."""
    return {"counted": {"values": ALL, "axis": "regularization", "compare": compare, "metrics": SPLITS, **count}}


def _regularization_counted(table: int) -> tuple[Finding, ...]:
    """App. E's counting sentences on one table's 24 regularised values (``counted``: each value's lead decided at
    its share of the error)."""
    return (
        Finding(description=f"Table {table} (App. E): no architecture consistently benefits from regularisation: each "
                            f"has a value of the table (training or validation, dropout or L2) whose best with "
                            f"regularisation is no higher than its best without",
                quote=_OVERALL + '"', metric="train_accuracy",
                kinds=_counted(AGAINST_NONE, lead="at_most", margin=0.0, more_than=0.0, per_value=True), scales=PAPER,
                chosen=("'consistently benefits' read as a higher best mean in every one of the architecture's values "
                        "of the table (the paper's underline at each): 'none' as each architecture with one value not "
                        "higher (lead <= 0), shown at 1/4 of its error (a search over its four values)",
                        _COUNTED_TABLE)),
        Finding(description=f"Table {table} (App. E): regularisation often decreases mean performance: more than a "
                            f"quarter of the table's 24 regularised values lie below their unregularised value",
                quote=_OVERALL + '"', metric="train_accuracy",
                kinds=_counted(AGAINST_NONE, lead="below", margin=0.0, more_than=OFTEN), scales=PAPER,
                chosen=(f"'often' read as more than {100 * OFTEN:g}% of the values (7 of 24), each shown lower "
                        f"(lead < 0) at its share of the error", _COUNTED_TABLE)),
        Finding(description=f"Table {table} (App. E): the best performance with regularisation is most of the times "
                            f"achieved with the smallest strength: in more than half of the 24 (architecture, split, "
                            f"kind) values the smallest strength's best is at least the three larger ones' best",
                quote='App. E: "Further, we point out that the best performance with regularization is most of the '
                      'times achieved with the smallest regularization."', metric="train_accuracy",
                kinds=_counted(SMALLEST_FIRST, lead="at_least", margin=0.0, more_than=0.5), scales=PAPER,
                chosen=("'most of the times' read as more than half of the values (13 of 24), each shown (the "
                        "smallest strength's best minus the larger ones' >= 0) at its share of the error",
                        _COUNTED_TABLE)),
    )


def regularization_findings(table: int) -> tuple[Finding, ...]:
    """Table 2, 3 or 4's claims: no help, on the training and on the validation accuracy (its top and bottom rows),
    then App. E's counting sentences over the table's values."""
    return (_regularization_does_not_help(table, "train"), _regularization_does_not_help(table, "val"),
            *_regularization_counted(table))


#: NAP's bias share |b| / (|g| + |b|) (core.probe_names.PARAMETER_PROBES), the largest over the 4 heads of its 2
#: layers.
NAP_BIAS_SHARE = "max(" + ", ".join(f"probe_bias_l{layer}_h{head}" for layer in (1, 2) for head in (1, 2, 3, 4)) + ")"
_BIAS_QUOTE = ('App. H: "Note however, that for a high enough learning rate, the model learns to use the bias '
               'parameter b introduced in Equation 1 - effectively reverting to sum pooling."')
_BIAS_CHOSEN = ("the largest share over the heads of both layers: one head of sum pooling is enough to read the mode "
                "of two tokens",
                "rates >= 0.027: 'a high enough learning rate' read as the three largest rates")

#: App. H's mechanism (issue 58 item 4: a probe of the bias b), read on NAP at S = 2, 4 and 8 (study fig16_bias).
FIG16_BIAS = (
    Finding(description="Fig. 16 (App. H, obs. 2, the mechanism): at S = 2 and a high enough learning rate "
                        "(>= 0.027) NAP learns to use its bias b: its bias share |b| / (|g| + |b|) reaches 0.5 in some "
                        "head (b outweighs the normalised weights: effectively sum pooling)",
            quote=_BIAS_QUOTE, metric=NAP_BIAS_SHARE,
            where={"vocab_size": (2,), "learning_rate": {"min": _lr(3)}}, above={"NAP": 0.5},
            chosen=("0.5: 'learns to use b, effectively reverting to sum pooling' read as b at least as large as g "
                    "in some head (a share of 0 at initialisation)", *_BIAS_CHOSEN)),
    Finding(description="Fig. 16 (App. H, obs. 2, the mechanism): ... an S = 2 effect: there NAP's bias share leads "
                        "its share at S = 4 and 8 (same rates) by 0.2",
            quote=_BIAS_QUOTE + ' App. H: "(2) NAP struggles when the vocabulary consists of only 2 tokens."',
            metric=NAP_BIAS_SHARE, where={"vocab_size": (2,), "learning_rate": {"min": _lr(3)}},
            versus_where={"vocab_size": (4, 8), "learning_rate": {"min": _lr(3)}},
            ahead={"NAP": ("NAP",)}, margin=0.2,
            chosen=("0.2: 'an S = 2 effect' read as a bias share 0.2 larger than at S = 4 and 8", *_BIAS_CHOSEN)),
)
