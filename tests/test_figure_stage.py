"""`bench/gpu_checks.sh figure` on this CPU, the way a GPU window runs it (docs/gpu.md): the same script, its install
step included, so a window never finds it broken.

The node is made here: a fresh virtual environment that holds the GPU image's packages (tools/gpu-node-packages.txt:
torch, numpy, pyarrow, scipy, ..., linked from this environment) and nothing else; the bundle is built for that list
with `tools/offline_bundle.py build --from-installed` (this environment's files, xz preset 0 to be quick; the GPU's
bundle is built the same way from downloaded wheels at preset 9). The stage installs it, runs richter2020.fig7 at
smoke scale through a real local Ray (every rate and seed of a configuration in one trial, the adaptive budget, the
smallest d first), without deltalake as on the node, and leaves its rows in OUT/figure.tar.gz; a second call, after one
trial's file is taken away (a window cut off before it), trains that trial alone.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
from pathlib import Path

import polars as pl
import pytest

from tests.cli import LOCAL_RAY
from tools.offline_bundle import ROOT, build_id, closure, present_packages

NODE_LIST = ROOT / "tools" / "gpu-node-packages.txt"


def _image(names: list[str], image: Path) -> None:
    """Links to the files this environment installed for ``names`` (each distribution's top-level entries)."""
    image.mkdir(parents=True)
    for name in names:
        for top in {Path(str(f)).parts[0] for f in md.distribution(name).files or []} - {"..", "__pycache__"}:
            source = Path(sysconfig.get_paths()["purelib"]) / top
            if source.exists() and not (image / top).exists():
                (image / top).symlink_to(source)


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("node")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    _image(["pip", *sorted(present_packages(NODE_LIST))], base / "image")  # pip and setuptools: the image's
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "gpu-image.pth").write_text(f"{base / 'image'}\n")
    bundle = _bundle()
    lacks = subprocess.run([str(venv / "bin/python"), "-c", "import ray"], capture_output=True, text=True)
    assert "No module named 'ray'" in lacks.stderr  # the node lacks what the bundle brings
    return {"base": base, "bin": venv / "bin", "bundle": bundle}


def _bundle() -> Path:
    """The bundle for the node's list, built once per set of pinned versions and version of the builder, in the
    user's cache (XDG_CACHE_HOME, else ~/.cache: a clean clone finds it too): the build takes 79-219 s here, the
    install that the stage runs is what this test is about."""
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    pins = {n: v for n, v in closure([], python, skip=frozenset({"deltalake"})).items()
            if n not in present_packages(NODE_LIST)}
    builder = hashlib.sha256((ROOT / "tools/offline_bundle.py").read_bytes()).hexdigest()[:12]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "attention-studies" / "test-bundle"
    out = cache / f"{build_id(python, pins)}-{builder}"
    if not out.is_dir():
        started = time.time()
        partial = out.with_name(f"{out.name}.{os.getpid()}.partial")  # renamed when whole: a cut-off build is no hit
        shutil.rmtree(partial, ignore_errors=True)
        built = subprocess.run([sys.executable, str(ROOT / "tools/offline_bundle.py"), "build", "--present",
                                str(NODE_LIST), "--python", python, "--from-installed", "--xz-preset", "0",
                                "--part-mb", "1000", "--out", str(partial)], capture_output=True, text=True)
        assert built.returncode == 0, built.stdout + built.stderr
        print(f"bundle built in {time.time() - started:.0f} s")
        assert "left out on purpose (--leave-out): deltalake" in built.stdout
        try:
            partial.rename(out)
        except OSError:  # another session's build got there first: the same pins and builder, the same bundle
            shutil.rmtree(partial)
    assert [p.name for p in out.iterdir()] == ["part-1-of-1.tar"]
    with tarfile.open(out / "part-1-of-1.tar") as tar:
        names = set(tar.getnames())
    assert {"ray.tar.xz", "polars.tar.xz", "optuna.tar.xz", "pydantic.tar.xz"} <= names
    assert not {"deltalake.tar.xz", "numpy.tar.xz", "torch.tar.xz"} & names
    return out


def _stage(node: dict[str, Path], out: Path) -> tuple[subprocess.CompletedProcess, Path]:
    env = {**os.environ, "PATH": f"{node['bin']}:{os.environ['PATH']}", "BUNDLE": str(node["bundle"]),
           "BUNDLE_SITE": str(node["base"] / "site"), "FIGURE_DEVICE": "cpu", "FIGURE_SCALE": "smoke",
           "FIGURE_STORAGE": str(node["base"] / "storage"), **LOCAL_RAY}
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(["bash", str(ROOT / "bench/gpu_checks.sh"), "figure", str(out), "540"], env=env,
                          capture_output=True, text=True, timeout=600)
    with tarfile.open(out / "figure.tar.gz") as tar:
        tar.extractall(out, filter="data")
    return done, out / "figure"


def _trial_files(stage: Path) -> list[str]:
    return sorted(p.stem for p in (stage / "results/richter2020.fig7.smoke/trials").glob("*.parquet"))


@pytest.mark.slow
@pytest.mark.timeout(1500)  # two calls, each starting Ray: 3 to 6 minutes each on this 2-core machine under load
def test_the_figure_stage_installs_the_bundle_runs_the_figure_and_resumes(node: dict[str, Path],
                                                                           tmp_path: Path) -> None:
    started = time.time()
    first, stage = _stage(node, tmp_path / "one")
    print(f"first call {time.time() - started:.0f} s")
    log = (stage / "figure.log").read_text()
    assert first.returncode == 0, first.stdout + first.stderr
    assert "parts installed: [1] of 1" in (stage / "install.log").read_text()
    assert (stage / "ready.txt").read_text().startswith("ready: torch ")
    assert "== install" in first.stdout and "== richter2020.fig7 --scale smoke: done" in first.stdout
    assert "deltalake is not installed: trial files stay in trials/" in log  # the bundle leaves it out
    assert "4 trials x 2 seeds, adaptive budget" in log and "0 finished before, 4 to run" in log
    assert "4/4 trials finished, 0 failed" in log
    assert "done 4 | running 0 | failed 0 | unreadable 0 | pending 0 | total 4" in (stage / "status.txt").read_text()
    keys = _trial_files(stage)
    assert len(keys) == 4
    rows = pl.read_parquet(stage / "results/richter2020.fig7.smoke/trials/*.parquet")
    per_trial = rows.group_by("trial_key").agg(pl.col("learning_rate").n_unique(), pl.col("seed").n_unique())
    assert per_trial.get_column("learning_rate").to_list() == [2] * 4  # every rate and seed of a configuration
    assert per_trial.get_column("seed").to_list() == [2] * 4
    assert sorted(rows.unique("trial_key", maintain_order=True).get_column("d_model").to_list()) == [8, 8, 16, 16]
    assert "torch==" in (stage / "node-packages.txt").read_text()

    storage = node["base"] / "storage/richter2020.fig7.smoke/trials"
    lost = max(storage.glob("*.parquet"))  # as if the window had closed before this trial ended
    lost.unlink()
    started = time.time()
    second, stage = _stage(node, tmp_path / "two")
    print(f"second call {time.time() - started:.0f} s")
    log = (stage / "figure.log").read_text()
    assert second.returncode == 0, second.stdout + second.stderr
    assert "3 finished before, 1 to run" in log and "running 1 trials" in log
    assert _trial_files(stage) == keys  # the same trials, the lost one once more, none repeated
