"""The observations Richter & Wattenhofer 2020 make about pooling at initialisation, before any training: Fig. 1's
output scale against the sequence length (App. B's measurement) and Sec. 3's share of context in a layer's e^i (the
MTE's and NON's answers to it), as the findings of ``richter2020.fig1`` and ``richter2020.context_share``. The
thresholds are argued as in :mod:`search_spaces.richter2020_findings`; each finding names its own (``chosen``).
"""

from __future__ import annotations

from search_spaces import Finding

#: Fig. 1 (App. B's measurement at initialisation, no training): ``output_std`` is the standard deviation of a
#: pooling's output values, in units of its inputs' (q, k, v ~ N(0, I), so 1.0 prints as 100%); a finding compares it
#: at two sequence lengths N of the grid (16 and 1024; 5 seeds, one draw of 16,384 vectors each). Expected values:
#: sum sqrt(N) (4 and 32), mean 1/sqrt(N) (0.25 and 0.031), softmax 1.45 and 1.64 times the mean's (its logits have
#: std 1 here), max 0.54 and 0.35, normalized 1 by construction, NON 1 in expectation (logits of variance 1 times
#: values of variance 1, summed over N and scaled by 1 / sqrt(N)).
_FIG1_QUOTE = ('Fig. 1: "The standard deviation (σ) and norm of a pooling output is dependent on the sequence length N '
               '(x-axis) and the pooling method, if the output is not normalized."')
FIG1: tuple[Finding, ...] = (
    Finding(description="Fig. 1 (caption, App. B): an unnormalised pooling's output scale depends on N: sum's output "
                        "std at N = 1024 exceeds its std at N = 16 by 16 times the inputs' (sqrt(N): 32 against 4) ...",
            quote=_FIG1_QUOTE, where={"seq_len": (1024,)}, versus_where={"seq_len": (16,)},
            ahead={"sum": ("sum",)}, margin=16.0,
            chosen=("16 (of the inputs' std): sqrt(N) gives 28; 'depends on N' read as more than half of that",)),
    Finding(description="Fig. 1 (caption, App. B): ... while mean's, softmax attention's and max's fall: at N = 16 "
                        "each exceeds its value at N = 1024 by 0.1 of the inputs' std",
            quote=_FIG1_QUOTE, where={"seq_len": (16,)}, versus_where={"seq_len": (1024,)},
            ahead={p: (p,) for p in ("mean", "softmax", "max")}, margin=0.1,
            chosen=("0.1 of the inputs' std: 'depends on N' read as a fall of a tenth of the inputs' scale",)),
    Finding(description="Sec. 3 / Fig. 1: softmax attention at initialisation scales like mean pooling: at N = 1024 "
                        "both outputs' std is below 0.1 of the inputs' (mean: 1/sqrt(N) = 0.031)",
            quote='Fig. 1: "Softmax attention outputs scale similar to mean pooling at initialization, i.e., '
                  'Transformers focus more on local information in longer sequences." Sec. 3: "This yields attention '
                  'to be close to mean aggregation"',
            where={"seq_len": (1024,)}, below={"softmax": 0.1, "mean": 0.1},
            chosen=("0.1: 'scales like mean pooling' read as below a tenth of the inputs' std at N = 1024",)),
    Finding(description="Fig. 1 (caption), App. B, App. D: a normalised output does not depend on N: the normalized "
                        "pooling's output std is at least 0.99 at every N ...",
            quote='App. D: "Note that this change removes the bias towards local information discussed in the end of '
                  'Section 3." App. B: "such a normalization can be applied to any of the aggregation methods to get '
                  'qualitatively similar results."',
            statistic="worst", above={"normalized": 0.99},
            chosen=("0.99: 'does not depend on N' read as within 1% of 1 at every N",)),
    Finding(description="Fig. 1 (caption), App. B, App. D: ... and at most 1.01 at every N",
            quote='App. D: "Note that this change removes the bias towards local information discussed in the end of '
                  'Section 3."',
            statistic="best", below={"normalized": 1.01},
            chosen=("1.01: 'does not depend on N' read as within 1% of 1 at every N",)),
    Finding(description="Sec. 4 (NON): NON's weighting gives a contribution of context independent of N at "
                        "initialisation: its output std is at least 0.95 of the inputs' at every N ...",
            quote='Sec. 4: "We also replaced the layer normalization after the attention weighting here through a '
                  'simple scaling factor 1/sqrt(N). Note that this also yields an in expectation constant contribution '
                  'of context at initialization, independent of sequence length."',
            statistic="worst", above={"non": 0.95},
            chosen=("0.95: 'independent of N' read as within 5% of 1 at every N (NON is 1 only in expectation)",)),
    Finding(description="Sec. 4 (NON): ... and at most 1.05 at every N",
            quote='Sec. 4: "Note that this also yields an in expectation constant contribution of context at '
                  'initialization, independent of sequence length."',
            statistic="best", below={"non": 1.05},
            chosen=("1.05: 'independent of N' read as within 5% of 1 at every N (NON is 1 only in expectation)",)),
)

#: Sec. 3's "scale similar to mean pooling", read at a short, the paper's and a long N of the grid.
SIMILAR_SCALE_AT = (16, 128, 1024)


