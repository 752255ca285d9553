"""Carry the project's Python dependencies to a GPU node that cannot reach a package index.

GPU images (a cloud's deep-learning AMI, a locked-down cluster image) usually hold a CUDA build of torch,
numpy, pyarrow, matplotlib and pytest, but not Ray, Optuna, polars or deltalake, and an air-gapped node cannot
pip them. `build` (on a machine that reaches PyPI) downloads the wheels the node lacks, for the node's Python,
at the versions installed here (the ones the tests passed with), compresses each on its own and groups them
into parts of at most --part-mb (a transfer to the node may be capped); `install` (on the node, with its own
python3) unpacks parts into one site, in one call or several, makes it importable (a .pth file), writes the
bundled packages' console scripts (`ray`, ...) beside python3, and installs this checkout without touching the
index.

    python tools/offline_bundle.py build --present node-packages.txt --python 3.12 --out .bundle
    python3 tools/offline_bundle.py install .bundle          # on the node, in the checkout

`--present`: the node's `python3 -m pip list --format=freeze` (or one name per line); torch must be among
them (the node's CUDA build, never a download). To keep the bundle small, what the studies never import is
left out (PRUNED: Ray's Java jars, its dashboard's web assets, RLlib, Serve and LLM) and native libraries
are stripped of their symbol tables (`strip --strip-unneeded`, where `strip` exists); `build` prints what
each package costs. The size matters where transfers are capped (docs/gpu.md).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata as md
import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import tomllib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: `install` runs on a node whose python3 may lack packaging
    from packaging.requirements import Requirement

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script: its sibling module
from bundle_sources import SCRIPTS, compress, installed_tree, wheel_tree  # noqa: E402

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


def _walk(extras: list[str], python: str, root: str,
          skip: frozenset[str] = frozenset()) -> Iterator[tuple[str, str, Requirement | None, bool]]:
    """(name, installed version, one of its requirements on `python` or None once per package, whether that
    requirement comes with one of the extras asked of the package) over everything `root` (with `extras`)
    needs, following requirements' extras; the packages named in `skip` (normalised) and what only they need are
    left out."""
    from packaging.requirements import Requirement

    wanted, seen = [(root, frozenset(extras))], set()
    while wanted:
        name, with_extras = wanted.pop()
        if (normalise(name), with_extras) in seen or normalise(name) in skip:
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


def closure(extras: list[str], python: str, root: str = PROJECT, skip: frozenset[str] = frozenset()) -> dict[str, str]:
    """name -> installed version of everything `root` (the project, with `extras`) needs on `python`, as
    pinned here; `root` itself is left out, and so are `skip` and what only they need."""
    found = {name: version for name, version, _, _ in _walk(extras, python, root, skip)}
    del found[normalise(root)]
    return found


def _requirement_key(text: str, extra: str | None) -> tuple[str, str, frozenset[str], str | None]:
    from packaging.requirements import Requirement

    req = Requirement(text)
    return normalise(req.name), str(req.specifier), frozenset(req.extras), extra


def stale_metadata(pyproject: Path = ROOT / "pyproject.toml", root: str = PROJECT) -> list[str]:
    """The requirements pyproject.toml declares that the installed project's metadata lacks, and the reverse,
    one line each: the closure is read from the installed metadata, so a checkout whose pyproject.toml gained
    a dependency after its last `pip install -e .` would otherwise build a bundle without it."""
    project = tomllib.loads(pyproject.read_text())["project"]
    declared = {_requirement_key(text, None) for text in project.get("dependencies", [])}
    for extra, texts in project.get("optional-dependencies", {}).items():
        declared |= {_requirement_key(text, extra) for text in texts}
    installed = set()
    for text in md.requires(root) or []:
        match = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", text)
        installed.add(_requirement_key(text, match.group(1) if match else None))

    def show(key: tuple[str, str, frozenset[str], str | None]) -> str:
        name, spec, extras, extra = key
        with_extras = name + (f"[{','.join(sorted(extras))}]" if extras else "")
        return with_extras + spec + (f" (extra {extra})" if extra else "")
    return ([f"{show(k)} declared but not installed" for k in sorted(declared - installed, key=str)]
            + [f"{show(k)} installed but no longer declared" for k in sorted(installed - declared, key=str)])


def node_conflicts(present: dict[str, str | None], extras: list[str], python: str, root: str = PROJECT) -> list[str]:
    """What the node has in a version that the project or a bundled package does not allow: one line each.
    The base requirements of the node's own packages are the node's business and not checked; what an extra
    asked of one of them brings (``ray[tune]`` on a node with Ray) is. Versions that are not PEP 440 are
    skipped."""
    from packaging.version import InvalidVersion, Version

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


_unpack = wheel_tree  # the name the tests use


def _strip(tree: Path) -> None:
    """Drop the symbol tables of native libraries (``*.so``, ``*.so.N``). Programs are left whole: Ray's raylet
    stripped of its symbols died at start ("Check failed" in node_manager.cc) in 4 of 4 local Ray starts on
    Python 3.12 and in most starts of the figure stage's test, the same binary unstripped started."""
    if shutil.which("strip") is None:  # `build` says so, once
        return
    for path in tree.rglob("*"):
        library = path.suffix == ".so" or ".so." in path.name
        if library and path.is_file() and not path.is_symlink() and path.read_bytes()[:4] == b"\x7fELF":
            subprocess.run(["strip", "--strip-unneeded", str(path)], check=True, capture_output=True)


