"""Yun et al. 2020's sentences about what its layers are, measured without training (issue 58): the cheaper mixers'
cost, parameters and input dependence (Sec. 5.1, Sec. 5.3; task ``mixer_properties``,
trainables/pooling_scale/mixer_properties.py) and the permutation equivariance of Transformer blocks (App. A's Claim 1;
task ``equivariance``, trainables/pooling_scale/equivariance.py). docs/yun2020.md lists the sentences and verdicts."""

from __future__ import annotations

from search_spaces import Finding, Plot, Study

_BILINEAR_QUOTE = ('Sec. 5.1: "This layer [the bi-linear projection] advantageously incurs smaller number of matrix '
                   'multiplications as compared to the dot-product attention."')
_DRAWBACKS_QUOTE = ('Sec. 5.1: "That said, the number of parameters in this layer depend on the sequence length, '
                    'making it harder to reuse the model across tasks with different input sequence lengths. '
                    'Moreover, the weights used to compute the contextual embeddings [W_P] are independent of the '
                    'inputs [X], whereas in self-attention the weights depend on [X]."')
_CONVOLUTION_QUOTE = ('Sec. 5.1: "The first drawback can be addressed by replacing the linear projection with a '
                      'depth-wise separable convolution layer"')
_COST_QUOTE = ('Sec. 5.3: "Note that, replacing self-attention layer with [the convolution] also reduces the '
               'computational cost and the number of parameters."')
_GRID = "d = 32, 128 and N = 4, 32, 128, 256, one head: the measurement's grid (the paper states no sizes)"
_ENDS = ("N = 256 against N = 4 at d = 32: the grid's longest and shortest sequences",
         "0.5 parameters: counts are whole numbers, so 'the same count'")
_WEIGHTS = "two independent N(0, I) inputs per sequence, rows differing by more than 1e-5 of their largest weight"

MIXER_FINDINGS = (
    Finding(description="Sec. 5.1: the bilinear projection computes fewer matrix products than dot-product attention "
                        "(one forward, at the same d and N): at least one fewer at every d and N",
            quote=_BILINEAR_QUOTE, metric="matmuls_saved", statistic="worst", above={"bilinear": 1.0},
            chosen=("1 product: 'smaller number' read as at least one fewer (counts are whole numbers)", _GRID)),
    Finding(description="Sec. 5.1: ... and fewer multiply-adds in those products: at least one fewer at every d and N",
            quote=_BILINEAR_QUOTE, metric="macs_saved", statistic="worst", above={"bilinear": 1.0},
            chosen=("1 multiply-add: 'smaller' read as any saving (counts are whole numbers)", _GRID)),
    Finding(description="Sec. 5.1: the bilinear projection's parameter count depends on the sequence length (more at "
                        "N = 256 than at N = 4), dot-product attention's does not (the same count)",
            quote=_DRAWBACKS_QUOTE, metric="mixer_params", where={"seq_len": (256,), "d_head": (32,)},
            versus_where={"seq_len": (4,), "d_head": (32,)}, ahead={"bilinear": ("bilinear",)},
            level_with={"softmax": ("softmax",)}, equivalence_margin=0.5,
            chosen=(*_ENDS, "margin 0 for the bilinear's lead: 'depend on' read as any difference")),
    Finding(description="Sec. 5.1: the bilinear projection's token-mixing weights (W_P) do not depend on the input: "
                        "for two inputs at most 0.01 of its weight rows differ, at every d and N",
            quote=_DRAWBACKS_QUOTE, metric="input_dependent_share", statistic="best", below={"bilinear": 0.01},
            chosen=("0.01: 'independent of the inputs' read as (nearly) no row of weights changing", _WEIGHTS, _GRID)),
    Finding(description="Sec. 5.1: ... whereas self-attention's weights depend on the input: at least 0.99 of its "
                        "attention rows differ between two inputs, at every d and N",
            quote=_DRAWBACKS_QUOTE, metric="input_dependent_share", statistic="worst", above={"softmax": 0.99},
            chosen=("0.99: 'depend on' read as (nearly) every row of weights changing", _WEIGHTS, _GRID)),
    Finding(description="Sec. 5.1: the depth-wise separable convolution addresses the first drawback: its parameter "
                        "count is the same at N = 256 as at N = 4",
            quote=_CONVOLUTION_QUOTE, metric="mixer_params", where={"seq_len": (256,), "d_head": (32,)},
            versus_where={"seq_len": (4,), "d_head": (32,)}, level_with={"sepconv": ("sepconv",)},
            equivalence_margin=0.5, chosen=_ENDS),
    Finding(description="Sec. 5.3: replacing a self-attention layer by the convolution reduces the computational cost: "
                        "the convolution's forward takes fewer multiply-adds than dot-product attention's at the same "
                        "d and N (the hybrid stacks' d = 32, N = 32 and d = 128, N = 128 among them), at every d and N",
            quote=_COST_QUOTE, metric="macs_saved", statistic="worst", above={"sepconv": 1.0},
            chosen=("1 multiply-add: 'reduces' read as any saving (counts are whole numbers)",
                    "filter length 31: the hybrid studies' (the paper: 128 at d = 768, N = 512)", _GRID)),
)

