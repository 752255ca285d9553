"""Documentation is self-contained: every file the README, docs/ and the code cite exists in the repository,
and nothing points at material outside it (the design notes and specs the project was built from)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CITED = re.compile(r"\b((?:docs|bench|tests|tools|analysis|study|search_spaces|trainables|notebooks)/"
                   r"[\w./-]*\w\.(?:md|py|yaml))")
OUTSIDE = re.compile(r"shared/(?:specs|seeds|design|reference)|RAY_NOTES")


SKIPPED_DIRS = {"results", "reports", "build", "__pycache__"}  # .gitignore's directories (and hidden ones)


def _tracked() -> list[Path]:
    """The repository's .md, .py and .yaml files: git's list, or, in a copy of the tree without .git (a GPU
    machine's working copy), every such file outside hidden and ignored directories."""
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        names = out.split()
    except (subprocess.CalledProcessError, FileNotFoundError):
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                 if not any(part.startswith(".") or part in SKIPPED_DIRS or part.endswith(".egg-info")
                            for part in p.relative_to(ROOT).parts[:-1])]
    return [ROOT / p for p in names if p.endswith((".md", ".py", ".yaml")) and (ROOT / p).is_file()]


def test_every_cited_file_exists() -> None:
    missing = {}
    for path in _tracked():
        for cited in CITED.findall(path.read_text(errors="replace")):
            if not (ROOT / cited).exists() and "*" not in cited and "<" not in cited:
                missing.setdefault(str(path.relative_to(ROOT)), []).append(cited)
    assert missing == {}


def test_nothing_points_outside_the_repository() -> None:
    offenders = {str(p.relative_to(ROOT)) for p in _tracked()
                 if p.name != "test_docs.py" and OUTSIDE.search(p.read_text(errors="replace"))}
    assert offenders == set()
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert not [d.name for d in docs if OUTSIDE.search(d.read_text())]
