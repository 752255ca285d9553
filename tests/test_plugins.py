"""Your own code, not a fork (issue 34): a mixer, task or model family of yours runs in a study with no edit to this
project, is imported on every Ray worker (shipped to nodes that lack it), is checked before launch, and a bug in it
fails its trial once.

Every test works from a folder outside the tree (``tmp_path``), as a researcher would: the `study` command is run
there with the checkout importable (tests.cli) but never the user's folder on any worker's path.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from tests.cli import ROOT, alive_nodes, free_port, ray_node, rows, run_cli

#: The issue's scenario: a mixer defined in the study file itself (and a helper module beside it), used in a study.
OUTSIDE_STUDY = '''"""A researcher's own file: a ReLU attention mixer and a study that uses it."""
import json
import os
import sys

import torch

from my_helpers import relu_weights  # a module of this folder: shipped to the workers with the study file
from search_spaces import Study
from trainables.mixers.base import MIXERS, MultiHeadMixer

if os.environ.get("PLUGIN_MARKER"):  # set on the Ray nodes only: where did a worker import this file from?
    with open(os.environ["PLUGIN_MARKER"], "a") as marker:
        marker.write(json.dumps({"pid": os.getpid(), "file": __file__, "path": sys.path}) + "\\n")


@MIXERS.register("relu_attn_outside")
class ReluAttention(MultiHeadMixer):
    """Attention weights relu(q.k / sqrt(d_h)), normalised over the keys a token may see."""

    def weights(self, q, k, allowed=None):
        return relu_weights(q @ k.transpose(-2, -1) / self.d_head**0.5, allowed)


MINE = Study(name="t.outside", goal="a mixer of my own, defined in this very file",
             scientific={"mixer": ("relu_attn_outside", "softmax")},
             nuisance={"learning_rate": (0.003, 0.01)},
             fixed={"architecture": "MTE", "d_model": 8, "n_heads": 2, "seq_len": 8, "n_layers": 2, "n_steps": 20,
                    "eval_every": 10, "eval_batches": 2, "batch_size": 4},
             tasks=("mode",), seeds=(0, 1), scales={"smoke": {}})
# Trials long enough (a few seconds) that two run at once, one on each node of a two-node cluster.
MINE_LONG = MINE.replace(name="t.outside_long", fixed={**MINE.fixed, "n_steps": 600, "eval_every": 300})
'''

HELPERS = '''import torch


def relu_weights(z, allowed=None):
    s = torch.relu(z) + 1e-6
    if allowed is not None:
        s = s.masked_fill(~allowed, 0.0)
    return s / s.sum(dim=-1, keepdim=True).clamp_min(1e-12)
