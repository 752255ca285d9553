"""Csordás et al. 2021's sentences about what its geometric attention and its data set are, measured without training
(issue 58): the more distant matches Eq. 7 scales down (Sec. 2.2; task ``ndr_matches``), the attention's cost against
N (App. B; task ``ndr_cost``), a query's attention restricted to one side (App. B; task ``ndr_sides``) and the CTL
splits' sizes and depths (App. C.1, Sec. 3; task ``ctl_splits``), each in trainables/csordas2021/properties.py.
docs/csordas2021.md lists the sentences and verdicts."""

from __future__ import annotations

from search_spaces import Finding, Plot, Study

_MATCH_QUOTE = ('Sec. 2.2: "By using the term (1 - P_i,k) in Eq. 7, when there is a match, it downscales any other '
                'matches which are more distant."')
_MATCH_CHOSEN = ("a match: a key whose logit is 4 (P = sigmoid(4) = 0.982; the other keys' logits q.k / sqrt(d) of "
                 "random N(0, I) queries and keys, d = 32)",
                 "N = 4, 16, 64 with 1,024, 256 and 64 sequences per seed, 3 seeds: the measurement's grid (the "
                 "paper states none); a seed's value is its worst sequence")
MATCH_FINDINGS = (
    Finding(description="Sec. 2.2: with two keys matching the query, the nearer match scales the farther one's "
                        "geometric attention weight down to at most a tenth of its weight without the nearer match "
                        "(its key masked out), in every sequence, at every N",
            quote=_MATCH_QUOTE, metric="far_match_scale", statistic="best", below={"geometric": 0.1},
            chosen=("0.1: 'downscales' read as to a tenth or less (Eq. 7: to 1 - P = 0.018)", *_MATCH_CHOSEN)),
    Finding(description="Sec. 2.2: ... only the more distant ones: the nearer match keeps at least 99% of its weight "
                        "with the farther match there (against the farther key masked out), in every sequence, at "
                        "every N",
            quote=_MATCH_QUOTE, metric="near_match_scale", statistic="worst", above={"geometric": 0.99},
            chosen=("0.99: 'more distant' read as the nearer match (almost) untouched (Eq. 7: exactly 1)",
                    *_MATCH_CHOSEN)),
    Finding(description="Sec. 2.2: ... and it is the term (1 - P) that does it: the match probabilities alone (Eq. 7 "
                        "without the product) leave the farther match at least 99% of its weight, at every N",
            quote=_MATCH_QUOTE, metric="far_match_scale", statistic="worst", above={"sigmoid": 0.99},
            chosen=("0.99: 'not downscaled' read as (almost) all of the weight kept (P alone: exactly 1)",
                    *_MATCH_CHOSEN)),
)

MATCHES = Study(
    name="csordas2021.matches", tasks=("ndr_matches",),
    goal="Without training: does geometric attention's (1 - P) term scale down the matches more distant than a match, "
         "and only those, where the match probabilities alone do not (Csordás et al. 2021, Sec. 2.2)?",
    scientific={"pooling": ("geometric", "sigmoid"), "seq_len": (4, 16, 64)},
    fixed={"d_head": 32, "n_vectors": 4096},
    seeds=(0, 1, 2), metric="far_match_scale",
    plot=Plot(panel="pooling", x="seq_len", y="d_head"), findings=MATCH_FINDINGS,
    deviations=(
        "Not a paper experiment: the paper states the property of Eq. 7; here it is measured on the project's "
        "geometric attention function (trainables/csordas2021/geometric.py, as NDR computes it) on random logits, "
        "two of them set to a match, each weight against the same weights with the other match's key masked out.",
        "The sizes, the match's logit and the bounds are the project's choice.",),
    scales={"smoke": {"scientific": {"pooling": ("geometric", "sigmoid"), "seq_len": (4, 16)},
                      "fixed": {"d_head": 32, "n_vectors": 256}, "seeds": (0, 1)}},
)

_COST_QUOTE = ('App. B: "The proposed attention function has a complexity of O(N^2), similar to the one of regular '
               'selfattention."')
