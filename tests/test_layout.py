"""The shape of the tree: no import cycles, small modules and functions (the seams issue's limits), and
README.md's layout naming every module.

Imports are read from the source (module level and inside functions alike: a lazy import is a dependency
too), between the project's own packages.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "trainables", "study", "search_spaces", "analysis")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 75
SIZE_CHECKED = PACKAGES  # the whole tree, study/ included


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
    assert "trainables.catalog" in graph["study.trial.trainable"]  # and reads lazy imports
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_arrows_point_one_way() -> None:
    """core imports no other package (every one may import it); trainables import neither study nor analysis;
    analysis imports neither trainables nor study."""
    graph = _graph()
    for module, targets in graph.items():
        top = module.split(".")[0]
        forbidden = {"core": ("trainables", "study", "analysis", "search_spaces"),
                     "trainables": ("study", "analysis", "search_spaces"), "analysis": ("trainables", "study")}
        bad = [t for t in targets if t.split(".")[0] in forbidden.get(top, ())]
        assert not bad, f"{module} imports {bad}"


#: analysis/ in layers, each importing only the ones before it: reading, statistics, the proof of the statistics,
#: drawing, the report, papers.
ANALYSIS_LAYERS = ("data", "stats", "calibration", "render", "report", "papers")
#: study/ in layers along the flow of a run, read bottom up: results, trackers, a trial, running a study, the command.
STUDY_LAYERS = ("results", "tracking", "trial", "run", "cli")
LAYERS = {"analysis": ANALYSIS_LAYERS, "study": STUDY_LAYERS}


def _layer(module: str) -> int | None:
    """The index of ``module``'s layer in its package's layers (:data:`LAYERS`; None: not a module of a layer)."""
    parts = module.split(".")
    layers = LAYERS.get(parts[0])
    if layers is None or len(parts) < 2 or parts[1] not in layers:
        return None
    return layers.index(parts[1])


def _layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """``module -> target`` for every import of a later layer of the same package (drawing from statistics is fine,
    not the reverse; a command may run a study, a trial may not call a command)."""
    bad = []
    for module, targets in sorted(graph.items()):
        own = _layer(module)
        if own is None:
            continue
        package = module.split(".")[0]
        bad += [f"{module} -> {t}" for t in sorted(targets) if t.split(".")[0] == package and (_layer(t) or 0) > own]
    return bad


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_packages_are_in_layers(package: str) -> None:
    graph = _graph()
    layers = LAYERS[package]
    flat = [m for m in graph if m.startswith(f"{package}.") and _layer(m) is None]
    assert flat == []  # every module sits in a layer: the package names show the data flow
    assert {_layer(m) for m in graph if m.startswith(f"{package}.")} == set(range(len(layers)))
    assert "analysis.stats.rgb" in graph["analysis.render.tables"]  # the walk sees the packages' own imports
    assert "study.run.runner" in graph["study.cli.run"]
    assert [v for v in _layer_violations(graph) if v.startswith(f"{package}.")] == []


#: The verdicts in analysis/stats/, in layers: the cell table, the seed noise, the intervals, the finding kinds, the
#: verdicts, the budget. The statistics' other modules (its top level: the numbers of a study) import none of them.
STATS_LAYERS = ("table", "noise", "intervals", "kinds", "verdicts", "budget")


def _stats_layer(module: str) -> int:
    """The index of an analysis.stats module's verdict layer (0 for a module of the top level: the numbers)."""
    part = module.split(".")[2] if module.count(".") >= 2 else ""
    return STATS_LAYERS.index(part) + 1 if part in STATS_LAYERS else 0


def stats_layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """``module -> target`` for every analysis.stats import of a later verdict layer."""
    return [f"{m} -> {t}" for m, targets in sorted(graph.items()) if m.startswith("analysis.stats.")
            for t in sorted(targets) if t.startswith("analysis.stats.") and _stats_layer(t) > _stats_layer(m)]


def test_the_verdicts_import_downward_only() -> None:
    """noise -> intervals -> kinds -> verdicts -> budget, each passing the cell table on (issue 57)."""
    graph = _graph()
    assert {_stats_layer(m) for m in graph if m.startswith("analysis.stats.")} == set(range(len(STATS_LAYERS) + 1))
    assert "analysis.stats.table" in graph["analysis.stats.noise"]  # the walk sees the layers' imports
    assert stats_layer_violations(graph) == []
    assert stats_layer_violations({"analysis.stats.noise": {"analysis.stats.kinds.base"},
                                   "analysis.stats.rgb": {"analysis.stats.table"},
                                   "analysis.stats.kinds.base": {"analysis.stats.intervals.cell"}}) == [
        "analysis.stats.noise -> analysis.stats.kinds.base", "analysis.stats.rgb -> analysis.stats.table"]


