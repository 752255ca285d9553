"""The report's opening: title, goal, chips, deviations from the paper and the search space.

:func:`header_html` also reserves the slots of the table of contents and of the summary at a glance, which
:func:`analysis.report.build.build_report` fills once every section has run.
"""

from __future__ import annotations

import html

from analysis.render.page import Page
from search_spaces.axes import show_value
from search_spaces.record import StudyRecord


def _chips(items: list[tuple[str, object]]) -> str:
    return "<div class='chips'>" + "".join(
        f"<span class='chip'>{html.escape(k)}: {html.escape(str(v))}</span>" for k, v in items) + "</div>"


def _search_space_html(meta: StudyRecord) -> str:
    rows = []
    for kind, axes in (("scientific", meta.scientific), ("nuisance", meta.nuisance)):
        for name, axis in axes.items():
            rows.append(f"<tr><td>{kind}</td><td>{html.escape(name)}</td>"
                        f"<td style='text-align:left'>{html.escape(axis.describe())}</td></tr>")
    if meta.seeds:
        rows.append(f"<tr><td>seeds</td><td>seed</td><td style='text-align:left'>{list(meta.seeds)}</td></tr>")
    chips = "".join(f"<span class='chip'>{html.escape(k)} = {html.escape(show_value(v))}</span>"
                    for k, v in meta.fixed.items())
    return (
        "<p class='note'>Scientific hyperparameters are what the study asks about; nuisance ones are tuned "
        "away (the best value is taken); fixed ones are the same for every trial.</p>"
        '<table class="data"><thead><tr><th>kind</th><th>hyperparameter</th><th>values</th></tr></thead>'
        "<tbody>" + "".join(rows) + "</tbody></table>"
        + (f"<p><b>fixed:</b></p><div class='chips'>{chips}</div>" if chips else "")
    )


def header_html(page: Page, meta: StudyRecord, name: str) -> tuple[int, int]:
    """Title, goal, chips, deviations and search space; returns the (table of contents, glance) slots."""
    page.h(1, f"Study report: {name}")
    page.raw(f"<div class='goal'><b>Goal.</b> {html.escape(meta.goal or '(no goal stated)')}</div>")
    tasks = ("tasks" if len(meta.tasks) > 1 else "task", ", ".join(meta.tasks) or "–")
    page.raw(_chips([("scale", meta.scale or "–"), tasks,
                     ("sampler", meta.sampler), ("metric", f"{meta.metric} ({meta.mode})"),
                     ("seeds", len(meta.seeds) or "–"), ("published data", meta.reference or "none")]))
    toc, glance = page.slot(), page.slot()
    page.h(2, "Deviations from the paper")
    lead = (f"<p>This run is at the <b>{html.escape(meta.scale)}</b> scale, not the paper's: compare the shapes "
            "of the grids, not the absolute accuracies.</p>" if meta.scale and meta.scale != "paper" else "")
    items = "".join(f"<li>{html.escape(d)}</li>" for d in meta.deviations) or "<li>none stated</li>"
    page.raw(f"{lead}<ul class='deviations'>{items}</ul>")
    page.h(2, "Search space")
    page.raw(_search_space_html(meta))
    return toc, glance