'''


def _user_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "user"
    folder.mkdir()
    (folder / "my_study.py").write_text(OUTSIDE_STUDY)
    (folder / "my_helpers.py").write_text(HELPERS)
    return folder


@pytest.mark.slow
def test_a_mixer_defined_in_the_study_file_trains_on_every_worker(tmp_path: Path) -> None:
    folder = _user_folder(tmp_path)
    result = run_cli("run", "my_study.py:MINE", "--scale", "smoke", "--storage", str(tmp_path / "out"), cwd=folder)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "preflight: 2 distinct configuration(s)" in result.stdout  # one per mixer; the rate costs nothing
    df = rows(tmp_path / "out" / "t.outside.smoke")
    assert sorted(df["mixer"].unique()) == ["relu_attn_outside", "softmax"]
    assert set(df["status"]) == {"ok"} and df.height == 4 * 2 * 2  # 4 trials x 2 seeds x 2 evaluations
    label = df["plugins"].unique().to_list()
    assert len(label) == 1 and label[0].startswith("my_helpers sha256:") and "my_study.py sha256:" in label[0]
    run = json.loads((tmp_path / "out" / "t.outside.smoke" / "study.json").read_text())["run"]
    plugins = {p["origin"]: p for p in run["plugins"]}
    assert plugins["study file"]["registered"] == ["mixer 'relu_attn_outside'"]
    assert plugins["study file's folder"]["module"] == "my_helpers"


@pytest.mark.slow
def test_user_code_travels_to_a_two_node_cluster_whose_workers_lack_the_users_folder(tmp_path: Path) -> None:
    folder = _user_folder(tmp_path)
    marker = tmp_path / "imports.jsonl"
    node_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RAY_ADDRESS")}
    node_env.update(RAY_AUTH_MODE="token", PLUGIN_MARKER=str(marker))
    port = free_port()
    address = f"127.0.0.1:{port}"
    head = ray_node("--head", "--port", str(port), "--include-dashboard", "false", "--node-ip-address", "127.0.0.1",
                    env=node_env, cwd="/")
    worker = None
    try:
        assert alive_nodes(address, 1, node_env, timeout=90) == 1, "the head did not start"
        worker = ray_node("--address", address, "--node-ip-address", "127.0.0.1", env=node_env, cwd="/")
        assert alive_nodes(address, 2, node_env, timeout=90) == 2, "the second Ray node did not join"
        result = run_cli("run", "my_study.py:MINE_LONG", "--scale", "smoke", "--storage", str(tmp_path / "out"),
                         "--address", address, cwd=folder, env={"RAY_AUTH_MODE": "token"}, timeout=300)
    finally:
        for node in (worker, head):
            if node is not None and node.poll() is None:
                os.killpg(node.pid, signal.SIGKILL)
                node.wait()
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    df = rows(tmp_path / "out" / "t.outside_long.smoke")
    assert df["node_id"].n_unique() == 2  # both nodes trained trials of the user's mixer
    assert set(df["status"]) == {"ok"} and "relu_attn_outside" in set(df["mixer"])
    imports = [json.loads(line) for line in marker.read_text().splitlines()]
    assert imports, "no worker imported the study file"
    for seen in imports:  # every worker imported Ray's shipped copy, with the user's folder nowhere on its path
        assert not Path(seen["file"]).is_relative_to(folder), seen["file"]
        assert "runtime_resources" in seen["file"]
        assert not any(str(folder) in entry for entry in seen["path"])


#: A mixer whose bug shows only in training (after its 10th call): preflight's one step passes, every trial fails.
BUGGY_STUDY = '''import os

from search_spaces import Study
from trainables.mixers.base import MIXERS, MultiHeadMixer
from trainables.mixers.softmax import softmax_weights


@MIXERS.register("buggy_outside")
class Buggy(MultiHeadMixer):
    def weights(self, q, k, allowed=None):
        self.calls = getattr(self, "calls", 0) + 1
        if self.calls > 10:
            with open(os.environ["ATTEMPTS"], "a") as attempts:
                attempts.write("attempt\\n")
            raise ValueError("a bug in my mixer's code")
        return softmax_weights(q @ k.transpose(-2, -1), allowed)


BUGGY = Study(name="t.buggy", goal="a bug fails its trial once", scientific={"mixer": ("buggy_outside",)},
              fixed={"architecture": "MTE", "d_model": 8, "n_heads": 2, "seq_len": 8, "n_layers": 2, "n_steps": 40,
                     "eval_every": 20, "eval_batches": 2, "batch_size": 4, "learning_rate": 0.003},
              tasks=("mode",), seeds=(0,), scales={"smoke": {}})
