"""End to end: the ``cpu`` scale of richter2020.fig7 (mode finding) through Ray Tune, two ways.

* straightforward: one Tune trial per (configuration, seed), each training one model with the sequential
  loop (``train_seed``), ``reuse_actors=False``, 1 CPU per trial;
* project: ``study.run.runner.run_study`` (one trial per configuration, its seeds packed into one model,
  ``reuse_actors=True``, 1 CPU per trial), rows in Parquet.

Both run on the same local Ray (one CPU per trial, as many trials at once as cores). Then the RGB statistics
(per architecture, d, learning rate: min / mean / max over seeds of the validation accuracy per evaluation
step, each maximised over training) of both are compared pixel by pixel. ``--architectures`` and
``--d-model`` pick a subset of the study's grid (the full cpu scale is 216 models x 800 steps).

    .venv/bin/python bench/end_to_end.py                                   # sum and max, d = 16
    .venv/bin/python bench/end_to_end.py --architectures NAP max --d-model 16 32
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from analysis.data.rows import scan_study


def rgb(rows: list[dict[str, Any]], metric: str = "val_accuracy") -> dict[tuple[Any, ...], tuple[float, ...]]:
    """(architecture, d_model, learning_rate) -> (R, G, B): min / mean / max over seeds per step, best over steps."""
    by_step: dict[tuple[Any, ...], dict[int, list[float]]] = {}
    for r in rows:
        key = (r["architecture"], int(r["d_model"]), round(float(r["learning_rate"]), 12))
        by_step.setdefault(key, {}).setdefault(int(r["step"]), []).append(float(r[metric]))
    out = {}
    for key, steps in by_step.items():
        stats = [(min(v), sum(v) / len(v), max(v)) for v in steps.values()]
        out[key] = tuple(max(s[i] for s in stats) for i in range(3))
    return out


def _seed_trial(config: dict[str, Any], study: Any, out_dir: str) -> None:
    """One Tune trial of the straightforward way: one (configuration, seed), sequential loop."""
    import torch

    from study.trial.trainable import split_config
    from trainables.richter2020.config import TrainConfig
    from trainables.richter2020.loop import train_seed

    torch.set_num_threads(1)
    hyper, _ = split_config(study, config["point"])
    cfg = TrainConfig.from_dict(hyper)
    rows = train_seed(cfg, int(config["seed"]))
    resolved = cfg.resolved()
    name = f"{config['index']}_{config['seed']}.json"
    Path(out_dir, name).write_text(json.dumps([{**resolved, **row} for row in rows]))


def main() -> None:
    """Run both ways, print wall times and the pixel-wise comparison as Markdown."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--architectures", nargs="+", default=["sum", "max"])
    parser.add_argument("--d-model", type=int, nargs="+", default=[16])
    parser.add_argument("--keep", default=None, help="directory for the results (default: a temp dir)")
    args = parser.parse_args()

    import ray
    from ray import tune

    from search_spaces import get_study
    from study.results.storage import StudyStorage
    from study.run.points import trial_points
    from study.run.runner import run_study
    from study.trial.resources import Resources

    study = get_study("richter2020.fig7", "cpu")
    study = dataclasses.replace(study, scientific={**study.scientific, "architecture": tuple(args.architectures),
                                                   "d_model": tuple(args.d_model)})
    points = list(trial_points(study).values())
    n_models = len(points) * len(study.seeds)
    work = Path(args.keep or tempfile.mkdtemp(prefix="e2e_"))
    work.mkdir(parents=True, exist_ok=True)
    # address="local": a fresh local Ray, never another (e.g. `ray start`) cluster found on this machine.
    ray.init(address="local", include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    cpus = int(ray.cluster_resources()["CPU"])
    print(f"fig7 cpu scale subset: {args.architectures} x d {args.d_model} x {len(study.nuisance['learning_rate'])} "
          f"lr x {len(study.seeds)} seeds = {n_models} models, {study.fixed['n_steps']} steps; {cpus} CPUs")

    # Project way.
    t = time.perf_counter()
    storage = StudyStorage(storage=str(work / "project"), directory=study.directory)
    run_study(study, storage, Resources(cpus_per_trial=1.0), echo=lambda s: None)
    project_s = time.perf_counter() - t
    project_rows = scan_study(storage.location).collect().to_dicts()  # the table the run folded its files into

    # Straightforward way.
    seed_dir = work / "straightforward"
    seed_dir.mkdir(exist_ok=True)
    t = time.perf_counter()
    space = {"index_point": tune.grid_search([{"index": i, "point": p} for i, p in enumerate(points)]),
             "seed": tune.grid_search(list(study.seeds))}

    def flat(config: dict[str, Any], study: Any = study, out_dir: str = str(seed_dir)) -> None:
        _seed_trial({**config["index_point"], "seed": config["seed"]}, study, out_dir)

    entry = tune.with_resources(flat, {"cpu": 1})
    tune.Tuner(
        entry,
        param_space=space,
        tune_config=tune.TuneConfig(num_samples=1, max_concurrent_trials=cpus, reuse_actors=False),
        run_config=tune.RunConfig(storage_path=str(work / "_tune"), verbose=0),
    ).fit()
    straight_s = time.perf_counter() - t
    straight_rows = [r for f in sorted(seed_dir.glob("*.json")) for r in json.loads(f.read_text())]
    ray.shutdown()

    print("\n| way | Tune trials | wall time (s) | speed-up |\n|---|---|---|---|")
    print(f"| straightforward (one trial per seed, sequential loop) | {n_models} | {straight_s:.0f} | 1.00 |")
    print(f"| project (one trial per configuration, seeds packed) | {len(points)} | {project_s:.0f} | "
          f"{straight_s / project_s:.2f} |")
    for metric in ("val_accuracy", "train_accuracy"):
        a, b = rgb(straight_rows, metric), rgb(project_rows, metric)
        assert a.keys() == b.keys(), (sorted(a), sorted(b))
        diffs = {key: max(abs(x - y) for x, y in zip(a[key], b[key], strict=True)) for key in a}
        worst = max(diffs, key=diffs.__getitem__)
        print(f"\n{metric}: {len(a)} pixels; max |difference| over R, G, B: {diffs[worst]:.4f} at {worst}; "
              f"pixels within 0.01: {sum(v <= 0.01 for v in diffs.values())}/{len(diffs)}")
        print("| architecture | d | lr | straightforward R/G/B | project R/G/B |\n|---|---|---|---|---|")
        for key in sorted(a):
            fmt = "/".join
            print(f"| {key[0]} | {key[1]} | {key[2]:.2g} | {fmt(f'{v:.3f}' for v in a[key])} | "
                  f"{fmt(f'{v:.3f}' for v in b[key])} |")
    print(f"\nresults under {work}")


if __name__ == "__main__":
    main()
