"""How often a k-seed interval misses what more seeds say, on every release file the project ships (issue 48).

For each study with per-seed release data, each metric its findings read, and k = 2, 3, 4 of the five seeds (every
subset): the interval a verdict reads, from k seeds alone, against G of all five seeds and (as a prediction) against
G of the other seeds; per cell at 5%, and per panel value with all its cells at once (Bonferroni at 5%). Beside the
current seed-noise model, the one this project used before issue 48 (a prior grouped by each cell's observed G).
analysis/calibration/holdout.py says exactly what is counted.

    .venv/bin/python bench/coverage.py            # writes bench/coverage.json, prints the tables
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.calibration.controls import LevelBinnedNoise  # noqa: E402
from analysis.calibration.holdout import finding_metrics, holdout, pooled  # noqa: E402
from analysis.stats.noise import NoiseModel  # noqa: E402
from search_spaces import get_study  # noqa: E402
from study.cli.findings import published_rows  # noqa: E402

RELEASE = ("richter2020.fig3", "richter2020.fig5", "richter2020.fig7")
MODELS = {"neighbourhood (now)": NoiseModel, "grouped by observed G (before)": LevelBinnedNoise}


def main() -> None:
    out: dict = {"models": {}}
    for label, model in MODELS.items():
        rows_out, found = [], []
        started = time.time()
        for name in RELEASE:
            _, rows, meta, _ = published_rows(get_study(name), "published")
            rows = rows.collect().lazy()
            misses = holdout(meta, rows, finding_metrics(meta, rows.collect_schema().names()), noise=model)
            found += misses
            rows_out += [{"study": name, **m.row()} for m in misses]
        strata = {k: {s: [sum(m.stratum(s)[i] for m in found if m.k == k) for i in range(3)]
                      for s in ("split", "cliff")} for k in (2, 3, 4)}
        out["models"][label] = {"per_metric": rows_out, "pooled": {k: pooled(found, k) for k in (2, 3, 4)},
                                "strata": strata,
                                "seconds": round(time.time() - started, 1)}
        print(f"\n{label}")
        print("| study | metric | k | cells: all / other seeds | panel values: all / other seeds |")
        print("|---|---|---|---|---|")
        for r in rows_out:
            print(f"| {r['study']} | `{r['metric']}` | {r['k']} | {100 * r['cell_all']:.1f}% / "
                  f"{100 * r['cell_rest']:.1f}% | {r['family_misses_all']} / {r['family_misses_rest']} of "
                  f"{r['families']} |")
        for k, p in out["models"][label]["pooled"].items():
            print(f"pooled k = {k}: cells {100 * p['cell_misses_all'] / p['cells']:.1f}% / "
                  f"{100 * p['cell_misses_rest'] / p['cells']:.1f}% of {p['cells']}; panel values "
                  f"{100 * p['family_misses_all'] / p['families']:.1f}% / "
                  f"{100 * p['family_misses_rest'] / p['families']:.1f}% of {p['families']}")
            for s, (cells, all_, rest) in strata[k].items():
                print(f"  {s} cells: {100 * all_ / max(cells, 1):.1f}% / {100 * rest / max(cells, 1):.1f}% of {cells}")
    (ROOT / "bench" / "coverage.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"\nwrote {ROOT / 'bench' / 'coverage.json'}")


if __name__ == "__main__":
    main()