'''


@pytest.mark.slow
def test_a_bug_in_a_trial_fails_it_at_its_first_occurrence_with_its_traceback(tmp_path: Path) -> None:
    (tmp_path / "buggy.py").write_text(BUGGY_STUDY)
    attempts = tmp_path / "attempts.txt"
    result = run_cli("run", "buggy.py:BUGGY", "--scale", "smoke", "--storage", str(tmp_path / "out"), cwd=tmp_path,
                     env={"ATTEMPTS": str(attempts)})
    assert result.returncode == 1, result.stdout + result.stderr
    assert attempts.read_text().count("attempt") == 1  # not retried (Ray would have run it 3 times)
    assert "failed (an error in its code, not retried): ValueError: a bug in my mixer's code" in result.stdout
    assert "0/1 trials finished, 1 failed" in result.stdout
    [record] = (tmp_path / "out" / "t.buggy.smoke" / "failed").glob("*.json")
    failure = json.loads(record.read_text())
    assert failure["retried"] is False and 'buggy.py", line' in failure["error"]  # the whole traceback
    assert failure["error"].strip().endswith("ValueError: a bug in my mixer's code")


def test_infrastructure_faults_are_retried_and_bugs_are_not(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from study.trial import failures
    from study.trial.devices import DeviceError
    from study.trial.failures import is_infrastructure

    monkeypatch.setattr(failures, "_BROKEN_CUDA", [])
    for fault in (MemoryError(), ConnectionError("storage"), TimeoutError(), OSError("disk"), DeviceError("no GPU"),
                  torch.OutOfMemoryError("CUDA out of memory"),
                  RuntimeError("CUDA error: an illegal memory access was encountered"),
                  RuntimeError("CUDA error: unspecified launch failure"),
                  RuntimeError("CUBLAS_STATUS_EXECUTION_FAILED")):
        assert is_infrastructure(fault), fault
    assert_ = RuntimeError("CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously "
                           "reported at some other API call, so the stacktrace below might be incorrect.")
    for bug in (TypeError("weights() takes 3 positional arguments but 4 were given"), ValueError("x"),
                AssertionError(), KeyError("k"), RuntimeError("mat1 and mat2 shapes cannot be multiplied"), assert_):
        assert not is_infrastructure(bug), bug
    # After a device-side assert failed its trial once, the worker's CUDA context is broken: the next trial's CUDA
    # error there is that, not its code's, and is retried (on a new worker: Tune replaces one whose trial raised).
    reports: list[dict] = []

    class Storage:
        def write_failed(self, key: str, info: dict) -> None:
            reports.append(info)

    failures.fail_once(Storage(), "k", {}, assert_, node="n", report=reports.append)  # type: ignore[arg-type]
    assert reports[-1]["failed"] == "RuntimeError: CUDA error: device-side assert triggered"
    assert is_infrastructure(RuntimeError("CUDA error: device-side assert triggered"))
    assert not is_infrastructure(ValueError("still a bug"))


PREFLIGHT_FAILS = '''from search_spaces import Study
from trainables.mixers.base import MIXERS, MultiHeadMixer


@MIXERS.register("wrong_shape_outside")
class WrongShape(MultiHeadMixer):
    def weights(self, q, k, allowed=None):
        return q @ k  # (.., N, d_h) @ (.., N, d_h): a shape error on the first forward pass


WRONG = Study(name="t.wrong", goal="refused before launch", scientific={"mixer": ("wrong_shape_outside", "softmax")},
              fixed={"architecture": "MTE", "d_model": 8, "n_heads": 2, "seq_len": 8, "n_layers": 2, "n_steps": 20,
                     "eval_every": 10, "eval_batches": 2, "batch_size": 4, "learning_rate": 0.003},
              tasks=("mode",), seeds=(0,), scales={"smoke": {}})
'''


def test_a_component_that_fails_a_one_step_run_is_refused_before_ray_starts(tmp_path: Path) -> None:
    (tmp_path / "wrong.py").write_text(PREFLIGHT_FAILS)
    result = run_cli("run", "wrong.py:WRONG", "--scale", "smoke", "--storage", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("Error: study t.wrong: the richter2020 family failed a one-step run at "
                           "{mixer='wrong_shape_outside'} (before launch, on the CPU): at wrong.py:8: RuntimeError: ")
    assert "ray:" not in result.stdout and not (tmp_path / "out").exists()  # Ray never started, nothing written


LEGACY_STUDY = '''from search_spaces import Study
from trainables.mixers.base import MIXERS, MultiHeadMixer
from trainables.mixers.softmax import softmax_weights


@MIXERS.register("legacy_outside")
class Legacy(MultiHeadMixer):
    def weights(self, q, k):  # the interface before masks
        return softmax_weights(q @ k.transpose(-2, -1) / self.d_head**0.5)


