"""Panels in the order the study declares for its panel axis (Fig. 9's ablation walks BERT -> MTE), not sorted:
in the summary, the paper's table, the robustness table, the importance lines and the grids."""

from __future__ import annotations

import re
from pathlib import Path

from analysis.stats.order import order_panels

ABLATION = ["BERT", "- warm up", "- grad. clip", "+ normalize", "+ GELU"]


def test_declared_order_first_then_the_papers_then_sorted() -> None:
    values = ["+ GELU", "zeta", "BERT", "- warm up", "MTE", "+ normalize"]
    assert order_panels(values, ABLATION) == ["BERT", "- warm up", "+ normalize", "+ GELU", "MTE", "zeta"]
    # without a declared order: the paper's architectures, then the rest sorted ("+" < "-" < letters)
    assert order_panels(values) == ["BERT", "MTE", "+ GELU", "+ normalize", "- warm up", "zeta"]
    # a declared value of another type than the column's (a Linked label "2" for an int column) is no match
    assert order_panels([16, 2, 8], ["2", "16"]) == [2, 8, 16]


def test_the_grids_panels_follow_the_declared_order() -> None:
    import polars as pl

    from analysis.render.grids import grid_values

    rgb = pl.DataFrame({"ablation": sorted(ABLATION), "d_model": [16] * 5, "learning_rate": [0.01] * 5})
    panels, _, _ = grid_values(rgb, "ablation", "d_model", "learning_rate", panel_order=ABLATION)
    assert panels == ABLATION


def test_the_report_follows_the_studys_order_of_its_linked_panel_axis(tmp_path: Path) -> None:
    from analysis.data.synthetic import write_synthetic_study
    from analysis.report.build import build_report

    rates = [0.0081, 0.00073, 6.6e-5]
    grid = {"ablation": ABLATION, "d_model": [16, 32, 64, 128], "learning_rate": rates}
    linked = {label: {"architecture": "BERT"} for label in ABLATION}  # study.json keeps the declared order
    write_synthetic_study(tmp_path / "s", grid, seeds=(0, 1), cases=False, name="s",
                          meta={"scientific": {"ablation": linked, "d_model": [16, 32, 64, 128]},
                                "nuisance": {"learning_rate": rates},
                                "plot": {"panel": "ablation", "x": "d_model", "y": "learning_rate"}})
    report = build_report(tmp_path / "s", tmp_path / "out")
    best = [line.split(":")[0].strip() for line in report.summary.splitlines() if line.startswith("  ablation=")]
    assert best == [f"ablation={label}" for label in ABLATION]
    importance = [line.split(":")[0].strip() for line in report.summary.splitlines()
                  if line.startswith("  ") and "configurations)" in line]
    assert importance == ABLATION
    html = (tmp_path / "out" / "index.html").read_text()
    for heading in ("Robustness", "Best combination per panel"):  # the robustness table, the paper's table
        section = html[re.search(f"<h2[^>]*>{heading}", html).end():]
        section = section[:section.index("<h2")]
        positions = [section.index(f"<td class='l'>{label}</td>") for label in ABLATION]
        assert positions == sorted(positions), heading
