"""The shape of the tree: no import cycles, small modules and functions (the seams issue's limits).

Imports are read from the source (module level and inside functions alike: a lazy import is a dependency
too), between the project's own packages.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("trainables", "study", "search_spaces", "analysis")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
SIZE_CHECKED = ("trainables", "analysis")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, known: set[str]) -> set[str]:
    """The project modules ``path`` imports (a ``from package import name`` counts ``package.name`` when that is
    a module, else ``package``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                target = f"{node.module}.{alias.name}"
                found.add(target if target in known else node.module)
    return {m for m in found if m in known}


def _graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}
    known = set(files)
    return {name: _imports(path, known) - {name} for name, path in files.items()}


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        v = todo.pop()
        if v not in seen:
            seen.add(v)
            todo.extend(graph.get(v, ()))
    return seen


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other (directly or in a loop), each sorted."""
    reach = {v: _reach(graph, v) for v in graph}
    groups = {frozenset({v} | {u for u in reach[v] if v in reach[u]}) for v in graph if v in reach[v]}
    return sorted(sorted(g) for g in groups)


def test_no_modules_import_each_other() -> None:
    graph = _graph()
    assert len(graph) > 50  # the walk found the tree
    assert "trainables.catalog" in graph["study.trainable"]  # and reads lazy imports
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_arrows_point_one_way() -> None:
    """trainables import neither study nor analysis; analysis imports neither trainables nor study."""
    graph = _graph()
    for module, targets in graph.items():
        top = module.split(".")[0]
        forbidden = {"trainables": ("study", "analysis", "search_spaces"), "analysis": ("trainables", "study")}
        bad = [t for t in targets if t.split(".")[0] in forbidden.get(top, ())]
        assert not bad, f"{module} imports {bad}"


#: analysis/ in layers, each importing only the ones before it: reading, statistics, drawing, the report, papers.
ANALYSIS_LAYERS = ("data", "stats", "render", "report", "papers")


def _layer(module: str) -> int | None:
    """The index of ``module``'s layer in :data:`ANALYSIS_LAYERS` (None: not a module of a layer)."""
    parts = module.split(".")
    if parts[0] != "analysis" or len(parts) < 2 or parts[1] not in ANALYSIS_LAYERS:
        return None
    return ANALYSIS_LAYERS.index(parts[1])


def _layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """``module -> target`` for every import of a later layer (drawing from statistics is fine, not the reverse)."""
    bad = []
    for module, targets in sorted(graph.items()):
        own = _layer(module)
        if own is None:
            continue
        bad += [f"{module} -> {t}" for t in sorted(targets) if (_layer(t) or 0) > own]
    return bad


def test_analysis_is_in_layers() -> None:
    graph = _graph()
    flat = [m for m in graph if m.startswith("analysis.") and _layer(m) is None]
    assert flat == []  # every module sits in a layer: the package names show the data flow
    assert {_layer(m) for m in graph if m.startswith("analysis.")} == set(range(len(ANALYSIS_LAYERS)))
    assert "analysis.stats.rgb" in graph["analysis.render.tables"]  # the walk sees analysis' own imports
    assert _layer_violations(graph) == []


def test_the_layer_check_finds_an_import_against_the_flow() -> None:
    graph = {"analysis.stats.x": {"analysis.render.y", "analysis.data.z"}, "analysis.render.y": {"analysis.stats.x"},
             "analysis.data.z": {"analysis.papers.p"}, "analysis.papers.p": {"analysis.report.r"}}
    assert _layer_violations(graph) == ["analysis.data.z -> analysis.papers.p", "analysis.stats.x -> analysis.render.y"]


def _reads_study_json(path: Path) -> bool:
    """Whether ``path`` reads ``study.json`` itself (a read / open / loads call on an expression naming it)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name.startswith(("read", "open", "load")) and any(
                    isinstance(c, ast.Constant) and c.value == "study.json" for c in ast.walk(node)):
                return True
    return False


def test_one_reader_of_study_json() -> None:
    """Every reader of study.json goes through analysis.data.meta (typed, unknown keys refused)."""
    sources = [p for pkg in (*PACKAGES, "notebooks", "bench") for p in (ROOT / pkg).rglob("*.py")]
    readers = sorted(_module_name(p) for p in sources if _reads_study_json(p))
    assert readers == ["analysis.data.meta"]


@pytest.mark.parametrize("package", SIZE_CHECKED)
def test_modules_and_functions_stay_small(package: str) -> None:
    too_long: list[str] = []
    for path in sorted((ROOT / package).rglob("*.py")):
        source = path.read_text()
        lines = len(source.splitlines())
        if lines > MAX_MODULE_LINES:
            too_long.append(f"{path.relative_to(ROOT)}: {lines} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {length} lines")
    assert too_long == []