CTL = Study(name="t.legacy", goal="needs a mask", scientific={"mixer": ("legacy_outside",)},
            fixed={"model": "Transformer", "d_model": 8, "n_heads": 2, "n_layers": 2, "n_steps": 20, "eval_every": 10,
                   "eval_samples": 8, "batch_size": 4},
            tasks=("ctl",), seeds=(0,), scales={"smoke": {}})
'''


def test_a_mixer_written_before_masks_is_refused_where_a_task_needs_one_with_what_to_change(tmp_path: Path) -> None:
    (tmp_path / "legacy.py").write_text(LEGACY_STUDY)
    result = run_cli("run", "legacy.py:CTL", "--scale", "smoke", "--storage", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "invalid mixer='legacy_outside'" in line and "supports a key-padding mask" in line
    assert "weights(self, q, k) takes no `allowed`" in line and "weights(self, q, k, allowed=None)" in line


#: A mixer whose weights take `allowed` keyword-only: it supports masks, and is called the way it declared it.
KEYWORD_ONLY_STUDY = '''from search_spaces import Study
from trainables.mixers.base import MIXERS, MultiHeadMixer
from trainables.mixers.softmax import softmax_weights


@MIXERS.register("keyword_only_outside")
class KeywordOnly(MultiHeadMixer):
    def weights(self, q, k, *, allowed=None):
        return softmax_weights(q @ k.transpose(-2, -1) / self.d_head**0.5, allowed)


CTL = Study(name="t.keyword_only", goal="masks through a keyword-only allowed",
            scientific={"mixer": ("keyword_only_outside",)},
            fixed={"model": "Transformer", "d_model": 8, "n_heads": 2, "n_layers": 2, "n_steps": 20, "eval_every": 10,
                   "eval_samples": 8, "batch_size": 4, "learning_rate": 0.001},
            tasks=("ctl",), seeds=(0,), scales={"smoke": {}})