PART = re.compile(r"part-(\d+)-of-(\d+)\.tar$")


def _pack(source: Path | str, work: Path, preset: int) -> tuple[Path, int, list[str]]:
    """One package (a downloaded wheel, or the name of a distribution installed here) placed as pip would, pruned,
    stripped and compressed on its own (bundle_sources.compress): its archive, its unpacked size and the files pip
    would put outside site-packages (left out). One archive per package lets the bundle be cut into parts of a known
    size."""
    name = source.name.split("-", 1)[0] if isinstance(source, Path) else normalise(source).replace("-", "_")
    tree = work / "trees" / name
    left_out = wheel_tree(source, tree) if isinstance(source, Path) else installed_tree(source, tree)
    for part in PRUNED:
        shutil.rmtree(tree / part, ignore_errors=True)
    for cache in list(tree.rglob("__pycache__")):
        shutil.rmtree(cache)
    _strip(tree)
    size = sum(f.stat().st_size for f in tree.rglob("*") if f.is_file())
    archive = work / "archives" / (name + ".tar.xz")
    compress(tree, archive, preset)
    shutil.rmtree(tree)
    return archive, size, left_out


def cut_into_parts(sizes: dict[str, int], limit: int) -> list[list[str]]:
    """Archive names grouped into as few parts as first-fit decreasing finds, each part's sizes summing to at most
    `limit` bytes; an archive larger than `limit` alone is an error naming it."""
    too_big = [f"{name} ({size / 1e6:.1f} MB)" for name, size in sizes.items() if size > limit]
    if too_big:
        sys.exit(f"invalid --part-mb {limit / 1e6:g}: {', '.join(too_big)} alone exceed(s) it; allowed: a size "
                 "at least as large as the largest package's archive")
    parts: list[list[str]] = []
    room: list[int] = []
    for name in sorted(sizes, key=lambda n: (-sizes[n], n)):
        fit = next((i for i, left in enumerate(room) if sizes[name] <= left), None)
        if fit is None:
            parts.append([name])
            room.append(limit - sizes[name])
        else:
            parts[fit].append(name)
            room[fit] -= sizes[name]
    return parts


def _refuse_bad_input(args: argparse.Namespace, present: dict[str, str | None]) -> None:
    """Stop, naming what is wrong, before anything is downloaded."""
    if "torch" not in present:
        sys.exit(f"invalid --present {args.present}: torch is not listed; the node needs its own CUDA build of "
                 "torch (a bundle never carries one)")
    if args.part_mb <= 0:
        sys.exit(f"invalid --part-mb {args.part_mb}: allowed: a positive number of megabytes")
    stale = stale_metadata()
    if stale:
        sys.exit(f"the installed {PROJECT} is older than pyproject.toml (" + "; ".join(stale)
                 + "): reinstall it (make setup, or pip install -e .) and build again")
    conflicts = node_conflicts(present, args.extras, args.python)
    if conflicts:
        sys.exit(f"the node's packages ({args.present}) do not fit: " + "; ".join(conflicts)
                 + "; allowed: versions within those ranges (upgrade the node, or pin the project here)")


