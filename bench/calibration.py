"""The verdicts' calibration, measured by simulation (issues 48, 57): docs/budget_calibration.png and its numbers.

Studies of known truth built from the authors' release cells (analysis/calibration/world.py), in three worlds: the
mode release's cells as they are (the file the noise constants were chosen on), the same with hidden splits (a cell
whose seeds agree splits at the rate its neighbours do), and a file none of the constants saw (Fig. 16's, with hidden
splits). Every statistic and relation at bounds on its truth, 0.5 and 2 points inside and outside it, on the whole
grid, where the seeds of the most-splitting architecture split, on single cells and with one bound per architecture
(analysis/calibration/findings.py); replayed under a fixed budget of two seeds in each world and the adaptive budget
(up to five) in the hidden-split one, beside the two negative controls (seed noise understated three times; the prior
grouped by observed G, the model before issue 48). Per finding: the share of replays it was decided wrong, its exact
binomial interval, and its wrong count under each RNG seed (the rate holds over several draws, not one).

    .venv/bin/python bench/calibration.py [--replays 100] [--rng 48 49] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: (world, budget, seeds, noise model)
RUNS = (("release", "fixed", 2, "correct"), ("hidden", "fixed", 2, "correct"), ("held_out", "fixed", 2, "correct"),
        ("hidden", "adaptive", 5, "correct"), ("release", "adaptive", 5, "understated x 1/3"),
        ("release", "adaptive", 5, "grouped by observed G"))


def one(run: tuple[str, str, int, str], replays: int, rng: tuple[int, ...]) -> dict:
    from analysis.calibration.controls import LevelBinnedNoise
    from analysis.calibration.findings import calibration_findings
    from analysis.calibration.simulate import simulate_seeds
    from analysis.calibration.world import study, world

    name, budget, seeds, noise = run
    w = world(name)
    options = {"understated x 1/3": {"sd_scale": 1 / 3}, "grouped by observed G": {"noise": LevelBinnedNoise.fit}}
    started = time.time()
    tally = simulate_seeds(study(calibration_findings(w), w, budget, seeds), w, replays, rng,
                           **options.get(noise, {}))
    per_seed = {str(s): [int(x) for x in counts] for s, counts in tally.wrong_by_seed.items()}
    return {"world": name, "budget": budget, "seeds": seeds, "noise": noise, "replays": tally.replays,
            "models": tally.models, "seconds": round(time.time() - started), "rates": tally.rates().to_dicts(),
            "wrong_by_seed": per_seed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replays", type=int, default=100, help="replays per RNG seed")
    parser.add_argument("--rng", type=int, nargs="+", default=[48, 49], help="the RNG seeds of the replays")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "budget_calibration.png")
    parser.add_argument("--plot-only", action="store_true", help="draw the figure from bench/calibration.json")
    args = parser.parse_args()
    saved = ROOT / "bench" / "calibration.json"
    if args.plot_only:
        _plot(json.loads(saved.read_text()), args.out)
        return
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(one, RUNS, [args.replays] * len(RUNS), [tuple(args.rng)] * len(RUNS)))
    saved.write_text(json.dumps(results, indent=1) + "\n")
    for r in results:
        rates = sorted(r["rates"], key=lambda x: -x["wrong"])
        print(f"\n{r['world']} world, {r['budget']} budget, {r['seeds']} seeds, noise {r['noise']}: {r['replays']} "
              f"replays, {100 * r['models']:.1f}% of the models, {r['seconds']} s; worst findings:")
        for x in rates[:4]:
            print(f"  {x['finding']}: {100 * x['wrong']:.1f}% [{100 * x['wrong_low']:.1f}, "
                  f"{100 * x['wrong_high']:.1f}] ({x['wrong_count']} of {r['replays']})")
    _plot(results, args.out)
    print(f"wrote {args.out} and bench/calibration.json")
def _plot(results: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(3.1 * len(results), 4.2), sharey=True)
    for ax, r in zip(axes, results, strict=True):
        kinds = list(dict.fromkeys(x["finding"].split(" (truth")[0] for x in r["rates"]))
        for i, kind in enumerate(kinds):  # one column per kind, its offsets side by side, each with its interval
            rows = [x for x in r["rates"] if x["finding"].startswith(kind + " (truth")]
            for j, x in enumerate(rows):
                at = i + (j - 2) * 0.12
                ax.plot([at, at], [100 * x["wrong_low"], 100 * x["wrong_high"]], color="0.7", linewidth=1)
                ax.plot(at, 100 * x["wrong"], "o", markersize=2.5, color="C3" if x["wrong_low"] > 0.05 else "C0")
        ax.axhline(5, color="k", linestyle="--", linewidth=1)
        ax.set_title(f"{r['world']}: {r['budget']}, {r['seeds']} seeds\nnoise: {r['noise']}", fontsize=8)
        ax.set_xlabel("finding kind (5 offsets each)", fontsize=8)
    axes[0].set_ylabel("decided wrong (% of replays, 95% interval)")
    fig.suptitle(f"Calibration by simulation: {results[0]['replays']} replays per run (dashed: the stated 5%; red: "
                 "above it beyond chance)", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