def test_the_calibration_is_never_imported_by_the_runtime() -> None:
    """The proof of the verdicts (analysis/calibration/) imports the runtime; nothing of the runtime imports it (the
    tests and bench/ do)."""
    graph = _graph()
    assert "analysis.stats.verdicts.evaluate" in _reach(graph, "analysis.calibration.simulate")
    users = sorted(m for m, targets in graph.items() if not m.startswith("analysis.calibration")
                   and any(t.startswith("analysis.calibration") for t in targets))
    assert users == []


def test_the_layer_check_finds_an_import_against_the_flow() -> None:
    graph = {"analysis.stats.x": {"analysis.render.y", "analysis.data.z"}, "analysis.render.y": {"analysis.stats.x"},
             "analysis.data.z": {"analysis.papers.p"}, "analysis.papers.p": {"analysis.report.r"},
             "study.trial.t": {"study.run.r", "study.results.s"}, "study.cli.c": {"study.trial.t"}}
    assert _layer_violations(graph) == ["analysis.data.z -> analysis.papers.p", "analysis.stats.x -> analysis.render.y",
                                        "study.trial.t -> study.run.r"]


def test_studys_layers_have_fewer_arrows_between_them_than_its_flat_files_had() -> None:
    """Issue 35: the flat study/ had 47 import arrows between its 19 files and packages; the layers have far
    fewer between them (counted as arrows between study's subpackages, each pair once)."""
    graph = _graph()
    arrows = {(m.split(".")[1], t.split(".")[1]) for m, targets in graph.items() if m.startswith("study.")
              for t in targets if t.startswith("study.") and t.split(".")[1] != m.split(".")[1]}
    assert len(arrows) <= 10, sorted(arrows)


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


HEADER_FOLDER = re.compile(r"^(\w+)/$")
LISTED_MODULE = re.compile(r"(?<![\w/.<])(<name>|\w+)\.py\b")


def _layout_block(readme: str) -> str:
    """The code block of README.md's "## Layout" section."""
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```\n", 2)[1]


def _listed(block: str) -> dict[str, set[str]]:
    """Folder (``trainables/richter2020``) -> the module names a layout block lists under it (``loop.py``;
    ``<name>.py``: every module of the folder, as ``mixers/`` says of its one file per mixer).

    A line's first token ending in ``/`` is a folder: at column 0 a top-level one, further right one inside the
    folder whose line starts further left. A line that is not a folder continues the innermost folder that starts
    left of its own indentation.
    """
    listed: dict[str, set[str]] = {}
    stack: list[tuple[int, str]] = []  # (column, folder name), outermost first
    for line in block.splitlines():
        indent = len(line) - len(line.lstrip())
        first = line.split()[0] if line.strip() else ""
        header = HEADER_FOLDER.match(first)
        stack = [(c, n) for c, n in stack if c < indent]
        if header:
            stack.append((indent, header.group(1)))
        elif indent == 0:
            stack = []
        folder = "/".join(n for _, n in stack)
        names = listed.setdefault(folder, set())
        names.update(f"{m}.py" for m in LISTED_MODULE.findall(line))
    return listed


def _unlisted(modules: list[str], listed: dict[str, set[str]]) -> list[str]:
    """The modules (paths like ``study/cli/run.py``) that ``listed`` does not reach: a package's ``__init__.py`` is
    reached by its folder, every other module by its name under its folder."""
    missing = []
    for module in modules:
        folder, _, name = module.rpartition("/")
        names = listed.get(folder)
        if names is None or (name != "__init__.py" and name not in names and "<name>.py" not in names):
            missing.append(module)
    return missing


def test_the_readme_layout_reaches_every_module() -> None:
    """README.md's layout names every module of the five packages under its folder, and names no module that
    does not exist: a new module fails here until the layout lists it."""
    modules = sorted(str(p.relative_to(ROOT)) for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))
    listed = _listed(_layout_block((ROOT / "README.md").read_text()))
    assert len(modules) > 100 and "trainables/richter2020/tasks" in listed  # the walk and the parser found the tree
    assert _unlisted(modules, listed) == []
    stale = sorted(f"{folder}/{name}" for folder, names in listed.items() if folder.split("/")[0] in PACKAGES
                   for name in names if name != "<name>.py" and not (ROOT / folder / name).exists())
    assert stale == []


def test_the_layout_check_finds_an_unlisted_module() -> None:
    block = ("pkg/   role   a.py, b.py\n"
             "              sub/  c.py\n"
             "                    d.py\n"
             "              e.py\n"
             "              mix/  <name>.py: one file each\n"
             "other/ role   f.py\n")
    listed = _listed(block)
    assert listed["pkg"] == {"a.py", "b.py", "e.py"} and listed["pkg/sub"] == {"c.py", "d.py"}
    modules = ["pkg/a.py", "pkg/sub/d.py", "pkg/sub/f.py", "pkg/mix/x.py", "pkg/sub/__init__.py",
               "pkg/gone/__init__.py", "pkg/f.py"]
    assert _unlisted(modules, listed) == ["pkg/sub/f.py", "pkg/gone/__init__.py", "pkg/f.py"]