_COST_CHOSEN = ("N = 16,384 to 32,768: the grid's largest step (the d N^2 products dominate the d^2 N projections "
                "there; at CTL's N <= 13 the projections dominate any attention)",
                "d = 256, one head: NDR's (App. C.2)",
                "work: multiply-adds of the products plus one per element every other operation writes (exact counts, "
                "the same for every seed)")
COST_FINDINGS = (
    Finding(description="App. B: geometric attention's work for one sequence grows as N^2: its log-log slope from "
                        "N = 16,384 to 32,768 lies between 1.9 and 2.1",
            quote=_COST_QUOTE, metric="cost_slope", where={"seq_len": (16384,)},
            above={"geometric": 1.9}, below={"geometric": 2.1},
            chosen=("1.9 to 2.1: 'O(N^2)' read as a slope of 2 within 0.1 (a cost of N^3 has slope 3, N log N "
                    "about 1.1 there)", *_COST_CHOSEN)),
    Finding(description="App. B: ... similar to regular self-attention: its slope there within 0.05 of softmax "
                        "attention's",
            quote=_COST_QUOTE, metric="cost_slope", where={"seq_len": (16384,)},
            level_with={"geometric": ("softmax",)}, equivalence_margin=0.05,
            chosen=("0.05: 'similar' read as the same growth, slopes within 0.05", *_COST_CHOSEN)),
)

COST = Study(
    name="csordas2021.cost", tasks=("ndr_cost",),
    goal="Without training: does geometric attention's cost grow as N^2, as softmax attention's does (Csordás et al. "
         "2021, App. B)?",
    scientific={"pooling": ("geometric", "softmax"), "seq_len": (16, 256, 4096, 16384)},
    fixed={"d_head": 256, "n_vectors": 16384},
    seeds=(0, 1), metric="cost_slope",
    plot=Plot(panel="pooling", x="seq_len", y="d_head"), findings=COST_FINDINGS,
    deviations=(
        "Not a paper experiment: the paper states the complexity; here the work of one forward of each attention "
        "(NDR's geometric attention with its directional term, the registry's softmax attention; one head, d = 256) "
        "is counted on the meta device (shapes only) at N and 2N.",
        "Work is the products' multiply-adds (torch's FlopCounterMode) plus the elements every other operation "
        "writes; the fused softmax kernel's own elementwise work (N^2 per head) is not seen, its products are.",
        "The sizes and the bounds are the project's choice.",),
    scales={"smoke": {"scientific": {"pooling": ("geometric", "softmax"), "seq_len": (16, 16384)}}},
)

SIDE_FINDINGS = (
    Finding(description="App. B: with the directional term, each query can restrict its attention to the side its "
                        "own token names: with the direction layer reading a left/right feature of the query's token, "
                        "every query that has a key on its side puts at least 99% of its weight there, at every N",
            quote='App. B: "Using this additional directional information, each query (position i) can potentially '
                  'learn to restrict its attention to either the left or right side."',
            metric="side_share", statistic="worst", above={"geometric": 0.99},
            chosen=("0.99: 'restrict its attention' read as (nearly) all of the query's weight on its side",
                    "the construction: tokens N(0, I) with a first coordinate of +1 (left) or -1 (right) per token, "
                    "the direction layer s_left = 10 x_0, s_right = -10 x_0 (no bias), every other parameter NDR's "
                    "as initialised (d = 256, one head)",
                    "N = 4, 16, 64, 4,096 tokens per seed, 3 seeds: the measurement's grid; a seed's value is its "
                    "worst query")),
)

