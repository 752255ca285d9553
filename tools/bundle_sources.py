"""Where tools/offline_bundle.py takes a package's files from, and how it compresses them.

* ``wheel_tree``: a downloaded wheel unpacked as pip would place it (the node's Python differs from this one);
* ``installed_tree``: the files this environment has installed for a distribution (its RECORD), for a node whose
  Python is this one (``build --from-installed``: no index needed; the slow test of the `figure` stage builds its
  bundle this way);
* ``compress``: one package's tree as a tar in xz with the x86 branch filter before LZMA2 (native code compresses
  about 3% smaller: the deltalake library 28.7 -> 27.8 MB at preset 9); any xz reader unpacks it.
"""

from __future__ import annotations

import importlib.metadata as md
import lzma
import shutil
import stat
import tarfile
import zipfile
from pathlib import Path

SCRIPTS = "_scripts"  # in the bundle: the wheels' .data/scripts, written beside python3 by `install`


def wheel_tree(wheel: Path, tree: Path) -> list[str]:
    """Unzip a wheel as pip would place it, keeping file modes (zipfile drops them: Ray's raylet and GCS server
    must stay executable). Of a ``.data`` directory, ``purelib`` and ``platlib`` join the tree and ``scripts``
    go to SCRIPTS (ruff's binary); ``data`` and ``headers`` (man pages, C headers, kernel specs) are left out,
    and their names returned so that the build can say so."""
    left_out = []
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            top, _, rest = info.filename.partition("/")
            target = info.filename
            if top.endswith(".data"):
                kind, _, inside = rest.partition("/")
                if kind in ("purelib", "platlib"):
                    target = inside
                elif kind == "scripts":
                    target = f"{SCRIPTS}/{inside}"
                else:
                    left_out.append(info.filename)
                    continue
            if not target or info.is_dir():
                continue
            path = tree / target
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(archive.read(info))
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                path.chmod(mode)
    return left_out


def installed_tree(name: str, tree: Path) -> list[str]:
    """Copy the files this environment installed for distribution ``name`` into ``tree`` as a wheel of it would
    place them (modes kept); what lies outside site-packages (console scripts, which `install` writes from the
    entry points, data files) is left out and named. Byte-code is not copied."""
    dist = md.distribution(name)
    left_out = []
    for file in dist.files or []:
        if file.suffix == ".pyc":
            continue
        if file.parts[0] == "..":
            left_out.append(f"{name}/{file}")
            continue
        source = Path(str(dist.locate_file(file)))
        if not source.is_file():
            continue
        target = tree / file
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        target.chmod(stat.S_IMODE(source.stat().st_mode))
    return left_out


def compress(tree: Path, archive: Path, preset: int = 9) -> None:
    """``tree``'s top-level entries into ``archive``: a tar in xz (x86 branch filter, then LZMA2 at ``preset``)."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    filters = [{"id": lzma.FILTER_X86}, {"id": lzma.FILTER_LZMA2, "preset": preset}]
    with lzma.open(archive, "wb", format=lzma.FORMAT_XZ, filters=filters) as raw, \
            tarfile.open(fileobj=raw, mode="w") as tar:
        for top in sorted(p.name for p in tree.iterdir()):
            tar.add(tree / top, arcname=top)
