"""What each trial asks of the cluster and how it trains there: one value from `study run`'s options to the trial.

The driver reads the placement (``cpus_per_trial``, ``gpus_per_trial``, ``max_concurrent``: study.run.cluster, the
Tuner); the worker the rest, once (its torch threads, its device, its packing and precision: study.trial.entry,
study.trial.trainable). No Ray here: workers and in-process callers (tests, `study verify`) import it as it is.
"""

from __future__ import annotations

import dataclasses

from search_spaces.schema import StudyError
from trainables.compiling import COMPILE
from trainables.families import PACKING

#: A trial's numeric precision (study.trial.trainable.precision_context); recorded in every row.
PRECISIONS = ("fp32", "bf16", "fp64")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Resources:
    """What each trial asks Ray for, how many trials run at once, and how each one trains."""

    cpus_per_trial: float = 1.0  # also the trial's torch threads
    gpus_per_trial: float = 0.0
    max_concurrent: int | None = None  # None: as many as fit on the cluster (at full scale if autoscaled)
    packing: str = "auto"  # seeds as one stacked model: auto (the family's default), on, off (trainables.families)
    precision: str = "fp32"  # fp32, bf16 (autocast) or fp64 (study.trial.trainable.precision_context); in every row
    compile: str = "auto"  # auto, on, off: whether a training step runs compiled (trainables.compiling)
    simulated_gpus: bool = False  # GPU trials may train on the CPU where CUDA is missing (study.trial.devices)

    def __post_init__(self) -> None:
        if self.cpus_per_trial <= 0:
            raise StudyError(f"invalid --cpus-per-trial {self.cpus_per_trial!r}; allowed: a number > 0")
        if self.gpus_per_trial < 0:
            raise StudyError(f"invalid --gpus-per-trial {self.gpus_per_trial!r}; allowed: a number >= 0")
        if self.precision not in PRECISIONS:
            raise StudyError(f"invalid --precision {self.precision!r}; allowed: {', '.join(PRECISIONS)}")
        if self.max_concurrent is not None and self.max_concurrent < 1:
            raise StudyError(f"invalid --max-concurrent {self.max_concurrent!r}; allowed: an integer >= 1")
        if self.compile not in COMPILE:
            raise StudyError(f"invalid --compile {self.compile!r}; allowed: {', '.join(COMPILE)}")
        if self.packing not in PACKING:
            raise StudyError(f"invalid --packing {self.packing!r}; allowed: {', '.join(PACKING)}")
        if self.simulated_gpus and self.gpus_per_trial <= 0:
            raise StudyError("invalid --simulated-gpus with --gpus-per-trial 0; allowed: only with "
                             "--gpus-per-trial > 0 (it lets GPU trials train on the CPU of a simulated GPU node)")

    @property
    def threads(self) -> int:
        """The trial's torch threads: one per whole CPU it asked for, at least one."""
        return max(1, int(self.cpus_per_trial))
