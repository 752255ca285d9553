"""The GPU-node tooling of docs/gpu.md: tools/offline_bundle.py and bench/gpu_checks.sh.

The bundle's download needs a package index; everything around it runs here on real files: the dependency
closure read from this environment's metadata, the node's package list, unpacking with file modes, and the
console scripts written beside the node's python3. The checks themselves need a GPU: here only their
refusals are tested.
"""

from __future__ import annotations

import shutil
import stat
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tools.offline_bundle import (
    ROOT,
    _console_scripts,
    _unpack,
    build,
    closure,
    cut_into_parts,
    node_conflicts,
    present_packages,
    stale_metadata,
    unpack_parts,
)


def test_present_packages_read_pip_freeze_and_plain_lists(tmp_path: Path) -> None:
    listing = tmp_path / "node.txt"
    listing.write_text("torch==2.11.0\nPyYAML==6.0\n# a comment\ntyping_extensions\n"
                       "nvidia-ml-py @ file:///wheels/x.whl\n\nscikit-learn>=1\n")
    assert present_packages(listing) == {"torch": "2.11.0", "pyyaml": "6.0", "typing-extensions": None,
                                         "nvidia-ml-py": None, "scikit-learn": None}


def test_the_closure_is_the_projects_needs_at_the_versions_tested_here() -> None:
    import importlib.metadata as md

    runtime = closure([], "3.12")
    assert {"ray", "optuna", "polars", "torch", "click", "sqlalchemy"} <= runtime.keys()
    assert "tensorboardx" in runtime  # from ray[tune]: extras of a requirement are followed
    assert "attention-studies" not in runtime
    assert runtime["ray"] == md.version("ray") and runtime["polars"] == md.version("polars")


def test_a_pyproject_newer_than_the_installed_project_stops_the_build(tmp_path: Path) -> None:
    """The closure comes from the installed metadata: a dependency added to pyproject.toml after the last
    `pip install -e .` (deltalake once) must stop the build, not leave the bundle without it."""
    assert stale_metadata() == [], "the installed project is older than pyproject.toml: run make setup"
    text = (ROOT / "pyproject.toml").read_text()
    assert '"click>=8.1",' in text
    newer = tmp_path / "pyproject.toml"
    newer.write_text(text.replace('"click>=8.1",', '"surely-new>=1",').replace('"ruff>=0.6",', '"ruff>=0.7",'))
    assert stale_metadata(newer) == ["ruff>=0.7 (extra test) declared but not installed",
                                     "surely-new>=1 declared but not installed",
                                     "click>=8.1 installed but no longer declared",
                                     "ruff>=0.6 (extra test) installed but no longer declared"]


def test_a_dependency_missing_here_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A requirement this environment lacks cannot be pinned to a tested version: the build stops naming it.
    The requiring distribution is a real dist-info on sys.path; markers decide what the node's Python needs."""
    info = tmp_path / "needy-1.0.dist-info"
    info.mkdir()
    info.joinpath("METADATA").write_text(
        "Metadata-Version: 2.1\nName: needy\nVersion: 1.0\nRequires-Dist: click\n"
        "Requires-Dist: surely-not-installed-here; python_version >= '3.12'\n"
        "Requires-Dist: another-absent-one; python_version < '3.8'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(SystemExit, match=r"^surely-not-installed-here \(needed on Python 3.12\) is not installed"):
        closure([], "3.12", root="needy")
    assert closure([], "3.11", root="needy").keys() == {"click"}  # neither marker holds on 3.11


def test_a_node_version_out_of_a_required_range_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The root (the project) and the packages a bundle would carry are checked against the node's versions;
    the node's own packages are not (their requirements are the node's business)."""
    for name, requires in (("needy", ["click>=99", "helper[fast]"]),
                           ("helper", ["pyyaml<1", "packaging>=99; extra == 'fast'"])):
        info = tmp_path / f"{name}-1.0.dist-info"
        info.mkdir()
        info.joinpath("METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
                                             + "".join(f"Requires-Dist: {r}\n" for r in requires))
    monkeypatch.syspath_prepend(str(tmp_path))
    node = {"click": "8.1.0", "pyyaml": "6.0", "packaging": "24.0"}
    assert node_conflicts(node, [], "3.12", root="needy") == [  # sorted
        "click 8.1.0 on the node; needy 1.0 needs click>=99",
        "packaging 24.0 on the node; helper 1.0 needs packaging>=99",
        "pyyaml 6.0 on the node; helper 1.0 needs pyyaml<1"]
    assert node_conflicts({**node, "helper": "1.0"}, [], "3.12", root="needy") == [  # helper is the node's: its
        "click 8.1.0 on the node; needy 1.0 needs click>=99",  # base requirements are not checked, but what
        "packaging 24.0 on the node; helper 1.0 needs packaging>=99"]    # needy's [fast] asks of it is
    assert node_conflicts({"click": None, "packaging": "not-a-version"}, [], "3.12", root="needy") == []


def test_a_node_without_its_own_torch_is_refused_before_any_download(tmp_path: Path) -> None:
    listing = tmp_path / "node.txt"
    listing.write_text("numpy==2.0\n")
    args = type("Args", (), {"present": listing, "extras": [], "python": "3.12", "out": tmp_path / "b.tar.xz"})
    with pytest.raises(SystemExit, match=r"invalid --present .*node.txt: torch is not listed"):
        build(args)
    assert not (tmp_path / "b.tar.xz").exists()


def test_parts_are_cut_first_fit_decreasing_within_the_limit() -> None:
    sizes = {"polars": 27, "deltalake": 26, "ray": 22, "sqlalchemy": 3, "optuna": 1, "tiny": 1}
    parts = cut_into_parts(sizes, 56)
    assert parts == [["polars", "deltalake", "sqlalchemy"], ["ray", "optuna", "tiny"]]
    assert all(sum(sizes[n] for n in part) <= 56 for part in parts)
    assert sorted(n for part in parts for n in part) == sorted(sizes)
    assert cut_into_parts(sizes, 100) == [["polars", "deltalake", "ray", "sqlalchemy", "optuna", "tiny"]]
    with pytest.raises(SystemExit, match=r"invalid --part-mb 2.5e-05: polars \(0.0 MB\), deltalake .* exceed"):
        cut_into_parts(sizes, 25)


def _part(path: Path, modules: dict[str, str], build: str = "b1") -> Path:
    """A part as `build` writes it: a plain tar of its build's identity and one .tar.xz per package."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w") as outer:
        stamp = path.parent / "BUILD"
        stamp.write_text(build)
        outer.add(stamp, arcname="BUILD")
        for name, body in modules.items():
            src = path.parent / f"{name}.py"
            src.write_text(body)
            inner = path.parent / f"{name}.tar.xz"
            with tarfile.open(inner, "w:xz") as tar:
                tar.add(src, arcname=f"{name}.py")
            outer.add(inner, arcname=inner.name)
    return path


