"""The Richter & Wattenhofer 2020 release (``paper_results/`` of OliverRichter/normalized-attention) -> the reference
Parquet files of ``reference_data/richter2020/`` (schema: docs/richter2020.md), with a manifest tracing each file.

One command converts a checkout::

    python -m analysis.data.release_convert CHECKOUT_DIR OUT_DIR

A run family is a folder of the release (``cases/first_token_output/var_dim``): one results pickle per architecture
(``BERT.pickle``, its grid in ``BERT_params.pickle``). The family becomes ``OUT_DIR/<folders joined by "__">.parquet``
(``cases__first_token_output__var_dim.parquet``; a custom sweep's ``_<min>_<range>_<base>`` suffix is dropped:
``mode/var_dropout_1_4_0.5`` -> ``mode__var_dropout``). ``MANIFEST.json`` beside them gives each file's sha256 and
rows and, per architecture, the pickle it came from (its path in the release, git blob id and sha256); a params
file whose results pickle is absent is listed as missing, never skipped in silence.

The pickles are read by a restricted unpickler that accepts only numpy's array and scalar constructors: nothing of
the authors' code is imported or run, and no TensorFlow is needed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, cast

import numpy as np
import numpy.typing as npt
import polars as pl
from numpy._core import multiarray

from analysis.data.reference import SWEPT

PAPER = "richter2020"
RELEASE_REPOSITORY = "OliverRichter/normalized-attention"
PUBLICATION_COMMIT = "13e38c7039293a07f3d39d1562f9bfba4d7eeab1"
RESULTS_DIR = "paper_results"
MANIFEST_NAME = "MANIFEST.json"
COMMAND = "python -m analysis.data.release_convert CHECKOUT_DIR OUT_DIR"
#: How a row of a converted file maps back into the results pickle of its architecture (the release's train.py).
ROW_INDEX = "results[epoch - 1][learning-rate index][x index][metric][seed]"

#: The only globals a release pickle may name: numpy arrays (``np.asarray``-ed results) and numpy scalars (lists),
#: under numpy 1's module name (the release's) and numpy 2's (the same constructors, in pickles written today).
_NUMPY_GLOBALS = {
    ("numpy", "dtype"): np.dtype,
    ("numpy", "ndarray"): np.ndarray,
    **{(module, name): getattr(multiarray, name) for module in ("numpy.core.multiarray", "numpy._core.multiarray")
       for name in ("_reconstruct", "scalar")},
}

#: Metric slots of a run (train.py and its CaseEvaluationCallback): accuracy and loss, then for the cases task
#: per split 7 correct counts followed by 7 case sizes; argmin, first and argmax are case slots 0, 2 and 5.
_PLAIN_METRICS = {"train_accuracy": 0, "val_accuracy": 1, "train_loss": 2, "val_loss": 3}
_CASE_METRICS = {f"{split}_{case}_accuracy": (base + slot, base + 7 + slot)
                 for split, base in (("train", 4), ("val", 18)) for case, slot in (("argmin", 0), ("first", 2),
                                                                                   ("argmax", 5))}
_METRIC_SLOTS = {4: "mode", 32: "cases"}  # slots per run -> the task that writes them
_CUSTOM_SUFFIX = re.compile(r"_\d+_\d+_[\d.]+$")  # train.py's name of a custom sweep: var_<name>_<min>_<range>_<base>


class Variation(TypedDict):
    """One sweep of a params pickle (train.py): its name and the values ``base ** (i + min)`` (no base: ``min + i``)
    for ``i`` below ``range``."""

    name: str
    base: float
    min: int
    range: int


class _ReleaseUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> object:
        try:
            return _NUMPY_GLOBALS[(module, name)]
        except KeyError:
            allowed = ", ".join(f"{m}.{n}" for m, n in _NUMPY_GLOBALS)
            raise pickle.UnpicklingError(f"release pickle names {module}.{name}; allowed: {allowed}") from None


def load_release_pickle(path: Path) -> object:
    """A pickle of the release, unpickled with numpy's array and scalar constructors only."""
    with path.open("rb") as f:
        return _ReleaseUnpickler(f).load()


def _unpack(value: object, count: int, where: str) -> tuple[object, ...]:
    """A release pickle's tuple (or list) of ``count`` items, as train.py writes it."""
    if not isinstance(value, tuple | list) or len(value) != count:
        raise ValueError(f"{where}: holds a {type(value).__name__}; expected a tuple of {count} items")
    return tuple(value)


def _variations(value: object, where: str) -> list[Variation]:
    """A params pickle's variations: the swept axis, then the learning rates, each a dict of :class:`Variation`."""
    keys = Variation.__required_keys__
    if not isinstance(value, list | tuple) or not all(isinstance(v, dict) and keys <= v.keys() for v in value):
        raise ValueError(f"{where}: variations {value!r}; expected a list of dicts with keys {sorted(keys)}")
    return [cast(Variation, v) for v in value]  # checked above: each a dict with the keys of a Variation


