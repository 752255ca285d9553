"""Carry the project's Python dependencies to a GPU node that cannot reach a package index.

GPU images (a cloud's deep-learning AMI, a locked-down cluster image) usually hold a CUDA build of torch,
numpy, pyarrow, matplotlib and pytest, but not Ray, Optuna or polars, and an air-gapped node cannot pip them.
`build` (on a machine that reaches PyPI) downloads the wheels the node lacks, for the node's Python, at the
versions installed here (the ones the tests passed with), and packs them into one .tar.xz; `install` (on the
node, with its own python3) unpacks it, makes it importable (a .pth file), writes the bundled packages'
console scripts (`ray`, ...) beside python3, and installs this checkout without touching the index.

    python tools/offline_bundle.py build --present node-packages.txt --python 3.12 --out bundle.tar.xz
    python3 tools/offline_bundle.py install bundle.tar.xz          # on the node, in the checkout

`--present`: the node's `python3 -m pip list --format=freeze` (or one name per line); torch must be among
them (the node's CUDA build, never a download). To keep the bundle small, what the studies never import is
left out (PRUNED: Ray's Java jars, its dashboard's web assets, RLlib, Serve and LLM) and native libraries
are stripped of their symbol tables (`strip --strip-unneeded`, where `strip` exists); `build` prints what
each package costs. The size matters where transfers are capped (docs/gpu.md).
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "attention-studies"
PRUNED = ("ray/jars", "ray/dashboard/client/build", "ray/rllib", "ray/serve", "ray/llm")
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux1_x86_64")


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def present_packages(path: Path) -> dict[str, str | None]:
    """Package name -> version (None where the line names no ``==`` version) of a `pip list --format=freeze`
    (or one name per line) file."""
    found: dict[str, str | None] = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name = re.split(r"[=<>!~ @\[]", line, maxsplit=1)[0]
            version = line.split("==", 1)[1].strip() if "==" in line else None
            found[normalise(name)] = version
    return found


def _environment(python: str, extra: str) -> dict[str, str]:
    return {"python_version": python, "python_full_version": f"{python}.0", "sys_platform": "linux",
            "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
            "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": extra}


def _walk(extras: list[str], python: str, root: str) -> Iterator[tuple[str, str, Requirement | None, bool]]:
    """(name, installed version, one of its requirements on `python` or None once per package, whether that
    requirement comes with one of the extras asked of the package) over everything `root` (with `extras`)
    needs, following requirements' extras."""
    wanted, seen = [(root, frozenset(extras))], set()
    while wanted:
        name, with_extras = wanted.pop()
        if (normalise(name), with_extras) in seen:
            continue
        seen.add((normalise(name), with_extras))
        try:
            version = md.version(name)
        except md.PackageNotFoundError:
            sys.exit(f"{name} (needed on Python {python}) is not installed here: install it, so that its "
                     "version is one the tests ran with, then build again")
        yield normalise(name), version, None, False
        base = _environment(python, "")
        environments = [_environment(python, extra) for extra in with_extras]
        for text in md.requires(name) or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate(base):
                yield normalise(name), version, req, False
            elif any(req.marker.evaluate(env) for env in environments):
                yield normalise(name), version, req, True
            else:
                continue
            wanted.append((req.name, frozenset(req.extras)))


def closure(extras: list[str], python: str, root: str = PROJECT) -> dict[str, str]:
    """name -> installed version of everything `root` (the project, with `extras`) needs on `python`, as
    pinned here; `root` itself is left out."""
    found = {name: version for name, version, _, _ in _walk(extras, python, root)}
    del found[normalise(root)]
    return found


def node_conflicts(present: dict[str, str | None], extras: list[str], python: str, root: str = PROJECT) -> list[str]:
    """What the node has in a version that the project or a bundled package does not allow: one line each.
    The base requirements of the node's own packages are the node's business and not checked; what an extra
    asked of one of them brings (``ray[tune]`` on a node with Ray) is. Versions that are not PEP 440 are
    skipped."""
    lines = []
    for name, version, req, from_extra in _walk(extras, python, root):
        if req is None or (name in present and name != normalise(root) and not from_extra):
            continue
        have = present.get(normalise(req.name))
        try:
            parsed = Version(have) if have else None
        except InvalidVersion:
            continue
        if parsed is not None and not req.specifier.contains(parsed, prereleases=True):
            lines.append(f"{req.name} {have} on the node; {name} {version} needs {req.name}{req.specifier}")
    return sorted(set(lines))


def download(pins: dict[str, str], python: str, into: Path) -> list[Path]:
    """The wheels of `pins` for CPython `python` on x86-64 Linux (binary only: the node cannot build)."""
    platforms = [arg for p in PLATFORMS for arg in ("--platform", p)]
    for name, version in sorted(pins.items()):
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--python-version", python, "--implementation", "cp", *platforms, "-d", str(into),
                        f"{name}=={version}"], check=True)
    return sorted(into.glob("*.whl"))


SCRIPTS = "_scripts"  # in the bundle: the wheels' .data/scripts, written beside python3 by `install`


def _unpack(wheel: Path, tree: Path) -> list[str]:
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