def _softmax_like_mean(size: int) -> Finding:
    return Finding(description=f"Sec. 3 / Fig. 1: softmax attention's outputs scale similar to mean pooling's at "
                               f"initialisation: at N = {size} their std is within a factor of 2 of the mean's, both "
                               f"ways (log10 level within 0.3)",
                   quote='Fig. 1: "Softmax attention outputs scale similar to mean pooling at initialization, i.e., '
                         'Transformers focus more on local information in longer sequences."',
                   metric="output_std_log10", where={"seq_len": (size,)}, level_with={"softmax": ("mean",)},
                   equivalence_margin=0.3,
                   chosen=("0.3 log10 (a factor of 2): 'scale similar' read as level within a factor of 2 (at N = "
                           "1024 max lies 11 times above the mean's, NON 32 times, sum 1,000 times)",
                           f"N = {size}: one of N = {', '.join(map(str, SIMILAR_SCALE_AT))} (a short N, the "
                           f"paper's N = 128, a long N) read for 'at initialization'"))


_ANY_AGGREGATION = ('App. B: "Note that such a normalization can be applied to any of the aggregation methods to get '
                    'qualitatively similar results."')
#: App. B's normalisation applied to the other aggregations (the sum's is ``normalized``, findings #4-#5).
NORMALISED = ("normalized_mean", "normalized_max", "normalized_softmax")

FIG1 = (*FIG1, *(_softmax_like_mean(size) for size in SIMILAR_SCALE_AT),
        Finding(description="App. B: the normalisation applied to any aggregation gives the same result as to the sum: "
                            "the normalised mean's, max's and softmax attention's output std is at least 0.99 at every "
                            "N ...",
                quote=_ANY_AGGREGATION, statistic="worst", above=dict.fromkeys(NORMALISED, 0.99),
                chosen=("0.99: 'qualitatively similar results' read as the normalised sum's: within 1% of 1 at every "
                        "N",)),
        Finding(description="App. B: ... and at most 1.01 at every N",
                quote=_ANY_AGGREGATION, statistic="best", below=dict.fromkeys(NORMALISED, 1.01),
                chosen=("1.01: 'qualitatively similar results' read as the normalised sum's: within 1% of 1 at every "
                        "N",)))

_SEC3_QUOTE = ('Sec. 3: "This means that the fraction of context information in e^i is dependent on the sequence '
               'length and is smaller for longer sequences! Specifically, at initialization, Transformers focus more '
               'on local information in longer sequence than in shorter sequences."')
_APPD_QUOTE = ('Sec. 4: "These modifications remove the dependence on sequence length"; App. D: "Note that this change '
               'removes the bias towards local information discussed in the end of Section 3."')

#: Sec. 3's share of context in a layer's e^i at initialisation, and the MTE's and NON's answers to it
#: (``richter2020.context_share``: the project's first layer of each architecture, docs/richter2020.md).
CONTEXT_SHARE = (
    Finding(description="Sec. 3: at initialisation BERT's share of context in e^i is smaller for longer sequences: "
                        "at N = 16 at least 10 times its share at N = 1024 (log10 ahead by 1; mean-like attention "
                        "gives 1/N: 64 times)",
            quote=_SEC3_QUOTE, metric="context_share_log10", where={"seq_len": (16,)},
            versus_where={"seq_len": (1024,)}, ahead={"BERT": ("BERT",)}, margin=1.0,
            chosen=("1 decade: 'smaller for longer sequences' read as a factor of 10 from N = 16 to N = 1024",)),
    Finding(description="Sec. 3 (footnote 2): a typical initialisation favours the residual connection, i.e. local "
                        "information: BERT's share of context is below 1% at every N",
            quote='Sec. 3: "the contribution of context information depends on the initialization of W and b, where a '
                  'typical initialization in language models favors the residual connection, i.e., local '
                  'information."',
            statistic="best", below={"BERT": 0.01},
            chosen=("1%: 'favours the residual' read as a share of context below 1%",)),
    Finding(description="App. D: the MTE's normalisation removes the bias towards local information: at N = 1024 its "
                        "share of context exceeds BERT's by 10 points",
            quote=_APPD_QUOTE, where={"seq_len": (1024,)}, ahead={"MTE": ("BERT",)}, margin=0.1,
            chosen=("10 points: 'removes the bias' read as a 10-point lead over BERT at N = 1024",)),
    Finding(description="Sec. 4, App. D: ... and removes the dependence on N: the MTE's share of context at N = 16 "
                        "exceeds its share at N = 1024 by at most 5 points",
            quote=_APPD_QUOTE, where={"seq_len": (16,)}, versus_where={"seq_len": (1024,)},
            not_ahead={"MTE": ("MTE",)}, equivalence_margin=0.05,
            chosen=("5 points: 'removes the dependence' read as at most a 5-point fall from N = 16 to N = 1024",)),
    Finding(description="Sec. 4 (NON): the 1/sqrt(N) scaling gives a contribution of context independent of N: NON's "
                        "share at N = 16 and at N = 1024 within a factor of 2 of each other (log10 level within 0.3)",
            quote='Sec. 4: "Note that this also yields an in expectation constant contribution of context at '
                  'initialization, independent of sequence length."',
            metric="context_share_log10", where={"seq_len": (16,)}, versus_where={"seq_len": (1024,)},
            level_with={"NON": ("NON",)}, equivalence_margin=0.3,
            chosen=("0.3 log10 (a factor of 2): 'independent of N' read as level within a factor of 2",)),
)