def test_parts_carried_separately_build_one_site(tmp_path: Path) -> None:
    """A device that caps one transfer gets the parts in separate calls: each install adds to the same site and
    the site says which parts it holds; a part of another build starts the site again; a stray file is refused."""
    one = _part(tmp_path / "a/part-1-of-2.tar", {"first_mod": "X = 1\n", "second_mod": "Y = 2\n"})
    two = _part(tmp_path / "b/part-2-of-2.tar", {"third_mod": "Z = 3\n"})
    site = tmp_path / "site"
    assert unpack_parts([one], site) == ([1], 2)
    assert (site / "first_mod.py").read_text() == "X = 1\n" and not (site / "third_mod.py").exists()
    assert unpack_parts([two.parent], site) == ([1, 2], 2)  # a directory of parts, in a later call
    assert sorted(p.name for p in site.glob("*.py")) == ["first_mod.py", "second_mod.py", "third_mod.py"]
    (site / "first_mod.py").write_text("X = 'kept'\n")  # a part the site holds is not unpacked again
    assert unpack_parts([one, two], site) == ([1, 2], 2)
    assert (site / "first_mod.py").read_text() == "X = 'kept'\n"
    newer = _part(tmp_path / "c/part-2-of-2.tar", {"fourth_mod": "W = 4\n"}, build="b2")  # same name, new build
    assert unpack_parts([newer], site) == ([2], 2)
    assert [p.name for p in site.glob("*.py")] == ["fourth_mod.py"]
    with pytest.raises(SystemExit, match=r"invalid bundle .*bundle.tar.xz: allowed: part-I-of-N.tar"):
        unpack_parts([tmp_path / "bundle.tar.xz"], site)
    with pytest.raises(SystemExit, match=r"invalid bundle: parts of different builds"):
        unpack_parts([one, newer], site)
    bare = tmp_path / "d/part-1-of-1.tar"
    bare.parent.mkdir()
    with tarfile.open(bare, "w"):
        pass
    with pytest.raises(SystemExit, match=r"invalid bundle .*part-1-of-1.tar: it names no build"):
        unpack_parts([bare], site)


def test_unpacking_keeps_the_executable_bit(tmp_path: Path) -> None:
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, mode in (("pkg/server", 0o755), ("pkg/data.txt", 0o644)):
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFREG | mode) << 16
            archive.writestr(info, "x")
    _unpack(wheel, tmp_path / "site")
    assert stat.S_IMODE((tmp_path / "site/pkg/server").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "site/pkg/data.txt").stat().st_mode) == 0o644


