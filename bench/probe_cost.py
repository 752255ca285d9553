"""What probes cost a trial (issue 58): one evaluation window of each family at its cpu scale, probes on and off.

A window is ``eval_every`` training steps (epochs) and the evaluation after them, what a trial repeats: the probes run
once per evaluation, so their share of a window is their share of the trial. Each family trains one seed through
its own ``train`` at the settings of its cpu-scale study (the CTL rows of ``csordas2021.table1``: NDR and the
Transformer at d = 32, 11 / 14 shared layers, batch 128, evaluation every 250 steps on 1,000 samples per set;
Gros' ladder cell N = 4, tau = 2, N_con = 32: 100 epochs per evaluation on 100 series; Richter's fig7: MTE and NAP on
mode, d = 32, evaluation every 100 steps on 8 batches), probes off and on ``--runs`` times (which goes first
alternates); the table gives the medians and their ratio. On a shared machine that ratio moves by several percent
from run to run, more than the probes cost, so the probe call itself is timed as well (each family's
``inside.probe_columns``, wrapped where its loop calls it): its time per window over the median window without
probes is the probes' share of the trial::

    OMP_NUM_THREADS=1 .venv/bin/python bench/probe_cost.py --runs 3
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

from search_spaces.csordas2021 import CPU_EVAL_EVERY, CPU_SETTINGS
from search_spaces.richter2020 import CPU_BUDGET


def ctl(model: str) -> Callable[[bool], None]:
    from trainables.csordas2021.config import CTLConfig
    from trainables.csordas2021.family import train

    settings = {k: v for k, v in CPU_SETTINGS[model].items() if k != "n_steps"}

    def run(probes: bool) -> None:
        cfg = CTLConfig(model=model, n_steps=CPU_EVAL_EVERY, eval_every=CPU_EVAL_EVERY, eval_samples=1000,
                        probes=probes or None, **settings)  # type: ignore[arg-type]
        train([cfg], [0], packed=False)
    return run


def gros(attention: str) -> Callable[[bool], None]:
    from trainables.gros2024.config import GrosConfig
    from trainables.gros2024.family import train

    def run(probes: bool) -> None:
        cfg = GrosConfig(task="nt", basis=4, delay=2, n_context=32, attention=attention, n_epochs=100, eval_every=100,
                         final_eval_series=0, probes=probes or None)
        train([cfg], [0], packed=True)
    return run


def richter(architecture: str) -> Callable[[bool], None]:
    from trainables.richter2020.config import TrainConfig
    from trainables.richter2020.loop import train_members

    def run(probes: bool) -> None:
        budget: dict[str, Any] = {**CPU_BUDGET, "n_steps": CPU_BUDGET["eval_every"]}
        cfg = TrainConfig(architecture=architecture, task="mode", d_model=32, learning_rate=1e-3,
                          probes=probes or None, **budget)
        train_members([cfg], [0], pack=1)
    return run


CASES: dict[str, Callable[[bool], None]] = {
    "csordas2021 NDR": ctl("NDR"), "csordas2021 Transformer": ctl("Transformer"),
    "gros2024 EA": gros("ea"), "gros2024 DPA": gros("dpa"),
    "richter2020 MTE": richter("MTE"), "richter2020 NAP": richter("NAP"),
}


#: Seconds spent in the probe calls since the last reset (the wrapped ``probe_columns`` of each family's loop).
SPENT = [0.0]


def time_probe_calls() -> None:
    """Wrap each family loop's ``probe_columns`` so that its time adds to :data:`SPENT`."""
    import trainables.csordas2021.loop as ctl_loop
    import trainables.gros2024.loop as gros_loop
    import trainables.richter2020.loop as richter_loop

    for module in (ctl_loop, gros_loop, richter_loop):
        inner = module.probe_columns

        def wrapped(*args: Any, _inner: Any = inner, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return _inner(*args, **kwargs)
            finally:
                SPENT[0] += time.perf_counter() - start
        module.probe_columns = wrapped  # type: ignore[attr-defined]


def timed(run: Callable[[bool], None], probes: bool) -> tuple[float, float]:
    """(the window's wall time, the time of its probe calls)."""
    SPENT[0] = 0.0
    start = time.perf_counter()
    run(probes)
    return time.perf_counter() - start, SPENT[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    args = parser.parse_args()
    torch.set_num_threads(1)
    time_probe_calls()
    print("| family, model | probes off (s) | probes on (s) | on / off | probe calls (s) | probe share |")
    print("|---|---|---|---|---|---|")
    for name in args.cases:
        run = CASES[name]
        run(False)  # one-time costs (the CTL data, first steps) outside the timing
        off, on, probe = [], [], []
        for i in range(args.runs):
            for probes in (False, True) if i % 2 == 0 else (True, False):  # alternate which goes first
                wall, spent = timed(run, probes)
                (on if probes else off).append(wall)
                if probes:
                    probe.append(spent)
        a, b, p = statistics.median(off), statistics.median(on), statistics.median(probe)
        print(f"| {name} | {a:.2f} | {b:.2f} | {b / a:.3f} | {p:.3f} | {100 * p / a:.1f}% |", flush=True)


if __name__ == "__main__":
    main()
