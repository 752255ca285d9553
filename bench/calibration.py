"""The verdicts' calibration, measured by simulation (issue 41): docs/budget_calibration.png and its numbers.

Synthetic studies of known truth (analysis.stats.calibration: a 3 x 4 x 5 grid, a fifth of the cells bimodal, five
findings each half a point on the true side of its bound) replayed with drawn seed noise, at several stated
confidences, under the fixed and the adaptive budget, beside a noise model that understates the seed noise (x 0.2).
The share of decided verdicts that contradict the truth must stay under 1 - confidence.

    .venv/bin/python bench/calibration.py [--replays 400]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from analysis.stats.calibration import near_threshold_truth, simulate  # noqa: E402
from tests.test_budget_calibration import _study  # noqa: E402

CONFIDENCES = (0.8, 0.9, 0.95, 0.99)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replays", type=int, default=400)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "budget_calibration.png")
    args = parser.parse_args()
    truth, rows = near_threshold_truth(), []
    for confidence in CONFIDENCES:
        for budget, scale in (("fixed", 1.0), ("adaptive", 1.0), ("adaptive", 0.2)):
            study = _study().replace(budget=budget, confidence=confidence)
            tally = simulate(study, truth, args.replays, seed=7, sd_scale=scale)
            rows.append({"confidence": confidence, "budget": budget, "sd_scale": scale, "wrong": tally.wrong_share,
                         "decided": tally.decided / tally.replays, "models": tally.models})
            print(json.dumps(rows[-1]))
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    alphas = [1 - c for c in CONFIDENCES]
    ax.plot(alphas, alphas, "k--", label="stated error (1 - confidence)")
    for budget, scale, style in (("fixed", 1.0, "o-"), ("adaptive", 1.0, "s-"), ("adaptive", 0.2, "x:")):
        label = f"{budget} budget" + (" (seed noise understated x 0.2)" if scale != 1.0 else "")
        wrong = [r["wrong"] for r in rows if r["budget"] == budget and r["sd_scale"] == scale]
        ax.plot(alphas, wrong, style, label=label)
    ax.set_xlabel("stated error of a verdict (1 - confidence)")
    ax.set_ylabel("wrong decided verdicts per finding and replay")
    ax.set_title(f"Calibration: {args.replays} replays of a study of known truth")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