@dataclass(frozen=True)
class Family:
    """A run family: its folder under ``paper_results`` (``cases/first_token_output/var_dim``)."""

    folder: str

    @property
    def stem(self) -> str:
        """The converted file's name without ``.parquet``."""
        parts = self.folder.split("/")
        return "__".join([*parts[:-1], _CUSTOM_SUFFIX.sub("", parts[-1])])

    @property
    def task(self) -> str:
        """The task column: ``cases``, ``cases_first_token`` or ``mode`` (an ablation's task is the one it ablates)."""
        parts = self.folder.split("/")
        parts = parts[1:] if parts[0] == "ablation" else parts
        return parts[0] + ("_first_token" if "first_token_output" in parts else "")


def axis_values(variation: Variation) -> list[float]:
    """The values a sweep of the release takes, as its train.py computes them (``base ** (i + min)``)."""
    base, low = variation["base"], variation["min"]
    return [float(base ** (i + low)) if base else float(i + low) for i in range(variation["range"])]


def _metric_columns(a: npt.NDArray[np.float64], where: str) -> dict[str, npt.NDArray[np.float64]]:
    """Column -> values in row order (epoch, learning rate, x, seed) of a results array (epoch, lr, x, slot, seed)."""
    slots = a.shape[3]
    if slots not in _METRIC_SLOTS:
        raise ValueError(f"{where}: {slots} metric slots per run; expected one of {sorted(_METRIC_SLOTS)}")
    flat = np.moveaxis(a, 3, 4).reshape(-1, slots)
    columns = {name: flat[:, i] for name, i in _PLAIN_METRICS.items()}
    if _METRIC_SLOTS[slots] == "cases":
        columns |= {name: flat[:, correct] / flat[:, size] for name, (correct, size) in _CASE_METRICS.items()}
    return columns


def run_rows(results: object, variations: list[Variation], *, architecture: str, task: str, where: str) -> pl.DataFrame:
    """One results pickle's ``results`` (nested lists or an array: epoch, learning rate, x, metric slot, seed) and
    its params' ``variations`` -> rows in the release schema, ordered by epoch, learning rate, x and seed.

    Raises:
        ValueError: naming ``where``: seeds differ between cells, the grid differs from ``variations``, the sweep is
            not over learning rates, or its swept name is not in :data:`analysis.data.reference.SWEPT`.
    """
    swept, rates = variations
    if swept["name"] not in SWEPT or rates["name"] != "learning_rate":
        raise ValueError(f"{where}: sweep {swept['name']!r} x {rates['name']!r}; expected one of {sorted(SWEPT)} "
                         "x 'learning_rate'")
    try:
        a = np.asarray(results, dtype=np.float64)
    except ValueError as e:  # ragged: train.py's random run order gives cells different seed counts
        raise ValueError(f"{where}: cells hold different numbers of seeds; expected the same in every cell") from e
    grid = (rates["range"], swept["range"])
    if a.ndim != 5 or a.shape[1:3] != grid:
        raise ValueError(f"{where}: results of shape {a.shape}; expected (epochs, {grid[0]}, {grid[1]}, slots, seeds)")
    epochs, _, _, _, seeds = a.shape
    epoch, lr, x, seed = (i.ravel() for i in np.indices((epochs, *grid, seeds)))
    return pl.DataFrame({
        "paper": pl.Series([PAPER] * len(epoch), dtype=pl.String),
        "task": pl.Series([task] * len(epoch), dtype=pl.String),
        "swept": pl.Series([swept["name"]] * len(epoch), dtype=pl.String),
        "architecture": pl.Series([architecture] * len(epoch), dtype=pl.String),
        "x_value": pl.Series(np.asarray(axis_values(swept))[x], dtype=pl.Float64),
        "learning_rate": pl.Series(np.asarray(axis_values(rates))[lr], dtype=pl.Float64),
        "seed": pl.Series(seed, dtype=pl.Int8),
        "epoch": pl.Series(epoch + 1, dtype=pl.Int16),
        **{name: pl.Series(values, dtype=pl.Float64) for name, values in _metric_columns(a, where).items()},
    })


def file_digests(path: Path) -> dict[str, str]:
    """A release file's sha256 and git blob id (what ``git ls-tree`` shows for it)."""
    data = path.read_bytes()
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    return {"git_blob": blob, "sha256": hashlib.sha256(data).hexdigest()}


def families(checkout: Path) -> Iterator[tuple[Family, list[Path]]]:
    """Every run family of a checkout with its params files (one per architecture), in path order."""
    root = checkout / RESULTS_DIR
    if not root.is_dir():
        raise FileNotFoundError(f"checkout {checkout}: no {RESULTS_DIR}/ folder; expected a checkout of "
                                f"{RELEASE_REPOSITORY}")
    by_folder: dict[str, list[Path]] = {}
    for params in sorted(root.rglob("*_params.pickle")):
        by_folder.setdefault(params.parent.relative_to(root).as_posix(), []).append(params)
    for folder, params_files in sorted(by_folder.items()):
        yield Family(folder), params_files


