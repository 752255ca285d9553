"""Small studies defined in a file, as a researcher would (`study run tests/studies_for_tests.py:NAME`)."""

from search_spaces import Finding, LogUniform, Plot, Study

_TINY = {"n_steps": 300, "eval_every": 100, "eval_batches": 2, "batch_size": 8, "seq_len": 16, "d_model": 8}
# Two evaluations in 60 steps, for tests about what the rows say, not about what a trial learns.
_TWO_EVALUATIONS = {**_TINY, "n_steps": 60, "eval_every": 30}

# Long enough per trial (~1 s) that a test can kill the driver while trials are still pending.
INTERRUPTIBLE = Study(
    name="test.interruptible", goal="resume after a killed driver", tasks=("mode",),
    scientific={"architecture": ("sum", "NAP")}, nuisance={"learning_rate": (0.01, 0.003, 0.001, 0.0003)},
    fixed=_TINY, seeds=(0, 1), plot=Plot(panel="architecture", x="learning_rate", y="learning_rate"),
)

TPE = Study(
    name="test.tpe", goal="Optuna TPE over a continuous learning rate", tasks=("mode",),
    scientific={"architecture": ("sum",)}, nuisance={"learning_rate": LogUniform(low=1e-4, high=1e-1)},
    fixed={**_TINY, "n_steps": 100}, seeds=(0,), sampler="tpe", n_trials=4,
)

UNKNOWN_ARCHITECTURE = Study(
    name="test.unknown_architecture", goal="a typo in an architecture name", tasks=("mode",),
    scientific={"architecture": ("sum", "transfomer")}, fixed=_TINY, seeds=(0,),
)

# One learning rate so high that Adam's first steps blow the loss up to NaN/inf.
DIVERGING = Study(
    name="test.diverging", goal="a diverging trial is a result, not a crash", tasks=("mode",),
    scientific={"architecture": ("NAP",)}, nuisance={"learning_rate": (0.003, 1e6)},
    fixed=_TWO_EVALUATIONS, seeds=(0, 1),
)

# The same grid twice: four learning rates in two packed trials, and one rate per trial (which member got which
# rate and seed shows at the first evaluation; the training after it adds nothing to check).
_RATES = {"learning_rate": (0.01, 0.003, 0.001, 0.0003)}
RATES_PACKED = Study(
    name="test.rates_packed", goal="neighbouring learning rates share one packed trial", tasks=("mode",),
    scientific={"architecture": ("NAP",)}, nuisance=_RATES, fixed=_TWO_EVALUATIONS, seeds=(0, 1),
    learning_rates_per_trial=2,
)
RATES_ALONE = Study(
    name="test.rates_alone", goal="the reference: one learning rate per trial", tasks=("mode",),
    scientific={"architecture": ("NAP",)}, nuisance=_RATES, fixed=_TWO_EVALUATIONS, seeds=(0, 1),
)

# 60 steps, 3 evaluations: a trial trains in ~1 CPU s instead of 300 steps' ~6 (sum 0.9, NAP 1.6 against 4.7, 7.4),
# for the tests whose assertions are about Ray's scheduling and failures, not about what a trial learns.
_SHORT = {**_TINY, "n_steps": 60, "eval_every": 20}

# Four short trials of the cheaper architecture (tests/test_tracking.py): what trackers log, not what a trial learns.
TRACKED = Study(
    name="test.tracked", goal="trackers log every trial, live and exported", tasks=("mode",),
    scientific={"architecture": ("sum",)}, nuisance=_RATES, fixed=_SHORT, seeds=(0, 1),
)

# Eight short trials (tests/test_reliability.py): failures injected mid-study, and the cluster they run on.
EIGHT_SHORT = Study(
    name="test.eight_short", goal="a Ray failure mid-study loses nothing", tasks=("mode",),
    scientific={"architecture": ("sum", "NAP")}, nuisance={"learning_rate": (0.01, 0.003, 0.001, 0.0003)},
    fixed=_SHORT, seeds=(0, 1),
)

# The local autoscaling cluster (tests/test_autoscaling.py): 8 trials, two waves of fractional-GPU trials on the
# simulated GPU nodes that the autoscaler launches (120 steps: 60 left 4 trials on one GPU overlapping by 2 at most,
# their processes' start-up as long as their training); and one trial for the misconfigured-node check.
AUTOSCALE = Study(
    name="test.autoscale", goal="fractional-GPU trials on a cluster the autoscaler grows and shrinks", tasks=("mode",),
    scientific={"architecture": ("sum", "NAP")},
    nuisance={"learning_rate": (0.03, 0.01, 0.003, 0.001)}, fixed={**_TINY, "n_steps": 120, "eval_every": 40},
    seeds=(0, 1),
)
ONE_GPU_TRIAL = Study(
    name="test.one_gpu_trial", goal="a GPU trial on a node without CUDA fails with one line", tasks=("mode",),
    scientific={"architecture": ("sum",)}, fixed={**_TINY, "n_steps": 100}, seeds=(0,),
)

# A misspelt hyperparameter: refused by `study show` and `study run`, never trained at the default rate.
TYPO = Study(
    name="test.typo", goal="a misspelt hyperparameter must not train at its default", tasks=("mode",),
    scientific={"architecture": ("sum",)}, fixed={**_TINY, "learnig_rate": 0.1}, seeds=(0,),
)

# A TPE study of 8 trials to kill its driver mid-study (tests/test_journal.py): short trials as EIGHT_SHORT's (a
# trial's process start and Tune's bookkeeping keep the rest pending after the second trial's file lands).
TPE_INTERRUPTIBLE = Study(
    name="test.tpe_interruptible", goal="the Optuna journal survives a killed driver", tasks=("mode",),
    scientific={"architecture": ("sum",)}, nuisance={"learning_rate": LogUniform(low=1e-4, high=1e-1)},
    fixed=_SHORT, seeds=(0, 1), sampler="tpe", n_trials=8,
)

# An adaptive budget (tests/test_adaptive_run.py): four seeds, every cell starts with one, so the first look measures
# no seed noise and decides nothing: a second round always runs. The comparison is confined to one learning rate,
# so the cells of the other two need fewer seeds.
ADAPTIVE = Study(
    name="test.adaptive", goal="seeds go where a finding is undecided", tasks=("mode",),
    scientific={"architecture": ("sum", "max"), "d_model": (8,)}, nuisance={"learning_rate": (0.01, 0.003, 0.001)},
    fixed={k: v for k, v in _TINY.items() if k != "d_model"} | {"n_steps": 200}, seeds=(0, 1, 2, 3),
    budget="adaptive", initial_seeds=1, plot=Plot(panel="architecture", x="d_model", y="learning_rate"),
    findings=(Finding(description="sum learns something", above={"sum": 0.02}),
              Finding(description="sum ahead of max at the highest rate", where={"learning_rate": (0.01,)},
                      ahead={"sum": ("max",)})),
)