SIDES = Study(
    name="csordas2021.sides", tasks=("ndr_sides",),
    goal="Without training: can geometric attention's directional term make each query attend only to the side it "
         "chooses, left or right (Csordás et al. 2021, App. B)?",
    scientific={"pooling": ("geometric",), "seq_len": (4, 16, 64)},
    fixed={"d_head": 256, "n_vectors": 4096},
    seeds=(0, 1, 2), metric="side_share",
    plot=Plot(panel="pooling", x="seq_len", y="d_head"), findings=SIDE_FINDINGS,
    deviations=(
        "Not a paper experiment: the paper states the capability; here parameters of the direction layer that "
        "realise it are set by hand (the layer reads a side feature of the query's token) and the module NDR builds "
        "is measured with them on random tokens; whether training finds such parameters is not measured.",
        "The construction, the sizes and the bound are the project's choice.",),
    scales={"smoke": {"scientific": {"pooling": ("geometric",), "seq_len": (4, 16)},
                      "fixed": {"d_head": 256, "n_vectors": 256}, "seeds": (0, 1)}},
)

_DATA_CHOSEN = ("exact: the generator draws from its fixed seed, so every seed gets the same counts (no interval to "
                "read; the bounds sit half a sample or half a depth off the integer the sentence names)",)
DATA_FINDINGS = (
    Finding(description="App. C.1: the train set holds 53,704 samples (exactly)",
            quote='App. C.1: "The total size of the train set is 53,704 samples."', metric="n_samples",
            above={"train": 53703.5}, below={"train": 53704.5}, chosen=_DATA_CHOSEN),
    Finding(description="App. C.1: the train set's samples are roughly balanced over depth: the smallest depth's "
                        "count (depths 1-5) at least half of the largest's",
            quote='App. C.1: "The samples are roughly balanced such that there are similar number of samples for each '
                  'depth."', metric="depth_balance", above={"train": 0.5},
            chosen=("0.5: 'similar number' read as within a factor of two", *_DATA_CHOSEN)),
    Finding(description="Sec. 3: the longest sample of the train, depth-validation and depth-test sets has 5, 8 and 10 "
                        "operations (exactly)",
            quote='Sec. 3: "the train/valid/test sets have different numbers of compositions: samples of up to '
                  '5/6-8/9-10 operations respectively."', metric="max_depth",
            above={"train": 4.5, "depth_valid": 7.5, "depth_test": 9.5},
            below={"train": 5.5, "depth_valid": 8.5, "depth_test": 10.5}, chosen=_DATA_CHOSEN),
    Finding(description="Sec. 3: ... the shortest of the depth-validation and depth-test sets 6 and 9 (exactly)",
            quote='Sec. 3: "samples of up to 5/6-8/9-10 operations respectively."', metric="min_depth",
            above={"depth_valid": 5.5, "depth_test": 8.5}, below={"depth_valid": 6.5, "depth_test": 9.5},
            chosen=_DATA_CHOSEN),
    Finding(description="Sec. 3: ... and every depth in between present: 5, 3 and 2 distinct depths (1-5, 6-8, 9-10)",
            quote='Sec. 3: "samples of up to 5/6-8/9-10 operations respectively."', metric="n_depths",
            above={"train": 4.5, "depth_valid": 2.5, "depth_test": 1.5},
            below={"train": 5.5, "depth_valid": 3.5, "depth_test": 2.5},
            chosen=("the train set's depths 1-5: 'up to 5' with App. C.1's single functions (depth 1)",
                    *_DATA_CHOSEN)),
)

DATA = Study(
    name="csordas2021.data", tasks=("ctl_splits",),
    goal="Without training: does the CTL generator's train set hold 53,704 samples, balanced over depth, and do its "
         "train, depth-validation and depth-test sets hold samples of up to 5, 6-8 and 9-10 operations (Csordás et al. "
         "2021, App. C.1, Sec. 3)?",
    scientific={"pooling": ("train", "depth_valid", "depth_test")},
    fixed={"seq_len": 13},
    seeds=(0, 1), metric="n_samples",
    plot=Plot(panel="pooling", x="seq_len", y="seq_len"), findings=DATA_FINDINGS,
    deviations=(
        "Not a paper experiment: the paper describes its data set; here the project's generator, the release's draw "
        "for draw (trainables/csordas2021/ctl.py), is counted.",
        "The bounds are the project's choice.",),
    scales={"smoke": {}},
)

STUDIES = (MATCHES, COST, SIDES, DATA)