def convert_family(checkout: Path, family: Family, params_files: list[Path]
                   ) -> tuple[pl.DataFrame | None, dict[str, object]]:
    """A family's rows (None when none of its results pickles is there) and its manifest entry, less the file's
    checksum: per architecture (sorted) its source, and the results pickles that are missing."""
    frames: list[pl.DataFrame] = []
    sources: list[dict[str, object]] = []
    missing: list[str] = []
    for params in sorted(params_files, key=lambda p: p.name.removesuffix("_params.pickle")):
        architecture = params.name.removesuffix("_params.pickle")
        results_path = params.with_name(f"{architecture}.pickle")
        release_path = results_path.relative_to(checkout).as_posix()
        if not results_path.is_file():
            missing.append(release_path)
            continue
        results, completed_runs, run_order = _unpack(load_release_pickle(results_path), 3, release_path)
        variations = _variations(_unpack(load_release_pickle(params), 2, release_path)[0], release_path)
        frame = run_rows(results, variations, architecture=architecture, task=family.task, where=release_path)
        frames.append(frame)
        sources.append({"architecture": architecture, "path": release_path, **file_digests(results_path),
                        "rows": frame.height, "completed_runs": completed_runs, "run_order": run_order,
                        "params": {"path": params.relative_to(checkout).as_posix(), **file_digests(params)}})
    entry: dict[str, object] = {"family": f"{RESULTS_DIR}/{family.folder}", "task": family.task, "sources": sources,
                                "missing": missing}
    return (pl.concat(frames) if frames else None), entry


def file_checksum(path: Path) -> dict[str, object]:
    """What the manifest records of an output file: sha256, bytes and rows."""
    return {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "bytes": path.stat().st_size,
            "rows": pl.scan_parquet(path).select(pl.len()).collect().item()}


def convert_release(checkout: Path, out_dir: Path, commit: str = PUBLICATION_COMMIT) -> dict[str, Any]:
    """Every run family of ``checkout`` -> ``out_dir/<stem>.parquet`` (zstd) and ``out_dir/MANIFEST.json``; returns
    the manifest. Families without any results pickle get no file and are listed under ``not_converted``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files: list[dict[str, object]] = []
    not_converted: list[dict[str, object]] = []
    for family, params_files in families(checkout):
        frame, entry = convert_family(checkout, family, params_files)
        if frame is None:
            not_converted.append({"family": entry["family"], "missing": entry["missing"]})
            continue
        path = out_dir / f"{family.stem}.parquet"
        frame.write_parquet(path, compression="zstd")
        files.append({"file": path.name, **file_checksum(path), **entry})
    manifest = {"release": {"repository": RELEASE_REPOSITORY, "commit": commit, "results_dir": RESULTS_DIR},
                "command": COMMAND, "row_index": ROW_INDEX, "files": files, "not_converted": not_converted}
    (out_dir / MANIFEST_NAME).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def manifest_problems(directory: Path) -> list[str]:
    """What does not match between ``directory``'s MANIFEST.json and its Parquet files: a file whose sha256 or
    rows differ from the manifest, a listed file that is not there, a Parquet file the manifest does not list."""
    manifest = json.loads((directory / MANIFEST_NAME).read_text())
    listed = {entry["file"]: entry for entry in manifest["files"]}
    problems = [f"{name}: not in {MANIFEST_NAME}" for name in sorted(p.name for p in directory.glob("*.parquet"))
                if name not in listed]
    for name, entry in sorted(listed.items()):
        path = directory / name
        if not path.is_file():
            problems.append(f"{name}: listed in {MANIFEST_NAME} but missing")
            continue
        actual = file_checksum(path)
        problems += [f"{name}: {key} {actual[key]} != manifest {entry[key]}" for key in ("sha256", "rows")
                     if actual[key] != entry[key]]
    return problems


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m analysis.data.release_convert", description=__doc__.split("\n")[0])
    parser.add_argument("checkout", type=Path, help=f"a checkout of {RELEASE_REPOSITORY} (holding {RESULTS_DIR}/)")
    parser.add_argument("out_dir", type=Path, help="where the Parquet files and MANIFEST.json are written")
    parser.add_argument("--commit", default=PUBLICATION_COMMIT, help="the checkout's commit, recorded in the manifest")
    args = parser.parse_args(argv)
    try:
        manifest = convert_release(args.checkout, args.out_dir, args.commit)
    except (FileNotFoundError, ValueError, pickle.UnpicklingError) as e:  # one line naming what is wrong
        parser.exit(2, f"error: {e}\n")
    for entry in manifest["files"]:
        print(f"{entry['file']}: {entry['rows']} rows, {entry['bytes']} bytes, {len(entry['sources'])} sources, "
              f"{len(entry['missing'])} missing")
    for entry in manifest["not_converted"]:
        print(f"{entry['family']}: not converted, all {len(entry['missing'])} results pickles missing")


if __name__ == "__main__":
    main()
