"""Documentation is self-contained: every file the README, docs/ and the code cite exists in the repository,
and nothing points at material outside it (the design notes and specs the project was built from)."""

from __future__ import annotations

import fnmatch
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CITED = re.compile(r"\b((?:docs|bench|tests|tools|core|analysis|study|search_spaces|trainables|notebooks)/"
                   r"[\w./-]*\w\.(?:md|py|yaml))")
OUTSIDE = re.compile(r"shared/(?:specs|seeds|design|reference)|RAY_NOTES")


def _ignored_dirs() -> tuple[list[str], list[str]]:
    """.gitignore's directory patterns: (names matched anywhere, e.g. ``*.egg-info``; rooted paths, ``bench/out``)."""
    lines = [line.strip() for line in (ROOT / ".gitignore").read_text().splitlines()]
    dirs = [line.rstrip("/") for line in lines if line.endswith("/") and not line.startswith("#")]
    return [d for d in dirs if not d.startswith("/")], [d.lstrip("/") for d in dirs if d.startswith("/")]


def _tracked() -> list[Path]:
    """The repository's .md, .py and .yaml files: git's list, or, in a copy of the tree without .git (a GPU
    machine's working copy), every such file outside hidden directories and .gitignore's directories."""
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        names = out.split()
    except (subprocess.CalledProcessError, FileNotFoundError):
        anywhere, rooted = _ignored_dirs()
        names = []
        for path in ROOT.rglob("*"):
            parts = path.relative_to(ROOT).parts[:-1]
            if any(part.startswith(".") or any(fnmatch.fnmatch(part, d) for d in anywhere) for part in parts):
                continue
            if any("/".join(parts[: len(r.split("/"))]) == r for r in rooted):
                continue
            names.append(str(path.relative_to(ROOT)))
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
