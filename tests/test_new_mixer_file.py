"""A new attention mechanism is one new file: copied tree + one file in trainables/mixers/, no other edit.

The copy of the project's packages gets one file, ``gated_mean.py`` in ``trainables/mixers/``, and nothing
else. From that file alone the mixer must be registered, listed by the atlas, train packed as separate runs
(float64, 1e-6), and run in a real smoke study (Ray Tune, Parquet) in every family that takes a mixer
(Richter's encoder on ``mode``, Gros' bilayer on ``nt``, the CTL Transformer), with packing on and off.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.data.rows import scan_study
from tests.cli import run_cli

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "trainables", "study", "search_spaces", "analysis")

NEW_MIXER = '''"""Gated mean (a mixer written for a test): o_i = W_O (sigmoid(W_g x_i) * mean_j W_V x_j)."""

import torch
from torch import nn

from trainables.mixers.base import MIXERS, Mixer, token_mean
from trainables.stacked import dense


@MIXERS.register("gated_mean")
class GatedMean(Mixer):
    """Every token gates the sequence's mean value vector by its own sigmoid gate."""

    supports_mask = True  # CTL batches are padded
    supports_causal = True  # Gros' bilayer is causal

    def __init__(self, d_model, n_heads, *, hidden_norm=False, attention_gelu=False, dropout=0.0):
        super().__init__(d_model, n_heads)
        self.gate = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.init_output(hidden_norm=hidden_norm, attention_gelu=attention_gelu)

    def forward(self, x, mask=None, *, causal=False):
        mean = token_mean(dense(x, self.value), mask, causal)  # (..., B, 1 or N, d), over the tokens it may see
        return self.output(torch.sigmoid(dense(x, self.gate)) * mean)  # (..., B, N, d)
'''

STUDY_FILE = '''from search_spaces import Linked, Study

TASKS = Linked(options={
    "mode": {"architecture": "MTE", "seq_len": 8, "n_layers": 2, "n_steps": 20, "eval_every": 10,
             "eval_batches": 2, "batch_size": 4},
    "nt": {"basis": 4, "delay": 1, "n_context": 4, "n_epochs": 20, "eval_every": 10, "eval_series": 8,
           "eval_predictions": 4, "final_eval_series": 8},
    "ctl": {"model": "Transformer", "n_layers": 2, "n_steps": 20, "eval_every": 10, "eval_samples": 16,
            "batch_size": 4},
})
NEW = Study(name="t.new_mixer", goal="a new mixer file trains in every family",
            scientific={"task": TASKS, "mixer": ("gated_mean",)}, fixed={"d_model": 8, "n_heads": 2},
            nuisance={"learning_rate": (0.003,)}, seeds=(0, 1), scales={"smoke": {}})
'''

PACKED_EQUALS_SOLO = '''
import torch
from trainables.richter2020.config import TrainConfig
from trainables.richter2020.loop import train_members, train_seed
torch.set_default_dtype(torch.float64)
cfg = TrainConfig(architecture="MTE", task="mode", mixer="gated_mean", d_model=8, n_heads=2, seq_len=8,
                  n_steps=30, eval_every=10, eval_batches=2, learning_rate=3e-4)
packed = train_members([cfg], [0, 1])
solo = [r for s in (0, 1) for r in train_seed(cfg, s)]
print(max(abs(p[k] - s[k]) for p, s in zip(packed, solo) for k in ("train_loss", "val_loss", "val_accuracy")))
'''


def _copy_tree(tmp: Path) -> Path:
    src = tmp / "src"
    for package in PACKAGES:
        shutil.copytree(ROOT / package, src / package, ignore=shutil.ignore_patterns("__pycache__"))
    (src / "trainables" / "mixers" / "gated_mean.py").write_text(NEW_MIXER)  # the one new file
    (tmp / "my_studies.py").write_text(STUDY_FILE)
    return src


def _run(src: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(src)}  # Python snippets that start no Ray
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=cwd, env=env)


@pytest.mark.slow
def test_one_new_file_registers_trains_packed_and_runs_a_study_in_every_family(tmp_path: Path) -> None:
    src = _copy_tree(tmp_path)
    names = _run(src, tmp_path, "-c", "from trainables.mixers import MIXERS; from search_spaces.atlas import ATLAS; "
                 "import json; print(json.dumps([MIXERS.names(), ATLAS.axis_values('mixer')]))")
    assert names.returncode == 0, names.stderr[-2000:]
    registered, atlas = json.loads(names.stdout)
    assert "gated_mean" in registered and "gated_mean" in atlas
    assert "gated_mean" not in _run(ROOT, tmp_path, "-c", "from trainables.mixers import mixer_names; "
                                    "print(mixer_names())").stdout  # the checkout itself is untouched

    equal = _run(src, tmp_path, "-c", PACKED_EQUALS_SOLO)
    assert equal.returncode == 0, equal.stderr[-2000:]
    assert float(equal.stdout) < 1e-6

    for packing in ("on", "off"):
        result = run_cli("run", "my_studies.py:NEW", "--scale", "smoke", "--storage", f"out-{packing}", "--packing",
                         packing, "--max-concurrent", "2", timeout=300, cwd=tmp_path, env={"PYTHONPATH": str(src)})
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        rows = scan_study(tmp_path / f"out-{packing}" / "t.new_mixer.smoke").collect()  # three families' columns
        assert sorted(rows["task"].unique().to_list()) == ["ctl", "mode", "nt"]
        assert rows["mixer"].unique().to_list() == ["gated_mean"]
        assert rows.height == 3 * 2 * 2  # 3 tasks x 2 seeds x 2 evaluations
        assert set(rows["status"].to_list()) == {"ok"}