def _sources(args: argparse.Namespace, pins: dict[str, str], work: Path) -> list[Path | str]:
    """The wheels downloaded for the node's Python, or (``--from-installed``) the names of the distributions
    installed here, which only a node with this Python can use."""
    if not args.from_installed:
        return list(download(pins, args.python, work / "wheels"))
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    if args.python != here:
        sys.exit(f"invalid --python {args.python} with --from-installed: the installed packages are for Python "
                 f"{here}; allowed: --python {here}, or a build without --from-installed (it downloads wheels)")
    return sorted(pins)


def build(args: argparse.Namespace) -> None:
    present = present_packages(args.present)
    _refuse_bad_input(args, present)
    skip = frozenset(normalise(n) for n in args.leave_out)
    pins = {n: v for n, v in closure(args.extras, args.python, skip=skip).items() if n not in present}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sources = _sources(args, pins, work)
        if shutil.which("strip") is None:
            print("strip not found: native libraries are bundled unstripped")
        # lzma releases the GIL while it compresses: one thread per core packs the packages side by side
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            packed = list(pool.map(lambda source: _pack(source, work, args.xz_preset), sources))
        left_out = [name for _, _, names in packed for name in names]
        if left_out:
            tops = sorted({n.split("/", 2)[0] + "/" + n.split("/", 2)[1] for n in left_out})
            print(f"left out {len(left_out)} files pip would put outside site-packages: {', '.join(tops)}")
        if skip:
            print(f"left out on purpose (--leave-out): {', '.join(sorted(skip))} and what only they need")
        print(f"{len(sources)} packages for Python {args.python}; unpacked (pruned and stripped) -> xz:")
        for archive, size, _ in sorted(packed, key=lambda p: -p[1]):
            if size > 1_000_000:
                print(f"  {archive.name.removesuffix('.tar.xz'):30s} {size / 1e6:6.1f} MB -> "
                      f"{archive.stat().st_size / 1e6:5.1f} MB")
        archives = {archive.name: archive for archive, _, _ in packed}
        # a tar member costs a 512-byte header (and padding); a tar ends in up to 20 KiB of blocks
        sizes = {name: a.stat().st_size + 1024 for name, a in archives.items()}
        parts = cut_into_parts(sizes, int(args.part_mb * 1e6) - 20480)
        identity = build_id(args.python, pins).encode()
        args.out.mkdir(parents=True, exist_ok=True)
        for old in args.out.glob("part-*-of-*.tar"):
            old.unlink()  # parts of an earlier build would mix with these
        for i, names in enumerate(parts, 1):
            path = args.out / f"part-{i}-of-{len(parts)}.tar"
            with tarfile.open(path, "w") as tar:  # the archives inside are compressed already
                stamp = tarfile.TarInfo(BUILD)
                stamp.size = len(identity)
                tar.addfile(stamp, io.BytesIO(identity))
                for name in sorted(names):
                    tar.add(archives[name], arcname=name)
            print(f"{path}: {path.stat().st_size:,} bytes ({path.stat().st_size / 1e6:.1f} MB): "
                  + ", ".join(n.removesuffix(".tar.xz") for n in sorted(names)))
    print(f"{len(parts)} part(s), {len(pins)} packages: " + ", ".join(f"{n}=={v}" for n, v in sorted(pins.items())))


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


BUILD = "BUILD"  # in every part: the build's identity (a hash of the Python and the pinned packages)


FORMAT = 2  # how packages are placed, pruned and stripped: 2 leaves programs unstripped (the raylet)


