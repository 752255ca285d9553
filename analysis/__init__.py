"""Analysis of study results: pure polars statistics, paper-style figures and tables, the report.

Layers, each importing only those before it (tests/test_layout.py checks the arrows):

* :mod:`analysis.data` - reading: where a study lives, its rows, its ``study.json`` (one typed reader), the
  published results, synthetic studies;
* :mod:`analysis.stats` - statistics: pure ``LazyFrame -> LazyFrame / DataFrame`` functions, no drawing;
* :mod:`analysis.render` - drawing: figures, grids, PNGs, HTML tables and the page;
* :mod:`analysis.report` - the report: its sections by name and the page they compose; the sections of one
  paper are :mod:`analysis.papers` (registered in the same registry, chosen by the study).

Never imports torch, Ray or the training code. Entry points for the CLI::

    from analysis import scan_study, read_study_meta, write_report
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "build_report", "find_study_dir", "load_reference", "read_study_meta", "scan_study", "write_report",
]

_LAZY = {
    "scan_study": "analysis.data.rows",
    "read_study_meta": "analysis.data.meta",
    "find_study_dir": "analysis.data.rows",
    "load_reference": "analysis.data.reference",
    "write_report": "analysis.report.build",
    "build_report": "analysis.report.build",
}


def __getattr__(name: str) -> Any:
    """Import the entry points on first use (``import analysis`` stays cheap: no matplotlib)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'analysis' has no attribute {name!r}")