MIXERS = Study(
    name="yun2020.mixers", tasks=("mixer_properties",),
    goal="Without training: does the bilinear projection compute fewer matrix products than dot-product attention, "
         "do its parameters depend on the sequence length and its weights not on the input (unlike attention's), does "
         "the separable convolution's parameter count not depend on the length, and does it cost fewer multiply-adds "
         "than the attention it replaces (Yun et al. 2020, Sec. 5.1, 5.3)?",
    scientific={"pooling": ("softmax", "bilinear", "sepconv"), "d_head": (32, 128), "seq_len": (4, 32, 128, 256)},
    fixed={"n_vectors": 1024},
    # 3 seeds (each its own draws and initialisation): the counts are the same for every seed, the weights are drawn
    seeds=(0, 1, 2), metric="input_dependent_share",
    plot=Plot(panel="pooling", x="seq_len", y="d_head"), findings=MIXER_FINDINGS,
    deviations=(
        "Not a paper experiment: the paper states these properties; here they are counted and measured on the "
        "registry's mixers as the model builder builds them (one head, the convolution's filter length 31), on random "
        "N(0, I) inputs, nothing trained.",
        "Matrix products are counted as the paper writes each layer (attention: per head W_Q X, W_K X, W_V X, the "
        "logits, the weighted values and W_O; bilinear: W_P X and W_O; convolution: the GLU's W_in and W_O) and "
        "multiply-adds as torch's FlopCounterMode counts them (products and convolution; elementwise work not).",
        "The sizes (d = 32, 128; N = 4 .. 256) and the bounds are the project's choice; the paper states no numbers.",),
    scales={"smoke": {"scientific": {"pooling": ("softmax", "bilinear", "sepconv"), "d_head": (32,),
                                     "seq_len": (4, 256)}, "fixed": {"n_vectors": 512}, "seeds": (0, 1)}},
)

_EQUIVARIANCE_QUOTE = ('App. A (proof of Claim 1): "This analysis shows that the function class is restricted to '
                       'permutation equivariant functions."')
_EQUIVARIANCE_CHOSEN = ("2 layers of each architecture as initialised, d = 32, N = 4, 16, 64: the measurement's "
                        "choice (the claim holds for any weights and depth)",
                        "outputs equal within 1e-5 of the sequence's largest output entry (float rounding ~1e-7)")
EQUIVARIANCE_FINDINGS = (
    Finding(description="App. A, Claim 1: a stack of Transformer blocks without positional encoding is permutation "
                        "equivariant, f(PX) = P f(X): at least 0.99 of the tokens of a permuted input get the permuted "
                        "output, for each of the project's four architectures, at every N",
            quote=_EQUIVARIANCE_QUOTE, metric="equivariant_share", statistic="worst",
            above={a: 0.99 for a in ("BERT", "MTE", "NAP", "NON")},
            chosen=("0.99: 'restricted to permutation equivariant functions' read as (nearly) every token",
                    *_EQUIVARIANCE_CHOSEN)),
    Finding(description="Sec. 1 / Theorem 3, the contrast: with the model's learned positional encoding added to the "
                        "input the restriction is gone: at most 0.01 of the tokens get the permuted output, for each "
                        "architecture, at every N",
            quote='Sec. 1: "the restriction of permutation equivariance can be removed by positional encodings."',
            metric="positional_equivariant_share", statistic="best",
            below={a: 0.01 for a in ("BERT", "MTE", "NAP", "NON")},
            chosen=("0.01: 'removed' read as (nearly) no token keeping the permuted output",
                    "the positional embedding as initialised (truncated normal, std 0.02), not a trained one",
                    *_EQUIVARIANCE_CHOSEN)),
)

EQUIVARIANCE = Study(
    name="yun2020.equivariance", tasks=("equivariance",),
    goal="Without training: are stacks of the project's Transformer blocks permutation equivariant without positional "
         "encodings, and not with them (Yun et al. 2020, App. A's Claim 1 and Sec. 1)?",
    scientific={"pooling": ("BERT", "MTE", "NAP", "NON"), "seq_len": (4, 16, 64)},
    fixed={"d_head": 32, "n_vectors": 1024},
    seeds=(0, 1, 2), metric="equivariant_share",
    plot=Plot(panel="pooling", x="seq_len", y="d_head"), findings=EQUIVARIANCE_FINDINGS,
    deviations=(
        "Not a paper experiment: the paper proves the claim; here it is measured on two layers of each architecture "
        "of the project (BERT, MTE, NAP, NON) as initialised, on random N(0, I) token vectors, one random permutation "
        "that moves every token per sequence, nothing trained.",
        "The sizes and the bounds (0.99 / 0.01 shares) are the project's choice.",),
    scales={"smoke": {"scientific": {"pooling": ("BERT", "NAP"), "seq_len": (4, 16)}, "fixed": {"n_vectors": 256},
                      "seeds": (0, 1)}},
)

STUDIES = (MIXERS, EQUIVARIANCE)
