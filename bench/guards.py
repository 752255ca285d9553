"""Do the statistics' guards catch a broken noise model? Each change of issue 57's list is made to a copy of this
tree (its tracked files and the untracked ones git does not ignore, in a temporary folder), the guard tests are run
there, and the tests that fail are printed: a change no test catches is a guard missing.

    .venv/bin/python bench/guards.py                       # every change, the default guard tests
    .venv/bin/python bench/guards.py --only jump_zero      # one change
    .venv/bin/python bench/guards.py --tests tests/test_findings.py --tests tests/test_interval_coverage.py

The unchanged copy runs first: every guard test must pass there, or the table means nothing (exit status 1). Exit
status 1 too when a change is caught by no test. Results: bench/README.md section 12.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Change:
    """A change to the statistics that a guard must catch: in ``path``, ``old`` (exactly once) becomes ``new``."""

    name: str
    what: str
    edits: tuple[tuple[str, str, str], ...]


CHANGES = (
    Change("prior_halved", "the seed-noise prior's variance halved",
           (("analysis/stats/noise.py", "JUMP_SHARE**2 * np.where(jumped, jump, 0.0)), floor)",
             "JUMP_SHARE**2 * np.where(jumped, jump, 0.0)), floor) * 0.5"),)),
    Change("prior_df_large", "PRIOR_DF very large (the neighbours' prior trusted like 10^6 seeds)",
           (("analysis/stats/noise.py", "PRIOR_DF = 3.0", "PRIOR_DF = 1e6"),)),
    Change("jump_share_zero", "JUMP_SHARE 0 (a cliff in G to a neighbour adds no seed noise)",
           (("analysis/stats/noise.py", "JUMP_SHARE = 1 / 8", "JUMP_SHARE = 0.0"),)),
    Change("no_lift", "no lift (G's inflated end not taken from G less its lift)",
           (("analysis/stats/intervals/cell.py", "    known = n >= 2  # one seed decides nothing\n",
             "    known = n >= 2  # one seed decides nothing\n    lift = 0 * lift\n"),
            ("analysis/stats/intervals/statistics.py", "        lift = cells.values(Column.LIFT, 0.0)\n",
             "        lift = 0 * cells.values(Column.LIFT, 0.0)\n"))),
    Change("no_bonferroni", "no Bonferroni over cells (a best's lower end, a share's ends at a cell's error)",
           (("analysis/stats/intervals/statistics.py", "low, high = g_interval(cells, (se, df), errors, metric, union)",
             "low, high = g_interval(cells, (se, df), errors, metric, (1, 1))"),)),
    Change("no_spending_adaptive", "no error spending over the looks of an adaptive budget (each look spends all)",
           (("analysis/stats/intervals/errors.py", "    if meta.looks == 1:", "    if True:"),)),
    Change("no_split_over_ends", "no error split over a finding's interval ends (one look: each end at alpha)",
           (("analysis/stats/intervals/errors.py", "alpha = (1.0 - meta.confidence) / max(ends, 1)",
             "alpha = 1.0 - meta.confidence"),)),
)
#: The tests that guard the statistics (slow ones included).
GUARD_TESTS = ("tests/test_findings.py", "tests/test_finding_kinds.py", "tests/test_finding_strength.py",
               "tests/test_verdict_guarantees.py", "tests/test_interval_coverage.py",
               "tests/test_budget_calibration.py", "tests/test_time_calibration.py", "tests/test_budget.py")


def copy_tree(target: Path) -> None:
    """This tree's tracked files and its untracked ones git does not ignore, into ``target``."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def apply(change: Change, tree: Path) -> None:
    """Make ``change`` in ``tree`` (each edit's text must be there exactly once)."""
    for path, old, new in change.edits:
        text = (tree / path).read_text()
        if text.count(old) != 1:
            raise SystemExit(f"{change.name}: {path} holds {text.count(old)} copies of {old!r}, not one: update "
                             "bench/guards.py to the code")
        (tree / path).write_text(text.replace(old, new))


def failing(tree: Path, tests: list[str], workers: int) -> tuple[list[str], float]:
    """The tests of ``tests`` that fail in ``tree`` (pytest's node ids), and the seconds it took."""
    started = time.time()
    xdist = ["-n", str(workers)] if workers > 1 else []
    env = {**os.environ, "PYTHONPATH": str(tree)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", *xdist, *tests],
                         cwd=tree, env=env, capture_output=True, text=True)
    failed = sorted(set(re.findall(r"^FAILED (\S+)", run.stdout, re.M)))
    if run.returncode not in (0, 1) or (run.returncode == 1 and not failed):
        raise SystemExit(f"pytest could not run ({run.returncode}):\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
    return failed, time.time() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", choices=[c.name for c in CHANGES], help="one change (repeatable)")
    parser.add_argument("--tests", action="append", help="a test file or node id (repeatable; default: the guards)")
    parser.add_argument("--workers", type=int, default=1, help="pytest-xdist workers per run (default 1)")
    args = parser.parse_args()
    tests = args.tests or list(GUARD_TESTS)
    changes = [c for c in CHANGES if not args.only or c.name in args.only]
    missed = 0
    with tempfile.TemporaryDirectory(prefix="guards-") as tmp:
        pristine = Path(tmp) / "unchanged"
        copy_tree(pristine)
        failed, seconds = failing(pristine, tests, args.workers)
        print(f"unchanged: {len(failed)} failing ({seconds:.0f} s){': ' + ', '.join(failed) if failed else ''}",
              flush=True)
        if failed:
            return 1
        for change in changes:
            tree = Path(tmp) / change.name
            shutil.copytree(pristine, tree)
            apply(change, tree)
            failed, seconds = failing(tree, tests, args.workers)
            missed += not failed
            caught = "; ".join(failed) if failed else "NOT CAUGHT"
            print(f"{change.name} ({change.what}): {caught} ({seconds:.0f} s)", flush=True)
            shutil.rmtree(tree)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