'''

PREFLIGHT_ONLY = ("import sys\nfrom search_spaces import get_study\nfrom study.run.preflight import preflight\n"
                  "preflight(get_study(sys.argv[1], 'smoke'))\n")


@pytest.mark.slow  # a Python subprocess
def test_a_mixer_whose_allowed_is_keyword_only_passes_preflight_on_a_task_with_masks(tmp_path: Path) -> None:
    """The signature is read whatever the parameter's kind: the mixer supports masks, CTL accepts it, and its one-step
    run (masks and all) passes preflight, run from the user's folder."""
    (tmp_path / "kw.py").write_text(KEYWORD_ONLY_STUDY)
    out = subprocess.run([sys.executable, "-c", PREFLIGHT_ONLY, "kw.py:CTL"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=240, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-3000:]
    assert "preflight: 1 distinct configuration(s) trained one step" in out.stdout


@pytest.mark.slow
def test_a_mixer_whose_allowed_is_keyword_only_trains_on_ctl(tmp_path: Path) -> None:
    (tmp_path / "kw.py").write_text(KEYWORD_ONLY_STUDY)
    result = run_cli("run", "kw.py:CTL", "--scale", "smoke", "--storage", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    df = rows(tmp_path / "out" / "t.keyword_only.smoke")
    assert set(df["status"]) == {"ok"} and set(df["mixer"]) == {"keyword_only_outside"}


NO_ALLOWED_STUDY = LEGACY_STUDY.replace("def weights(self, q, k):  # the interface before masks",
                                        "def weights(self, q, k, *, scale=1.0):  # no allowed, of any kind")


def test_a_mixer_truly_without_allowed_is_refused_with_the_signature_it_has(tmp_path: Path) -> None:
    (tmp_path / "no_allowed.py").write_text(NO_ALLOWED_STUDY)
    result = run_cli("run", "no_allowed.py:CTL", "--scale", "smoke", "--storage", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "invalid mixer='legacy_outside'" in line
    assert "its weights(self, q, k, *, scale=1.0) takes no `allowed`" in line  # what the signature is, quoted
    assert "weights(self, q, k, allowed=None)" in line and not (tmp_path / "out").exists()


def test_weights_get_allowed_the_way_their_signature_declares_it() -> None:
    import torch

    from trainables.mixers.base import MultiHeadMixer
    from trainables.mixers.softmax import SoftmaxAttention, softmax_weights

    seen: dict[str, object] = {}

    class KeywordOnly(MultiHeadMixer):
        def weights(self, q, k, *, allowed=None):
            seen["keyword_only"] = allowed
            return softmax_weights(q @ k.transpose(-2, -1) / self.d_head**0.5, allowed)

    class NotThird(MultiHeadMixer):
        def weights(self, q, k, temperature=1.0, allowed=None):  # positionally, allowed would land in temperature
            seen["not_third"] = (temperature, allowed)
            return softmax_weights(q @ k.transpose(-2, -1) / self.d_head**0.5 / temperature, allowed)

    class AnyKeywords(MultiHeadMixer):
        def weights(self, q, k, **options):
            seen["kwargs"] = options
            return softmax_weights(q @ k.transpose(-2, -1) / self.d_head**0.5, options.get("allowed"))

    assert [(c.allowed_by, c.supports_mask, c.legacy_weights) for c in (KeywordOnly, NotThird, AnyKeywords)] == [
        ("keyword", True, False)] * 3
    assert SoftmaxAttention.allowed_by == "positional"
    x, mask = torch.randn(2, 5, 8), torch.tensor([[True] * 5, [True, True, True, False, False]])
    torch.manual_seed(0)
    reference = SoftmaxAttention(8, 2)(x, mask)
    for cls in (KeywordOnly, NotThird, AnyKeywords):
        torch.manual_seed(0)
        assert torch.allclose(cls(8, 2)(x, mask), reference, atol=1e-6), cls  # the mask reached weights
    assert seen["keyword_only"] is not None and seen["not_third"][0] == 1.0 and "allowed" in seen["kwargs"]


@pytest.fixture
def registered():
    """Mixer classes a test registers, removed again after it (the registry is the process's)."""
    from trainables.mixers import MIXERS

    names: list[str] = []
    yield names
    for name in names:
        MIXERS._items.pop(name, None)


def test_a_mixer_written_before_masks_still_trains_where_no_task_needs_one(registered: list[str]) -> None:
    import torch

    from trainables.mixers import MIXERS
    from trainables.mixers.base import MultiHeadMixer
    from trainables.mixers.softmax import SoftmaxAttention, softmax_weights

    class Legacy(MultiHeadMixer):
        def weights(self, q, k):
            return softmax_weights(q @ k.transpose(-2, -1) / self.d_head**0.5)

    assert Legacy.legacy_weights and not Legacy.supports_mask and not Legacy.supports_causal
    assert not SoftmaxAttention.legacy_weights and SoftmaxAttention.supports_mask
    torch.manual_seed(0)
    old = Legacy(8, 2)
    torch.manual_seed(0)
    new = SoftmaxAttention(8, 2)
    x = torch.randn(3, 5, 8)
    assert torch.allclose(old(x), new(x), atol=1e-6)  # called as weights(q, k): the interface it was written for
    with pytest.raises(ValueError, match="weights\\(self, q, k\\) takes no `allowed`"):
        old(x, torch.ones(3, 5, dtype=torch.bool))
    MIXERS.add("legacy_in_test", Legacy)
    registered.append("legacy_in_test")
    from trainables.richter2020.config import TrainConfig

    TrainConfig(architecture="MTE", task="mode", mixer="legacy_in_test", d_model=8, n_heads=2)  # accepted
    with pytest.raises(TypeError, match="declares supports_mask but its weights"):
        class Lying(MultiHeadMixer):
            supports_mask = True

            def weights(self, q, k):
                return q


def test_a_worker_whose_plugin_differs_from_the_drivers_refuses_it() -> None:
    from trainables import plugins

    plugins.load_installed()
    record = [p for p in plugins.record() if p["origin"] == "entry point"]
    assert {p["module"] for p in record} >= {"trainables.richter2020.family", "trainables.gros2024.family"}
    tampered = [{**record[0], "sha256": "0" * 64}]
    with pytest.raises(plugins.PluginError, match="differs here from the driver's: sha256 .* driver 000000000000"):
        plugins.activate(tampered)
    plugins.activate(record)  # the driver's own record is accepted as it is


def test_the_projects_families_come_in_through_the_same_entry_point_group() -> None:
    import tomllib

    from trainables import catalog, plugins

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"][plugins.GROUP]
    assert sorted(declared.values()) == sorted(f"trainables.{f}.family" for f in
                                               ("richter2020", "csordas2021", "gros2024", "pooling_scale"))
    registered = {p.module: p.registered for p in plugins.load_installed()}
    assert {m: registered[m] for m in declared.values()} == {
        m: (f"model family {m.split('.')[1]!r}",) for m in declared.values()}
    assert "MODULES" not in "".join(vars(catalog))  # no list of family modules left in the catalog


def test_an_address_where_no_ray_cluster_answers_ends_in_one_line_within_30_s(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    started = time.time()
    result = run_cli("run", "demo", "--scale", "smoke", "--storage", str(tmp_path), "--address", f"127.0.0.1:{port}",
                     timeout=60)
    assert time.time() - started < 30
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: invalid --address '127.0.0.1:{port}': no Ray cluster answers there (")
    assert "allowed: the HOST:PORT of a running Ray head" in line
    assert not any(word in result.stdout for word in ("ray:", "raylet", "gcs", "INFO", "WARNING"))


EXAMPLE = ROOT / "examples" / "zoo_recall"
#: The example's mixer from its entry point alone: this study names no plugins.
BY_ENTRY_POINT = '''from search_spaces import Study

