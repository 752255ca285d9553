"""analysis/ stays small modules with short functions (issue 15): no module over 400 lines, no function over 80."""

from __future__ import annotations

import ast
from pathlib import Path

ANALYSIS = Path(__file__).resolve().parent.parent / "analysis"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80


def _functions(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text())
    return [(f"{path.name}:{node.name}", node.end_lineno - node.lineno + 1)  # type: ignore[operator]
            for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]


def test_no_module_over_400_lines() -> None:
    sizes = {p.name: len(p.read_text().splitlines()) for p in ANALYSIS.glob("*.py")}
    assert len(sizes) > 10
    assert {n: s for n, s in sizes.items() if s > MAX_MODULE_LINES} == {}


def test_no_function_over_80_lines() -> None:
    lengths = [f for p in ANALYSIS.glob("*.py") for f in _functions(p)]
    assert len(lengths) > 100
    assert [f for f in lengths if f[1] > MAX_FUNCTION_LINES] == []
