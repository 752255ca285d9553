"""The verdicts' calibration, measured by simulation (issue 48): docs/budget_calibration.png and its numbers.

Studies of known truth built from the authors' release cells (analysis/calibration/world.py: every cell of the mode
release a population of its five seeds' curves, mixed-outcome cells included, a replay's seed drawn from it), with
every statistic and relation at bounds on its truth, 0.5 and 2 points inside and outside it; replayed under a fixed
budget of two seeds and of five, and under the adaptive budget (up to five), beside the two negative controls (seed
noise understated three times; the prior grouped by observed G, the model before issue 48). Per finding, the share of
replays it was decided wrong.

    .venv/bin/python bench/calibration.py [--replays 300] [--jobs 2]
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

RUNS = (("fixed", 2, "correct"), ("fixed", 5, "correct"), ("adaptive", 5, "correct"),
        ("adaptive", 5, "understated x 1/3"), ("adaptive", 5, "grouped by observed G"))


def one(run: tuple[str, int, str], replays: int) -> dict:
    from analysis.calibration.controls import LevelBinnedNoise
    from analysis.calibration.findings import calibration_findings
    from analysis.calibration.simulate import simulate
    from analysis.calibration.world import World, study

    budget, seeds, noise = run
    world = World.of_release()
    options = {"understated x 1/3": {"sd_scale": 1 / 3}, "grouped by observed G": {"noise": LevelBinnedNoise.fit}}
    started = time.time()
    tally = simulate(study(calibration_findings(world), world, budget, seeds), world, replays, seed=48,
                     **options.get(noise, {}))
    return {"budget": budget, "seeds": seeds, "noise": noise, "replays": replays, "models": tally.models,
            "seconds": round(time.time() - started), "rates": tally.rates().to_dicts()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replays", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "budget_calibration.png")
    parser.add_argument("--plot-only", action="store_true", help="draw the figure from bench/calibration.json")
    args = parser.parse_args()
    saved = ROOT / "bench" / "calibration.json"
    if args.plot_only:
        _plot(json.loads(saved.read_text()), args.out)
        return
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(one, RUNS, [args.replays] * len(RUNS)))
    saved.write_text(json.dumps(results, indent=1) + "\n")
    for r in results:
        rates = sorted(r["rates"], key=lambda x: -x["wrong"])
        held = [x for x in rates if "spread" not in x["finding"]]
        print(f"\n{r['budget']} budget, {r['seeds']} seeds, noise {r['noise']}: {r['replays']} replays, "
              f"{100 * r['models']:.1f}% of the models, {r['seconds']} s; worst finding (spread aside) "
              f"{100 * held[0]['wrong']:.1f}% wrong ({held[0]['finding']}); spread's worst "
              f"{100 * max(x['wrong'] for x in rates if 'spread' in x['finding']):.1f}%")
    _plot(results, args.out)
    print(f"wrote {args.out} and bench/calibration.json")


def _plot(results: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    findings = [x["finding"] for x in results[0]["rates"]]
    kinds = list(dict.fromkeys(f.split(" (truth")[0] for f in findings))
    fig, axes = plt.subplots(1, len(results), figsize=(3.1 * len(results), 5.0), sharey=True)
    for ax, r in zip(axes, results, strict=True):
        for kind in kinds:
            rows = [x for x in r["rates"] if x["finding"].startswith(kind + " (truth")]
            offsets = [float(x["finding"].split("(truth ")[1].split(" pp")[0]) for x in rows]
            ax.plot(offsets, [100 * x["wrong"] for x in rows], "o-" if "spread" not in kind else "x:", label=kind,
                    markersize=3)
        ax.axhline(5, color="k", linestyle="--", linewidth=1)
        ax.set_title(f"{r['budget']}, {r['seeds']} seeds\nnoise: {r['noise']}", fontsize=8)
        ax.set_xlabel("truth inside the bound by (pp)", fontsize=8)
    axes[0].set_ylabel("decided wrong (% of replays)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=7, frameon=False)
    fig.suptitle(f"Calibration on release cells: {results[0]['replays']} replays per run (dashed: the stated 5%)",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
