"""A study's report: PNG figures and one self-contained ``index.html`` (images embedded, no network).

The report is composed: :func:`build_report` parses ``study.json`` once (:class:`analysis.data.meta.StudyRecord`),
opens the trial files (recording unreadable ones), and runs a list of sections registered by name
(:mod:`analysis.report.sections`): the built-in ones the rows call for, then those the study asks for. Sections
read statistics computed once (:mod:`analysis.stats.training_stats`, :mod:`analysis.stats.coverage`) and only draw and
write HTML (the modules of :mod:`analysis.report` and :mod:`analysis.papers`). The summary at the top of the page and in
``summary.txt`` says what every number is computed from, and the findings' verdicts (PASS / FAIL /
UNDECIDED / NOT CHECKED) are returned for the CLI's exit status.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from analysis.data.location import Location
from analysis.data.machines import machine_counts, run_settings_text
from analysis.data.meta import parse_meta, read_study_meta
from analysis.render.page import Page
from analysis.report.header import header_html
from analysis.report.sections import ReportContext, applies, get_section
from analysis.report.summary import glance_html, summary_lines
from analysis.stats.verdicts.evaluate import Verdict
from search_spaces.record import StudyRecord

#: The built-in sections in page order; each is drawn when the rows call for it (``section(applies=...)``): the
#: training sections for rows of trained models, ``pooling_scale`` for rows of pooling measurements (Fig. 1).
BUILT_IN: tuple[str, ...] = ("progress", "grids", "robustness", "learning_curves", "paper_table", "importance",
                             "findings", "budget", "pooling_scale")


@dataclass(frozen=True)
class Report:
    """What :func:`build_report` wrote, and the findings' verdicts."""

    index_html: Path
    figures: list[Path] = field(default_factory=list)
    summary: str = ""
    verdicts: list[Verdict] = field(default_factory=list)


def build_report(
    study_dir: str | Path | Location, out_dir: str | Path, *, meta: Mapping[str, Any] | StudyRecord | None = None
) -> Report:
    """Write the report of the study in ``study_dir`` to ``out_dir``; see :func:`write_report`.

    Raises:
        FileNotFoundError: no ``study.json`` (when ``meta`` is not given) or no trial file at all.
        MetaError / ValueError: an invalid study definition, naming the file, the field and what is allowed.
    """
    location, out_dir = Location.of(study_dir), Path(out_dir)
    parsed = read_study_meta(location) if meta is None else parse_meta(meta, location.join("study.json"))
    ctx = ReportContext.open(location, parsed)
    if not ctx.scan.readable and not ctx.scan.unreadable:
        raise FileNotFoundError(f"no trial results in {location.uri} (expected table/ or trials/<trial_key>.parquet "
                                "files; has the study run yet?)")
    out_dir.mkdir(parents=True, exist_ok=True)
    page = Page(out_dir)
    toc, glance = header_html(page, parsed, ctx.name)
    extra: list[str] = []  # summary lines of the sections, in page order
    built_in = [n for n in BUILT_IN if applies(n, ctx)] if ctx.scan.lf is not None else ["progress"]
    names = dict.fromkeys([*built_in, *(parsed.sections if ctx.scan.lf is not None else ())])
    for name in names:
        extra += get_section(name)(page, ctx)
    if ctx.scan.lf is not None:
        extra += _machines(page, ctx.scan.lf, parsed)
    if parsed.versions:
        page.h(2, "Software versions")
        page.raw(f"<pre>{html.escape(json.dumps(dict(parsed.versions), indent=1))}</pre>")
    page.parts[toc] = ("<nav class='toc'>" + "".join(f"<a href='#{a}'>{html.escape(t)}</a>" for a, t in page.toc)
                       + "</nav>")
    page.parts[glance] = glance_html(ctx)
    index = out_dir / "index.html"
    index.write_text(page.render(ctx.name))
    summary = "\n".join(summary_lines(ctx, extra))
    (out_dir / "summary.txt").write_text(summary + "\n")
    return Report(index_html=index, figures=page.figures, summary=summary, verdicts=list(ctx.verdicts))


def _machines(page: Page, lf: pl.LazyFrame, meta: StudyRecord) -> list[str]:
    """The machines that trained the trials (rows' ``machine``) and the latest run's settings; summary lines."""
    counts = machine_counts(lf)
    page.h(2, "Machines")
    page.raw("<p>Where the numbers come from: the same code on the same machine repeats them bit for bit; "
             "float32 runs on two machines agree in distribution only (docs/reproducibility.md).</p><ul>"
             + "".join(f"<li>{html.escape(m)}: {n} trial(s)</li>" for m, n in counts.items())
             + f"</ul><p>{html.escape(run_settings_text(meta.run))}</p>")
    lines = [f"machines: {'; '.join(f'{m} ({n} trials)' for m, n in counts.items())}"]
    return lines + ([f"WARNING: trials ran on {len(counts)} different machines"] if len(counts) > 1 else [])


def write_report(
    study_dir: str | Path | Location, out_dir: str | Path, *, meta: Mapping[str, Any] | StudyRecord | None = None
) -> Path:
    """Write the report of the study in ``study_dir`` (PNGs, ``index.html``, ``summary.txt``).

    Args:
        study_dir: ``<storage>/<study_name>`` holding ``study.json``, ``table/``, ``trials/`` and ``failed/``: a
            local path, a URI or an :class:`analysis.data.location.Location` (read in place).
        out_dir: where to write; created if missing.
        meta: the study definition; read from ``study.json`` when omitted.

    Returns:
        The path of ``index.html``. ``out_dir/summary.txt`` holds a short text summary (coverage, best per
        panel, findings) for a CLI to echo; :func:`build_report` returns it and the verdicts directly.
    """
    return build_report(study_dir, out_dir, meta=meta).index_html