LINEAR = Study(name="t.entry_point", goal="a mixer of an installed package, found through its entry point",
               scientific={"mixer": ("linear_attention",)}, nuisance={"learning_rate": (0.003,)},
               fixed={"architecture": "MTE", "d_model": 8, "n_heads": 2, "seq_len": 8, "n_layers": 2, "n_steps": 20,
                      "eval_every": 10, "eval_batches": 2, "batch_size": 4},
               tasks=("mode",), seeds=(0,), scales={"smoke": {}})
'''


@pytest.mark.slow
def test_the_worked_example_installed_from_outside_runs_its_study_and_report(tmp_path: Path) -> None:
    source = tmp_path / "zoo_recall"  # the package as a user has it: a folder outside this tree
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    site = tmp_path / "site"  # its install, for these processes and their Ray workers
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                              "--target", str(site), str(source)], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr[-3000:]
    work = tmp_path / "work"
    work.mkdir()
    (work / "studies.py").write_text((EXAMPLE / "studies.py").read_text())
    env = {"PYTHONPATH": f"{ROOT}{os.pathsep}{site}"}
    result = run_cli("run", "studies.py:RECALL", "--scale", "smoke", "--storage", "out", "--report", cwd=work, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    df = rows(work / "out" / "zoo_recall.recall.smoke")
    assert sorted(df["task"].unique()) == ["mqar", "recall"]  # a new family's task and a new task of ours
    assert sorted(df["mixer"].unique()) == ["linear_attention", "mean", "softmax"]
    assert set(df["status"]) == {"ok"} and df.height == 6 * 2 * 2
    assert df.filter(pl.col("task") == "mqar")["n_pairs"].unique().to_list() == [3]  # the mqar family's own column
    assert all("zoo_recall 0.1.0 sha256:" in label for label in df["plugins"])
    assert (work / "out" / "zoo_recall.recall.smoke" / "report" / "index.html").is_file()
    assert "zoo_recall.recall: best val_accuracy G per mixer" in result.stdout

    (work / "linear.py").write_text(BY_ENTRY_POINT)
    result = run_cli("run", "linear.py:LINEAR", "--scale", "smoke", "--storage", "out", cwd=work, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    run = json.loads((work / "out" / "t.entry_point.smoke" / "study.json").read_text())["run"]
    assert {p["module"]: p["origin"] for p in run["plugins"]}["zoo_recall"] == "entry point"


MY_ATLAS = '''import my_study  # a module of this folder: registers relu_attn_outside (OUTSIDE_STUDY)
from search_spaces.atlas import atlas_with