def build_id(python: str, pins: dict[str, str]) -> str:
    text = f"{FORMAT}|{python}|" + ",".join(f"{n}=={v}" for n, v in sorted(pins.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _parts(paths: list[Path]) -> list[tuple[Path, int, int, str]]:
    """(file, i, n, build) of every part named or found in a named directory; a file that is not a part, or parts
    of different builds, are an error."""
    found = []
    for path in paths:
        files = sorted(path.glob("part-*-of-*.tar")) if path.is_dir() else [path]
        if not files:
            sys.exit(f"invalid bundle {path}: the directory holds no part-I-of-N.tar; allowed: the parts `build` wrote")
        for file in files:
            match = PART.search(file.name)
            if match is None or not file.is_file():
                sys.exit(f"invalid bundle {file}: allowed: part-I-of-N.tar files written by `build`, or their "
                         "directory")
            with tarfile.open(file, "r:") as outer:
                try:
                    member = outer.extractfile(BUILD)
                except KeyError:
                    member = None
                if member is None:
                    sys.exit(f"invalid bundle {file}: it names no build ({BUILD}); allowed: parts written by `build`")
                found.append((file, int(match.group(1)), int(match.group(2)), member.read().decode().strip()))
    if len({(n, b) for _, _, n, b in found}) > 1:
        sys.exit("invalid bundle: parts of different builds (" + ", ".join(str(f) for f, *_ in found) + ")")
    return found


def unpack_parts(paths: list[Path], site: Path) -> tuple[list[int], int]:
    """Unpack the parts named (or found in named directories) into `site` and remember which it holds, so that
    parts carried in separate transfers (a device that caps one) build one site; a site holding parts of another
    build is emptied first, a part it holds of this build is not unpacked again (a stage run twice in one window:
    ~8 CPU s of xz for the figure's bundle). Returns the parts the site now holds and how many the build has."""
    parts = _parts(paths)
    site.mkdir(parents=True, exist_ok=True)
    record = site / ".bundle-parts.json"
    n, build = parts[0][2], parts[0][3]
    fresh = {"build": build, "parts": n, "installed": []}
    held = json.loads(record.read_text()) if record.exists() else fresh
    if held.get("build") != build:
        shutil.rmtree(site)
        site.mkdir(parents=True)
        held = fresh
    for file, i, _, _ in parts:
        if i in held["installed"]:  # whole: the record is written only once the parts named were unpacked
            continue
        with tarfile.open(file, "r:") as outer:
            for member in outer.getmembers():
                if member.name == BUILD:
                    continue
                inner = outer.extractfile(member)
                if inner is None:
                    sys.exit(f"invalid bundle {file}: {member.name} is not a file")
                with tarfile.open(fileobj=inner, mode="r:xz") as tar:
                    tar.extractall(site, filter="fully_trusted")
        held["installed"] = sorted(set(held["installed"]) | {i})
    record.write_text(json.dumps(held))
    return held["installed"], n


def install(args: argparse.Namespace) -> None:
    """Unpack the parts, make the site importable (a .pth file), write the console scripts and install the
    checkout; says which parts are still missing."""
    site = args.site.resolve()
    installed, n = unpack_parts(args.bundle, site)
    pth = Path(sysconfig.get_paths()["purelib"]) / "attention-studies-offline.pth"
    pth.write_text(f"{site}\n")
    scripts = _console_scripts(site, Path(sys.executable).parent)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-build-isolation",
                    "-e", str(ROOT)], check=True)
    missing = sorted(set(range(1, n + 1)) - set(installed))
    print(f"bundle in {site} (importable through {pth}); console scripts: {', '.join(scripts) or 'none new'}; "
          f"{PROJECT} installed from {ROOT}; parts installed: {installed} of {n}"
          + (f"; STILL MISSING: part(s) {missing}: install them before running anything" if missing else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True)
    b = verbs.add_parser("build", help="download and pack the wheels a node lacks (needs the index)")
    b.add_argument("--present", type=Path, required=True, help="the node's pip list --format=freeze")
    b.add_argument("--python", default="3.12", help="the node's Python, major.minor")
    b.add_argument("--extras", nargs="*", default=[], help="project extras to include too (e.g. test)")
    b.add_argument("--out", type=Path, required=True, help="a directory for the parts (part-I-of-N.tar)")
    b.add_argument("--leave-out", nargs="*", default=["deltalake"],
                   help="packages (and what only they need) a node runs `study run` without (default: deltalake, "
                        "whose rows-table fold waits for a machine that has it; docs/gpu.md)")
    b.add_argument("--from-installed", action="store_true",
                   help="pack the packages installed here instead of downloading wheels (a node with this Python)")
    b.add_argument("--xz-preset", type=int, default=9, choices=range(10), metavar="0-9",
                   help="xz level (default 9; 0 packs fast, for tests)")
    b.add_argument("--part-mb", type=float, default=56.0,
                   help="the most megabytes one part may hold (default 56: a 64 MiB transfer cap minus the checkout)")
    i = verbs.add_parser("install", help="unpack a bundle on the node and install this checkout (offline)")
    i.add_argument("bundle", type=Path, nargs="+", help="part files, or the directory `build` wrote them to")
    i.add_argument("--site", type=Path, default=Path("/tmp/attention-studies-site"))
    args = parser.parse_args()
    build(args) if args.verb == "build" else install(args)


if __name__ == "__main__":
    main()
