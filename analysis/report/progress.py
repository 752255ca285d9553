"""The ``progress`` section: what exists of the study, and what every number below is computed from.

Counts and a bar (trials ok / with a diverged seed / unreadable / failed / pending) from
:class:`analysis.stats.coverage.Coverage`; :func:`coverage_warning` is the red box other sections repeat
when a number lacks some trials.
"""

from __future__ import annotations

import html

import polars as pl

from analysis.render.page import Page
from analysis.render.tables import to_html
from analysis.report.sections import ReportContext, section
from analysis.stats.coverage import Coverage


def coverage_warning(coverage: Coverage, *, detail: bool = True) -> str:
    """A red box saying what the numbers below are computed without (empty when complete); ``detail``: the
    files and trials by name (once, in the progress section)."""
    if coverage.complete:
        return ""
    if not detail:
        return f"<div class='warn'><b>Incomplete.</b> These grids are {html.escape(coverage.note())}.</div>"
    files = "".join(f"<li>unreadable: <code>{html.escape(str(p))}</code></li>" for p in coverage.unreadable)
    files += "".join(f"<li>failed for good: {html.escape(k)} (failed/{html.escape(k)}.json)</li>"
                     for k in coverage.failed)
    return (f"<div class='warn'><b>Incomplete.</b> Every number in this report is {html.escape(coverage.note())}."
            + (f"<ul>{files}</ul>" if files else "") + "</div>")


def progress_html(coverage: Coverage) -> str:
    """The line, the bar (trials ok / with a diverged seed / unreadable / failed / pending) and its legend."""
    c, total = coverage, coverage.total
    ok = max(0, c.readable - c.trials_with_diverged)

    def pct(n: int) -> float:
        return 100.0 * n / total if total else 0.0

    parts = [("bar-ok", ok, "done, no seed diverged"), ("bar-div", c.trials_with_diverged, "done, a seed diverged"),
             ("bar-bad", len(c.unreadable), "unreadable trial file"), ("bar-fail", len(c.failed), "failed for good"),
             ("bar-pend", c.pending, "pending")]
    bar = ("<div class='progress' title='trials: ok / with a diverged seed / unreadable / failed / pending'>"
           + "".join(f"<span class='{cls}' style='width:{pct(n):.2f}%'></span>" for cls, n, _ in parts) + "</div>")
    legend = "<div class='legend'>" + "".join(
        f"<div><span class='sw {cls}'></span>{html.escape(text)}: {n}</div>" for cls, n, text in parts) + "</div>"
    line = (f"<p><b>{c.readable} of {total} trials done</b> (readable), {len(c.unreadable)} unreadable, "
            f"{len(c.failed)} failed, {c.pending} pending. Of {c.models} trained models (trial x seed), "
            f"<b>{c.diverged_models} diverged</b> (loss became NaN/inf; they count with accuracy 0 from then on) "
            f"and {c.failed_models} failed.</p>")
    return coverage_warning(coverage) + line + bar + legend


def _counts_table(ctx: ReportContext) -> pl.DataFrame:
    c, counts = ctx.coverage, ctx.counts
    rows = [
        ("trials expected (n_trials)", "–" if c.expected is None else c.expected),
        ("trial files readable", c.readable), ("trial files unreadable", len(c.unreadable)),
        ("trials failed for good (failed/*.json)", len(c.failed)), ("trials pending", c.pending),
        ("seeds", counts.get_column("seed").n_unique() if counts.height else 0),
        ("rows", int(counts.get_column("n_rows").sum()) if counts.height else 0),
        ("trained models (trial x seed)", c.models), ("  status ok", c.models - c.diverged_models - c.failed_models),
        ("  status diverged", c.diverged_models), ("  status failed", c.failed_models),
    ]
    return pl.DataFrame({"count": [r[0] for r in rows], "value": [str(r[1]) for r in rows]})


@section("progress")
def progress_section(page: Page, ctx: ReportContext) -> list[str]:
    """Progress: what exists of the study, and what the numbers below are computed from."""
    page.h(2, "Progress")
    page.raw(progress_html(ctx.coverage))
    page.raw(f"<details><summary>all counts</summary>{to_html(_counts_table(ctx), percent_columns=[])}</details>")
    return []
