"""The calibration of the finding kinds issue 50 added (the time axis, cell="any", two-sided levels, worst seed
against best seed), measured by simulation in the world of bench/calibration.py (analysis/calibration/time_findings.py):
per finding the share of replays decided, decided wrong, and (worst_beats_best) decided on a fact of the seeds run.
``--one-cell``: the best-cell time bounds read on the one cell of the best true G instead (no cell to pick: the
diagnostic of docs/budget.md). Writes bench/calibration_time.json and prints each kind's worst wrong rate.

    .venv/bin/python bench/calibration_time.py [--replays 300] [--seeds 2] [--sd-scale 1] [--one-cell]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    from analysis.calibration.simulate import simulate
    from analysis.calibration.time_findings import on_true_best_cells, overlap_fact, time_calibration_findings
    from analysis.calibration.world import World, study

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replays", type=int, default=300)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--sd-scale", type=float, default=1.0)
    parser.add_argument("--one-cell", action="store_true", help="best-cell time bounds on the true best cell")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "calibration_time.json")
    args = parser.parse_args()
    world = World.of_release()
    started = time.time()
    findings = time_calibration_findings(world)
    if args.one_cell:
        findings = on_true_best_cells(findings, world)
    tally = simulate(study(findings, world, "fixed", args.seeds), world, args.replays, seed=50,
                     sd_scale=args.sd_scale, fact=overlap_fact)
    result = {"budget": "fixed", "seeds": args.seeds, "sd_scale": args.sd_scale, "one_cell": args.one_cell,
              "replays": args.replays, "seconds": round(time.time() - started), "rates": tally.rates().to_dicts()}
    saved = json.loads(args.out.read_text()) if args.out.exists() else []
    run = (args.seeds, args.sd_scale, args.one_cell)
    saved = [r for r in saved if (r["seeds"], r["sd_scale"], r.get("one_cell", False)) != run] + [result]
    args.out.write_text(json.dumps(saved, indent=1) + "\n")
    kinds: dict[str, list[dict]] = {}
    for r in result["rates"]:
        kinds.setdefault(r["finding"].split(" (truth")[0], []).append(r)
    print(f"fixed budget, {args.seeds} seeds, sd x {args.sd_scale:g}{', one cell' if args.one_cell else ''}: "
          f"{args.replays} replays, {result['seconds']} s")
    for kind, rows in kinds.items():
        worst = max(rows, key=lambda x: x["wrong"])
        decided = ", ".join(f"{100 * x['decided']:.0f}" for x in rows)
        facts = ", ".join(f"{100 * x.get('fact', 0.0):.0f}" for x in rows)
        print(f"  {kind}: worst {100 * worst['wrong']:.1f}% wrong ({worst['finding'].split(' (truth')[1][:-1]}), "
              f"decided {decided}%" + (f", on a fact {facts}%" if "worst seed" in kind else ""))


if __name__ == "__main__":
    main()
