"""The study report of two checkouts on the same generated study, run alternately in one session.

Each round builds the report with the old checkout's code, then with the new one's (each a separate
process with ``PYTHONPATH`` set to its checkout), so that drifting load on a shared machine hits both alike.
Per run it records the whole ``analysis.report.build.build_report``, the part of it that is the scan and the
statistics (opening the trial files, the training statistics and the coverage counts, computed once and
shared by every section) and everything after it (drawing, tables, the page), and the process's peak
memory. The table gives the median of each over the rounds and the median of the per-round ratios new / old.

    .venv/bin/python bench/report_25k.py --keep /tmp/report_25k --runs 1   # generate the study once
    .venv/bin/python bench/report_compare.py --old /path/to/old/checkout --new . \\
        --study /tmp/report_25k/bench.report_25k --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

#: Run in a fresh process with the checkout on PYTHONPATH: build_report, with the scan and the statistics timed
#: apart (they are computed on first use and cached, so the sections after them reuse them).
CHILD = r"""
import json, resource, sys, time
from pathlib import Path
import analysis.report.sections as sections
from analysis.report.build import build_report

spent = {}
opened = sections.ReportContext.open.__func__

def timed_open(cls, *args, **kwargs):
    start = time.perf_counter()
    ctx = opened(cls, *args, **kwargs)
    ctx.training, ctx.coverage  # the scan and the statistics, once
    spent["scan_and_stats_s"] = time.perf_counter() - start
    return ctx

sections.ReportContext.open = classmethod(timed_open)
start = time.perf_counter()
report = build_report(Path(sys.argv[1]), Path(sys.argv[2]))
total = time.perf_counter() - start
out = Path(sys.argv[2])
print(json.dumps({"total_s": total, **spent, "after_s": total - spent["scan_and_stats_s"],
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "pngs": len(list(out.glob("*.png"))),
                  "png_mb": sum(p.stat().st_size for p in out.glob("*.png")) / 2**20,
                  "html_mb": (out / "index.html").stat().st_size / 2**20}))
"""
KEYS = ("total_s", "scan_and_stats_s", "after_s", "peak_rss_mb")


def run_once(checkout: Path, study: Path, out: Path, python: str) -> dict[str, float]:
    """One report of ``study`` by ``checkout``'s code, in its own process."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "1"}  # nothing written there
    done = subprocess.run([python, "-c", CHILD, str(study), str(out)], capture_output=True, text=True, env=env,
                          cwd=out.parent)
    if done.returncode != 0:
        raise SystemExit(f"the report of {checkout} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Alternate the two checkouts for ``--rounds`` rounds and print the comparison as Markdown."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", type=Path, required=True, help="checkout of the baseline")
    parser.add_argument("--new", type=Path, required=True, help="checkout of the change")
    parser.add_argument("--study", type=Path, required=True, help="a generated study (bench/report_25k.py --keep)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--python", default=sys.executable, help="the interpreter (with polars, matplotlib, ...)")
    args = parser.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory(prefix="report_compare_") as tmp:
        for i in range(args.rounds):
            for name in ("old", "new"):
                result = run_once(getattr(args, name).resolve(), args.study.resolve(), Path(tmp) / f"{name}{i}",
                                  args.python)
                runs[name].append(result)
                print(f"round {i + 1}/{args.rounds} {name}: {json.dumps(result)}", flush=True)
    print("\n| measurement | old (median) | new (median) | new / old (median of rounds) | runs old / new |")
    print("|---|---|---|---|---|")
    for key in KEYS:
        old = [r[key] for r in runs["old"]]
        new = [r[key] for r in runs["new"]]
        ratio = statistics.median(n / o for n, o in zip(new, old, strict=True))
        pairs = ", ".join(f"{o:.1f}/{n:.1f}" for o, n in zip(old, new, strict=True))
        print(f"| {key} | {statistics.median(old):.1f} | {statistics.median(new):.1f} | {ratio:.3f} | {pairs} |")
    print()
    for name in runs:
        last = runs[name][-1]
        print(f"{name}: {last['pngs']} PNGs, {last['png_mb']:.1f} MiB; index.html {last['html_mb']:.1f} MiB")


if __name__ == "__main__":
    main()
