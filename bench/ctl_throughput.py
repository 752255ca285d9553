"""Training steps per second of the CTL models (Csordás et al. 2021) at the cpu (or paper) scale of
``csordas2021.table1``.

Each model trains ``--steps`` steps through the family's own loop, evaluating once on 16 samples per set at the end:
"one at a time" is ``train_seed`` (one model), "packed K=k" is ``train_members`` with k seeds stacked into one model
(member-steps/s: k x steps / wall). ``--scale cpu`` (default): the cpu scale's settings (d = 32, batch 128, the
paper's 11 / 14 shared layers; the LSTM at width 200, batch 256; the rows' dropout); ``--scale paper``: Table 1's
(d = 128 / 256, batch 512). Before its timed runs every model trains 2 steps untimed (one-time costs: the first
optimiser step of a process, kernel and allocator warm-up, CUDA's context). The table rows read
``| d | variant | steps/s |`` (median of ``--runs``), the format ``bench/compare_checkouts.py`` parses.

This script uses only ``train_seed`` for "one at a time", which every checkout has, so ``bench/compare_checkouts.py
--bench ctl`` runs this file against an older checkout's code too (that checkout's packed rows are left out when it
has no ``train_members``)::

    .venv/bin/python bench/ctl_throughput.py --steps 10 --packs 3 --runs 3
    python3 bench/ctl_throughput.py --device cuda --scale paper --steps 20 --packs 5 --models NDR Transformer
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

from search_spaces.csordas2021 import CPU_SETTINGS
from trainables.csordas2021.config import MODELS, CTLConfig
from trainables.csordas2021.ctl import encoded_splits
from trainables.csordas2021.loop import train_seed


def config(model: str, steps: int, scale: str = "cpu") -> CTLConfig:
    """The model at the cpu scale (or the paper's), ``steps`` steps, one evaluation on 16 samples per set at the end."""
    settings = {k: v for k, v in CPU_SETTINGS[model].items() if k != "n_steps"} if scale == "cpu" else {}
    return CTLConfig(model=model, direction="backward", n_steps=steps, eval_every=steps, eval_samples=16,
                     **settings)


def timed(run: Callable[..., object], configs: object, seeds: object, device: str, clock: str = "wall") -> float:
    """Seconds ``run(configs, seeds, device=device)`` takes (CUDA: to its last kernel); ``clock="cpu"``: this
    process's CPU seconds (on a shared machine the wall time swings with the other processes' load)."""
    now = time.process_time if clock == "cpu" else time.perf_counter
    start = now()
    run(configs, seeds, device=device)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return now() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--packs", type=int, nargs="*", default=[], help="K seeds stacked into one model")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--scale", choices=("cpu", "paper"), default="cpu")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall time, or this process's CPU time (steady on a loaded machine; one thread, CPU only)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    encoded_splits("backward", 0)  # the data, once, outside the timings
    try:
        from trainables.csordas2021.loop import train_members
    except ImportError:  # a checkout from before the CTL loop stacked seeds
        train_members = None
    device = args.device
    print(f"torch {torch.__version__}, {device}, {args.threads} thread(s), {args.scale} scale, {args.steps} steps, "
          f"{args.clock} clock, median of {args.runs} run(s)\n")
    print("| d | variant | steps/s |\n|---|---|---|")
    for model in args.models:
        cfg = config(model, args.steps, args.scale)
        d = cfg.resolved()["d_model"]
        train_seed(config(model, 2, args.scale), 0, device=device)  # warm-up, untimed
        solo = [args.steps / timed(train_seed, cfg, 0, device, args.clock) for _ in range(args.runs)]
        print(f"| {d} | {model} one at a time | {statistics.median(solo):.2f} |", flush=True)
        for k in args.packs if train_members is not None else []:
            packed = [k * args.steps / timed(train_members, [cfg], list(range(k)), device, args.clock)
                      for _ in range(args.runs)]
            print(f"| {d} | {model} packed K={k} | {statistics.median(packed):.2f} |", flush=True)


if __name__ == "__main__":
    main()