ATLAS = atlas_with("relu_attn_outside")
'''


@pytest.mark.slow
def test_your_mixer_joins_the_atlas_already_on_disk_and_only_its_trials_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    where = ("--scale", "smoke", "--storage", str(out), "--where", "task=mode")
    assert run_cli("run", "atlas", *where).returncode == 0
    before = rows(out / "atlas.smoke")
    folder = _user_folder(tmp_path)
    (folder / "my_atlas.py").write_text(MY_ATLAS)
    result = run_cli("run", "my_atlas.py:ATLAS", *where, "--report", cwd=folder)
    assert result.returncode in (0, 3), result.stdout[-3000:] + result.stderr[-3000:]  # 3: a finding fails at smoke
    assert "20 finished before, 2 to run" in result.stdout  # 10 mixers x 2 rates were there; yours: 2 rates
    after = rows(out / "atlas.smoke")
    mine = after.filter(pl.col("mixer") == "relu_attn_outside")
    assert mine["trial_key"].n_unique() == 2 and set(mine["status"]) == {"ok"}
    [label] = mine["plugins"].unique().to_list()
    assert {part.split(" sha256:")[0] for part in label.split("; ")} == {"my_atlas.py", "my_study", "my_helpers"}
    assert after.filter(pl.col("mixer") != "relu_attn_outside").sort(before.columns).select(before.columns).equals(
        before.sort(before.columns))  # the atlas' own rows untouched
    assert "relu_attn_outside" in (out / "atlas.smoke" / "report" / "index.html").read_text()


#: Two modules of a user's folder: the mixer's class lives in one, another registers it; a family kept in a global.
DEFINES = '''from trainables.mixers.base import MultiHeadMixer
from trainables.mixers.softmax import softmax_weights


class Defined(MultiHeadMixer):
    def weights(self, q, k, allowed=None):
        return softmax_weights(q @ k.transpose(-2, -1) / self.d_head**0.5, allowed)
'''
REGISTERS = '''from defines import Defined
from trainables.mixers.base import MIXERS

MIXERS.add("defined_elsewhere", Defined)
MIXERS.add("credited_here", type("Credited", (Defined,), {}), module=__name__)
'''


def test_what_a_plugin_registered_is_read_from_the_registrations_not_the_stack(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A registration credits the module a class says it was defined in, or the one passed explicitly; a module
    imported before it was loaded as a plugin still reports what it registered (no diff of one import)."""
    import importlib

    from trainables import plugins
    from trainables.mixers import MIXERS

    (tmp_path / "defines.py").write_text(DEFINES)
    (tmp_path / "registers.py").write_text(REGISTERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        importlib.import_module("registers")  # imported first, as a study file's sibling would be
        assert plugins.load_module("registers").registered == ("mixer 'credited_here'",)
        assert plugins.load_module("defines").registered == ("mixer 'defined_elsewhere'",)
    finally:
        for name in ("defined_elsewhere", "credited_here"):
            MIXERS._items.pop(name, None)
        for name in ("defines", "registers"):
            plugins._LOADED.pop(name, None)
            sys.modules.pop(name, None)
    registry = (ROOT / "core" / "registry.py").read_text()
    assert "_getframe" not in registry and "f_back" not in registry and "inspect.stack" not in registry


@pytest.mark.slow  # a Python subprocess
def test_there_is_one_mixer_registry_and_it_is_filled_whichever_name_reads_it() -> None:
    """trainables.mixers.base.MIXERS (what a user's mixer registers with) and trainables.mixers.MIXERS are one
    object, and in a fresh process the first one lists every mixer file too."""
    code = ("from trainables.mixers.base import MIXERS\n"
            "import trainables.mixers as package\n"
            "print(package.MIXERS is MIXERS, ','.join(MIXERS.names()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd="/",
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    from trainables.mixers import mixer_names

    assert out.stdout.split() == ["True", ",".join(mixer_names())], out.stderr


EDITED_LATER = 'VALUE = 1\n'


def test_a_plugins_hash_is_taken_when_the_record_is_read_not_at_its_import(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin edited after its import (a notebook) is recorded as the code on disk at launch, which is what the
    workers import; a worker whose import differs from that record refuses it."""
    from trainables import plugins

    (tmp_path / "edited_later.py").write_text(EDITED_LATER)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        imported = plugins.load_module("edited_later")
        (tmp_path / "edited_later.py").write_text("VALUE = 2  # edited in the notebook\n")
        [now] = [p for p in plugins.record() if p["module"] == "edited_later"]
        assert now["sha256"] != imported.sha256  # the record of a launch now: the edited file
        assert [p.sha256 for p in plugins.user_plugins() if p.module == "edited_later"] == [now["sha256"]]
        with pytest.raises(plugins.PluginError, match="'edited_later' .* differs here from the driver's"):
            plugins.activate([now])  # this process imported the old code: as a worker, it refuses
    finally:
        plugins._LOADED.pop("edited_later", None)
        sys.modules.pop("edited_later", None)


KEYS = '''import sys
from search_spaces import get_study
from study.trial.spec import Trial
study = get_study(sys.argv[1], "smoke")
print(" ".join(sorted(Trial.every_seed(study, {"mixer": m}).key(study) for m in ("kw_mixer", "softmax"))))
'''
KEY_MIXERS = '''from trainables.mixers.base import MIXERS, MultiHeadMixer
from trainables.mixers.softmax import softmax_weights