def test_a_wheels_data_directory_lands_where_pip_would_put_it(tmp_path: Path) -> None:
    """purelib joins the tree, scripts go beside python3 with the installing interpreter in their #! line,
    data (man pages, kernel specs) is left out and named."""
    wheel = tmp_path / "tool-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("tool/__init__.py", "")
        archive.writestr("tool-1.0.data/purelib/tool_extra.py", "X = 1\n")
        info = zipfile.ZipInfo("tool-1.0.data/scripts/run-tool")
        info.external_attr = (stat.S_IFREG | 0o755) << 16
        archive.writestr(info, "#!python\nprint('ran')\n")
        archive.writestr("tool-1.0.data/data/share/man/man1/tool.1", ".TH tool")
    site, bin_dir = tmp_path / "site", tmp_path / "bin"
    assert _unpack(wheel, site) == ["tool-1.0.data/data/share/man/man1/tool.1"]
    assert (site / "tool_extra.py").read_text() == "X = 1\n" and not list(site.glob("*.data"))
    bin_dir.mkdir()
    assert _console_scripts(site, bin_dir) == ["run-tool"]
    assert (bin_dir / "run-tool").read_text() == f"#!{sys.executable}\nprint('ran')\n"
    assert subprocess.run([str(bin_dir / "run-tool")], capture_output=True, text=True).stdout == "ran\n"


def test_console_scripts_run_and_skip_pruned_modules(tmp_path: Path) -> None:
    site, bin_dir = tmp_path / "site", tmp_path / "bin"
    (site / "hello").mkdir(parents=True)
    (site / "hello/__init__.py").write_text("def main():\n    print('hello from the bundle')\n    return 0\n")
    (site / "hello-1.0.dist-info").mkdir()
    (site / "hello-1.0.dist-info/entry_points.txt").write_text(
        "[console_scripts]\nhello = hello:main\ngone = hello.pruned.cli:main\n[other]\nx = hello:main\n")
    bin_dir.mkdir()
    (bin_dir / "keep").write_text("mine")
    assert _console_scripts(site, bin_dir) == ["hello"]
    assert sorted(p.name for p in bin_dir.iterdir()) == ["hello", "keep"]
    out = subprocess.run([str(bin_dir / "hello")], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(site)})
    assert out.stdout == "hello from the bundle\n"
    assert (bin_dir / "hello").read_text().startswith(f"#!{sys.executable}\n")


def test_the_gpu_checks_refuse_bad_input_and_a_machine_without_cuda(tmp_path: Path) -> None:
    """bench/gpu_checks.sh (docs/gpu.md): one line for a stage it does not know or a bad budget (exit 2) and,
    where no nvidia-smi is found, one line saying the stage needs a CUDA machine (exit 1), before it writes
    anything. PATH is an empty directory, so this holds on a GPU machine too (the checks are shell builtins)."""
    script = Path(__file__).resolve().parent.parent / "bench" / "gpu_checks.sh"
    (tmp_path / "empty").mkdir()
    bash = shutil.which("bash")
    assert bash is not None

    def run(*args: str) -> tuple[int, str]:
        done = subprocess.run([bash, str(script), *args], capture_output=True, text=True,
                              env={"PATH": str(tmp_path / "empty")})
        return done.returncode, done.stderr

    out = str(tmp_path / "out")
    allowed = "tests, device-tests, bench-fp32, bench-bf16, fractions, paper, step, figure"
    assert run("warmup", out) == (2, f"unknown STAGE 'warmup'; allowed: {allowed}\n")
    assert run("paper", out, "30") == (2, "invalid SECONDS '30'; allowed: a whole number of seconds, at least 60\n")
    assert run("bench-bf16", out) == (1, "nvidia-smi not found: the bench-bf16 stage needs a CUDA machine\n")
    assert run("figure", out) == (1, "nvidia-smi not found: the figure stage needs a CUDA machine "
                                     "(FIGURE_DEVICE=cpu runs it on a CPU)\n")
    assert run("figure", out, "60") == (1, "nvidia-smi not found: the figure stage needs a CUDA machine "
                                           "(FIGURE_DEVICE=cpu runs it on a CPU)\n")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("limit", "fits_up_to", "predicted", "expected", "built"), [
    (4096, 700, 900.0, 512, [512, 1024]),   # the guess fits, its double does not
    (4096, 300, 900.0, 256, [512, 256]),    # the guess does not fit: halve (512 known to fail: not rebuilt)
    (100, 90, 128.0, 64, []),               # a guess above the limit halves below it first (to K=64, which
    (48, 60, 54.0, 48, []),                 # the prediction's step showed to fit); a limit below 64: 48 x 2^i
    (4096, 700, None, 512, [64, 128, 256, 512, 1024]),  # no memory reading (a CPU): double from the start
])
def test_the_largest_k_search(limit: int, fits_up_to: int, predicted: float | None, expected: int,
                              built: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/throughput.py --max-k: the CUDA search from one step's memory, with the GPU replaced by a rule
    (K members fit up to `fits_up_to`) and the prediction given; `built` lists the packs it builds after the
    prediction's own step (which showed the lowest K to fit)."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent / "bench"))
    import throughput

    tried: list[int] = []
    monkeypatch.setattr(throughput, "_predicted", lambda cfg, lowest: predicted)
    monkeypatch.setattr(throughput, "_fits", lambda cfg, k: tried.append(k) or k <= fits_up_to)
    assert throughput.largest_pack(None, limit) == expected  # type: ignore[arg-type]
    assert tried == built