def _strip(tree: Path) -> None:
    """Drop the symbol tables of native libraries and programs (a third of Ray's size; behaviour unchanged)."""
    if shutil.which("strip") is None:
        print("strip not found: native libraries are bundled unstripped")
        return
    for path in tree.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.read_bytes()[:4] == b"\x7fELF":
            subprocess.run(["strip", "--strip-unneeded", str(path)], check=True, capture_output=True)


def build(args: argparse.Namespace) -> None:
    present = present_packages(args.present)
    if "torch" not in present:
        sys.exit(f"invalid --present {args.present}: torch is not listed; the node needs its own CUDA build of "
                 "torch (a bundle never carries one)")
    conflicts = node_conflicts(present, args.extras, args.python)
    if conflicts:
        sys.exit(f"the node's packages ({args.present}) do not fit: " + "; ".join(conflicts)
                 + "; allowed: versions within those ranges (upgrade the node, or pin the project here)")
    pins = {n: v for n, v in closure(args.extras, args.python).items() if n not in present}
    with tempfile.TemporaryDirectory() as tmp:
        wheels = download(pins, args.python, Path(tmp) / "wheels")
        tree = Path(tmp) / "site"
        left_out = [name for wheel in wheels for name in _unpack(wheel, tree)]
        if left_out:
            tops = sorted({n.split("/", 2)[0] + "/" + n.split("/", 2)[1] for n in left_out})
            print(f"left out {len(left_out)} files pip would put outside site-packages: {', '.join(tops)}")
        for part in PRUNED:
            shutil.rmtree(tree / part, ignore_errors=True)
        for cache in list(tree.rglob("__pycache__")):
            shutil.rmtree(cache)
        _strip(tree)
        print(f"{len(wheels)} wheels for Python {args.python}; unpacked, pruned and stripped:")
        sizes = {top.name: sum(f.stat().st_size for f in top.rglob("*") if f.is_file()) if top.is_dir()
                 else top.stat().st_size for top in tree.iterdir()}
        for top, size in sorted(sizes.items(), key=lambda kv: -kv[1]):
            if size > 1_000_000:
                print(f"  {top:40s} {size / 1e6:6.1f} MB")
        with tarfile.open(args.out, "w:xz", preset=9) as tar:
            for top in sorted(p.name for p in tree.iterdir()):
                tar.add(tree / top, arcname=top)
    print(f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB, {len(pins)} packages: "
          + ", ".join(f"{n}=={v}" for n, v in sorted(pins.items())))


def _console_scripts(site: Path, bin_dir: Path) -> list[str]:
    """Write each bundled package's console scripts and its wheel's scripts into bin_dir (beside python3), never
    over an existing one; returns their names."""
    written = []
    for entry_points in site.glob("*.dist-info/entry_points.txt"):
        section = ""
        for line in entry_points.read_text().splitlines():
            line = line.strip()
            if line.startswith("["):
                section = line
            elif section == "[console_scripts]" and "=" in line:
                name, target = (part.strip() for part in line.split("=", 1))
                module, _, attr = target.partition(":")
                script = bin_dir / name
                where = site / module.replace(".", "/")
                if not (where.is_dir() or where.with_suffix(".py").exists()):
                    continue  # its module was pruned (ray's `serve`)
                if not script.exists():
                    script.write_text(f"#!{sys.executable}\nimport sys\nfrom {module} import {attr.split('.')[0]}\n"
                                      f"sys.exit({attr}())\n")
                    script.chmod(0o755)
                    written.append(name)
    scripts = site / SCRIPTS
    for script in sorted(scripts.iterdir()) if scripts.is_dir() else []:
        target = bin_dir / script.name
        if target.exists():
            continue
        body = script.read_bytes()
        if body.startswith(b"#!python"):  # a wheel's placeholder for the installing interpreter
            body = f"#!{sys.executable}".encode() + body[len(b"#!python"):]
        target.write_bytes(body)
        target.chmod(0o755)
        written.append(script.name)
    return written


def install(args: argparse.Namespace) -> None:
    site = args.site.resolve()
    site.mkdir(parents=True, exist_ok=True)
    with tarfile.open(args.bundle, "r:xz") as tar:
        tar.extractall(site, filter="fully_trusted")
    pth = Path(sysconfig.get_paths()["purelib"]) / "attention-studies-offline.pth"
    pth.write_text(f"{site}\n")
    scripts = _console_scripts(site, Path(sys.executable).parent)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-build-isolation",
                    "-e", str(ROOT)], check=True)
    print(f"bundle in {site} (importable through {pth}); console scripts: {', '.join(scripts) or 'none new'}; "
          f"{PROJECT} installed from {ROOT}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True)
    b = verbs.add_parser("build", help="download and pack the wheels a node lacks (needs the index)")
    b.add_argument("--present", type=Path, required=True, help="the node's pip list --format=freeze")
    b.add_argument("--python", default="3.12", help="the node's Python, major.minor")
    b.add_argument("--extras", nargs="*", default=[], help="project extras to include too (e.g. test)")
    b.add_argument("--out", type=Path, required=True)
    i = verbs.add_parser("install", help="unpack a bundle on the node and install this checkout (offline)")
    i.add_argument("bundle", type=Path)
    i.add_argument("--site", type=Path, default=Path("/tmp/attention-studies-site"))
    args = parser.parse_args()
    build(args) if args.verb == "build" else install(args)


if __name__ == "__main__":
    main()
