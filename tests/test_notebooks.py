"""Every notebook in notebooks/ runs end to end on a real smoke-scale dataset.

The dataset is made once per session by the real CLI (tests/conftest.py's ``fig7_smoke``: ``study run
richter2020.fig7 --scale smoke``, a local Ray, about 20 s; NOTEBOOK_STUDY_DIR names one you already have); each
notebook (a jupytext percent-format ``.py``) is converted to ipynb and executed with nbclient in a fresh kernel with
``STUDY_DIR`` pointing at it. A cell that raises fails the test; each notebook must also produce a figure, and the
custom question must print its slopes.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.cli import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))
ALLOWED_IMPORTS = {"analysis", "polars", "numpy", "matplotlib", "seaborn", "os", "pathlib", "math", "json"}


def test_there_are_notebooks_and_they_import_only_analysis_and_plotting() -> None:
    assert len(NOTEBOOKS) >= 3
    for path in NOTEBOOKS:
        tree = ast.parse(path.read_text())
        top = {
            (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        }
        assert top <= ALLOWED_IMPORTS, f"{path.name} imports {sorted(top - ALLOWED_IMPORTS)}"
        assert path.read_text().startswith("# ---\n# jupyter:\n#   jupytext:"), f"{path.name}: not jupytext percent"
        assert "STUDY_DIR" in path.read_text()


def _outputs(nb: object, kind: str) -> list[str]:
    """Every output of ``kind`` (``"image/png"`` or ``"text"``) of the executed notebook."""
    out = []
    for cell in nb.cells:  # type: ignore[attr-defined]
        for o in cell.get("outputs", []):
            if kind == "text" and o.get("output_type") == "stream":
                out.append(o["text"])
            elif kind in o.get("data", {}):
                out.append(o["data"][kind])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_end_to_end(path: Path, fig7_smoke: Path, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import jupytext  # the test extra: jupytext, nbclient, nbformat, ipykernel (missing = failure, not a skip)
    from nbclient import NotebookClient

    monkeypatch.setenv("STUDY_DIR", str(fig7_smoke))
    nb = jupytext.read(path)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}})
    try:
        client.execute()  # raises CellExecutionError on the first cell that errors
    finally:
        import nbformat

        nbformat.write(nb, tmp_path / f"{path.stem}.ipynb")  # kept for a look at what failed
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    assert _outputs(nb, "image/png"), f"{path.name} drew no figure"
    text = "".join(_outputs(nb, "text"))
    if path.stem == "best_lr_vs_size":
        assert "slope" in text and "published richter2020/mode__var_dim" in text
        for arch in ("MTE", "max", "NAP", "sum", "BERT"):
            assert f"{arch:>5}: slope " in text
    if path.stem == "reproduction_vs_published":
        assert "B = published:richter2020/mode__var_dim" in text