@MIXERS.register("kw_mixer")
class KeywordOnly(MultiHeadMixer):
    def weights(self, q, k, *, allowed=None):
        return softmax_weights(q @ k.transpose(-2, -1) / self.d_head**0.5, allowed)
'''
KEY_STUDY = '''from search_spaces import Study

S = Study(name="t.keys", goal="the same keys from anywhere", scientific={"mixer": ("kw_mixer", "softmax")},
          fixed={"architecture": "MTE", "d_model": 8, "n_heads": 2, "seq_len": 8, "n_layers": 2, "n_steps": 20,
                 "eval_every": 10, "eval_batches": 2, "batch_size": 4, "learning_rate": 0.003},
          tasks=("mode",), seeds=(0,), scales={"smoke": {}}, plugins=("my_key_mixers",))
'''


@pytest.mark.slow  # a Python subprocess
def test_the_same_code_gives_the_same_trial_keys_from_any_working_directory(tmp_path: Path) -> None:
    """A study file named by an absolute path, by ./file.py from its folder, or by a relative path from elsewhere:
    the same keys (no path or working directory enters them); a study file's module counts by its file's name,
    however it was imported; a study without plugins keeps the keys it always had."""
    from study.trial.identity import trial_key

    folder = tmp_path / "user"
    folder.mkdir()
    (folder / "my_key_mixers.py").write_text(KEY_MIXERS)
    (folder / "my_study.py").write_text(KEY_STUDY)
    (tmp_path / "keys.py").write_text(KEYS)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    keys = set()
    spellings = ((tmp_path, str(folder / "my_study.py")), (folder, "./my_study.py"), (tmp_path, "user/my_study.py"))
    for cwd, spec in spellings:
        out = subprocess.run([sys.executable, str(tmp_path / "keys.py"), f"{spec}:S"], cwd=cwd, capture_output=True,
                             text=True, timeout=120, env=env)
        assert out.returncode == 0, out.stderr[-2000:]
        keys.add(out.stdout.strip())
    assert len(keys) == 1 and len(keys.pop().split()) == 2
    config = {"task": "mode", "mixer": "softmax"}
    assert trial_key("s", config, (0,), ("_study_file_my_study",)) == trial_key("s", config, (0,), ("my_study",))
    assert trial_key("s", config, (0,), ("b", "a", "a")) == trial_key("s", config, (0,), ("a", "b"))
    assert trial_key("s", config, (0,)) == trial_key("s", config, (0,), ())  # no plugins: the keys of before
