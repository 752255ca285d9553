"""Findings decide the budget (issue 41): what an adaptive budget saves, measured.

1. ``richter2020.fig7 --scale cpu`` trained twice on this machine, one run each, one after the other: the fixed
   budget (every cell, every seed) and the adaptive one (``--budget adaptive``), each in a storage of its own. Wall
   time and model-steps (every model's trained steps, a stopped model's up to its stop) as ratios, and both
   studies' verdicts side by side.
2. The adaptive budget replayed on every shipped release file (``study findings NAME --data published --budget
   adaptive``: models and model-epochs, verdicts reproduced).
3. The smallest fixed number of seeds per cell that gives the full data's verdicts (the first k seeds of each cell
   of the release, k = 1 .. 5): the baseline an adaptive budget must beat.
4. The futility constants chosen out of sample: on two release files, measured on the third (each held out once).

    .venv/bin/python bench/adaptive.py [--skip-training] [--storage /tmp/bench_adaptive]

Results go to ``bench/adaptive.json``; bench/README.md and docs/budget.md quote them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

STUDY = "richter2020.fig7"
RELEASE = {"richter2020.fig3": "richter2020/cases__var_dim",
           "richter2020.fig5": "richter2020/cases__first_token_output__var_dim",
           "richter2020.fig7": "richter2020/mode__var_dim"}


def _study(*args: str) -> tuple[int, str, float]:
    started = time.time()
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "study"), *args], capture_output=True, text=True, cwd=ROOT)
    return done.returncode, done.stdout + done.stderr, time.time() - started


def model_steps(directory: Path) -> tuple[int, int]:
    """(models, model-steps) of a study's rows: each model's trained steps (a stopped one's up to its stop)."""
    from analysis.data.rows import open_trials

    lf = open_trials(directory).lf
    steps = lf.group_by("trial_key", "seed").agg(pl.col("step").max()).collect()
    return steps.height, int(steps.get_column("step").sum())


def verdicts(output: str) -> list[str]:
    """``STATUS: description`` lines of `study findings`."""
    return [line.strip() for line in output.splitlines() if line.startswith("  ") and ": " in line
            and line.strip().split(":")[0] in ("PASS", "FAIL", "UNDECIDED", "PARTIAL", "NOT CHECKED")]


def train_both(storage: Path) -> dict:
    out = {}
    for budget in ("fixed", "adaptive"):
        where = storage / budget
        code, text, wall = _study("run", STUDY, "--scale", "cpu", "--budget", budget, "--storage", str(where),
                                  "--max-concurrent", "2")
        (storage / f"{budget}.log").write_text(text)
        models, steps = model_steps(where / f"{STUDY}.cpu")
        _, findings, _ = _study("findings", STUDY, "--scale", "cpu", "--storage", str(where))
        out[budget] = {"exit": code, "wall_s": round(wall, 1), "models": models, "model_steps": steps,
                       "verdicts": verdicts(findings), "findings": findings}
        print(json.dumps({k: v for k, v in out[budget].items() if k != "findings"}), flush=True)
    fixed, adaptive = out["fixed"], out["adaptive"]
    out["ratios"] = {"model_steps": adaptive["model_steps"] / fixed["model_steps"],
                     "wall": adaptive["wall_s"] / fixed["wall_s"]}
    return out


def _commit() -> str:
    """The commit measured (``+dirty`` with uncommitted changes): each section of the results names its own."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
                           cwd=ROOT).stdout
    return head.strip() + ("+dirty" if dirty.strip() else "")


def replays() -> dict:
    out = {}
    for study, _ in RELEASE.items():
        code, text, wall = _study("findings", study, "--data", "published", "--budget", "adaptive")
        out[study] = {"exit": code, "budget_line": text.strip().splitlines()[-1], "s": round(wall, 1)}
        print(json.dumps(out[study]), flush=True)
    return out


def seed_use() -> dict:
    """Per release file: where the adaptive budget's models went: the starting seeds, the later seeds asked for by a
    finding the full data decides, and those asked for only by findings the full data leaves open too (seeds that
    could not have decided anything: what stands between the budget and its target)."""
    from analysis.data.reference import open_reference
    from analysis.stats.budget.replay import replay
    from analysis.stats.verdicts.status import DECIDED
    from search_spaces import get_study
    from search_spaces.record import StudyRecord

    out = {}
    for name, reference in RELEASE.items():
        meta = StudyRecord.of(get_study(name))
        lf, _ = open_reference(reference)
        done = replay(meta, lf)
        open_in_full = {i for i, v in enumerate(done.full) if v.status not in DECIDED}
        requests = [r for look in done.outcome.looks for r in look.requests]
        wasted = sum(all(f in open_in_full for f in r.findings) for r in requests)
        per_finding = {done.full[i].finding.description[:70]: sum(i in r.findings for r in requests)
                       for i in range(len(done.full))}
        out[name] = {"models": done.models[0], "all_models": done.models[1],
                     "starting": done.models[0] - len(requests), "later": len(requests),
                     "later_only_for_findings_open_in_full_data": wasted,
                     "later_per_finding": {k: v for k, v in per_finding.items() if v}}
        print(json.dumps({name: {k: v for k, v in out[name].items() if k != "later_per_finding"}}), flush=True)
    return out


def fixed_seeds_baseline() -> dict:
    """Per release file: the verdicts on the first k seeds of every cell (one look) against all five's."""
    from analysis.data.reference import open_reference
    from analysis.stats.training_stats import training_stats
    from analysis.stats.verdicts.data import published_data
    from analysis.stats.verdicts.evaluate import evaluate_findings
    from search_spaces import get_study
    from search_spaces.record import StudyRecord

    out = {}
    for name, reference in RELEASE.items():
        study = get_study(name)
        lf, _ = open_reference(reference)
        seeds = sorted(lf.select(pl.col("seed").unique()).collect().get_column("seed").to_list())
        full = None
        rows = {}
        for k in range(len(seeds), 0, -1):
            meta = StudyRecord.of(study.replace(seeds=tuple(seeds[:k]), initial_seeds=None))
            stats = training_stats(lf.filter(pl.col("seed").is_in(seeds[:k])), meta)
            statuses = [v.status for v in evaluate_findings(meta, published_data(stats, k))]
            full = full or statuses
            decided = [i for i, s in enumerate(full) if s in ("PASS", "FAIL", "PARTIAL")]
            rows[k] = {"same": sum(statuses[i] == full[i] for i in decided), "decided": len(decided),
                       "statuses": statuses}
        smallest = min(k for k, r in rows.items() if r["same"] == r["decided"])
        out[name] = {"per_k": rows, "smallest_k": smallest, "models_share": smallest / len(seeds)}
        print(json.dumps({name: {"smallest_k": smallest, "share": smallest / len(seeds)}}), flush=True)
    return out


#: The futility constants tried (analysis.stats.kinds.base.FUTILITY_SHARE): how far a best's (an "order" statistic's)
#: and any other statistic's projection with every seed is shrunk towards its number before a bound inside it counts
#: as out of reach. At most 1: beyond it a bound the projection itself says every seed would decide asks for nothing.
FUTILITY_GRID = [{"order": o, "other": t} for o in (0.25, 0.5, 0.75, 1.0) for t in (0.25, 0.5, 0.75, 1.0)]


def futility_out_of_sample() -> dict:
    """The futility constants chosen on two release files and measured on the third (each file held out once), and
    chosen on all three: per file and constants, the replay's models and verdicts kept (analysis.stats.budget.replay). A
    choice keeps every verdict the completed budget decides on the files it is chosen on, with the fewest models
    there (ties: the smaller constants, the more cautious)."""
    import analysis.stats.kinds.base as findings_module
    from analysis.data.reference import open_reference
    from analysis.stats.budget.replay import replay
    from search_spaces import get_study
    from search_spaces.record import StudyRecord

    data = {name: (StudyRecord.of(get_study(name)), open_reference(ref)[0].collect().lazy())
            for name, ref in RELEASE.items()}
    chosen_now = dict(findings_module.FUTILITY_SHARE)
    table = {}
    for constants in FUTILITY_GRID:
        findings_module.FUTILITY_SHARE = constants
        key = f"order {constants['order']:g}, other {constants['other']:g}"
        table[key] = {}
        for name, (meta, lf) in data.items():
            done = replay(meta, lf)
            same, decided, opposite, _ = done.agreement()
            table[key][name] = {"models": done.models[0] / done.models[1], "kept": same == decided and not opposite,
                                "same": same, "decided": decided}
    findings_module.FUTILITY_SHARE = chosen_now

    def choose(files: list[str]) -> str:
        kept = [k for k in table if all(table[k][f]["kept"] for f in files)]
        return min(kept, key=lambda k: (sum(table[k][f]["models"] for f in files), k))

    folds = {}
    for held in data:
        train = [f for f in data if f != held]
        pick = choose(train)
        folds[held] = {"chosen_on": train, "constants": pick, "held_out": table[pick][held]}
        print(json.dumps({held: folds[held]}), flush=True)
    return {"grid": table, "folds": folds, "all_three": choose(list(data)), "in_use": chosen_now}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storage", type=Path, default=Path("/tmp/bench_adaptive"))
    parser.add_argument("--skip-training", action="store_true",
                        help="only the replays and the baseline (an earlier run's training results are kept)")
    args = parser.parse_args()
    out = ROOT / "bench" / "adaptive.json"
    earlier = json.loads(out.read_text()) if out.exists() else {}
    result = {"replays": {"commit": _commit(), **replays()},
              "fixed_seeds": {"commit": _commit(), **fixed_seeds_baseline()},
              "seed_use": {"commit": _commit(), **seed_use()},
              "futility": {"commit": _commit(), **futility_out_of_sample()}}
    if not args.skip_training:
        result["training"] = {"commit": _commit(), **train_both(args.storage)}
    elif "training" in earlier:  # kept as measured, with the commit that measured it
        result["training"] = earlier["training"]
    out.write_text(json.dumps(result, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
