"""Analysis of study results: pure polars statistics, paper-style figures and tables, the report.

Never imports torch, Ray or the training code. Entry points for the CLI::

    from analysis import scan_study, load_study_meta, write_report
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "build_report", "find_study_dir", "load_reference", "load_study_meta", "read_study_meta", "scan_study",
    "write_report",
]

_LAZY = {
    "scan_study": "analysis.dataset",
    "load_study_meta": "analysis.dataset",
    "read_study_meta": "analysis.meta",
    "find_study_dir": "analysis.dataset",
    "load_reference": "analysis.reference",
    "write_report": "analysis.report",
    "build_report": "analysis.report",
}


def __getattr__(name: str) -> Any:
    """Import the entry points on first use (``import analysis`` stays cheap: no matplotlib)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'analysis' has no attribute {name!r}")
