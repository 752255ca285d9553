"""`study compare A B`: resolve the two sides, then let :mod:`analysis.compare` do the statistics.

A side is one of:

* ``NAME`` or ``NAME@SCALE`` - a study of ``search_spaces`` in ``--storage`` (``NAME`` alone takes
  ``--scale``), e.g. ``richter2020.fig7@smoke``;
* a study directory (holding ``study.json`` and ``trials/``);
* ``published:<paper>/<file>`` - published results shipped with the package, e.g.
  ``published:richter2020/mode__var_dim``; ``published`` alone (as B) means A's own reference.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from search_spaces import SCALES, StudyError, get_study
from study.storage import StudyStorage

PUBLISHED = "published"


class CompareError(ValueError):
    """A side that cannot be resolved or compared; the message says what is allowed."""


@dataclass
class Side:
    """One side of a comparison: a label, the rows, the study definition (empty for published data)."""

    label: str
    lf: pl.LazyFrame
    meta: dict[str, Any] = field(default_factory=dict)


def resolve_side(spec: str, *, storage: str, scale: str, other: Side | None = None) -> Side:
    """The :class:`Side` named by ``spec`` (see the module docstring)."""
    from analysis.dataset import load_study_meta, scan_study
    from analysis.reference import available_references, load_reference

    if spec == PUBLISHED or spec.startswith(PUBLISHED + ":"):
        name = spec.partition(":")[2]
        if not name:
            name = (other.meta.get("reference") if other else None) or ""
            if not name:
                raise CompareError(
                    f"invalid side {spec!r}: the other side names no published reference; "
                    f"allowed: published:<name> with name in {available_references()}"
                )
        try:
            return Side(label=f"published:{name}", lf=load_reference(name), meta={"name": name})
        except FileNotFoundError as err:
            raise CompareError(str(err)) from None
    path = Path(spec)
    if path.is_dir() and (path / "study.json").is_file():
        return _from_dir(path, str(path), load_study_meta, scan_study)
    name, _, at_scale = spec.partition("@")
    if at_scale and at_scale not in SCALES:
        raise CompareError(f"invalid scale {at_scale!r} in {spec!r}; allowed: {', '.join(SCALES)}")
    try:
        study = get_study(name, at_scale or scale)
    except StudyError as err:
        raise CompareError(f"{err} (or give a study directory, or published:<name>)") from None
    target = StudyStorage(storage=storage, directory=study.directory)
    if not target.is_local:
        raise CompareError(f"invalid --storage {storage!r} for compare; allowed: a local directory")
    study_dir = target.local_path()
    if not (study_dir / "trials").is_dir():
        raise CompareError(
            f"no results for study {study.name} (scale {study.scale}) in {study_dir}; run "
            f"`study run {study.name} --scale {study.scale}` first"
        )
    return _from_dir(study_dir, f"{study.name}@{study.scale}", load_study_meta, scan_study)


def _from_dir(study_dir: Path, label: str, load_meta: Any, scan: Any) -> Side:
    try:
        return Side(label=label, lf=scan(study_dir), meta=load_meta(study_dir))
    except FileNotFoundError as err:
        raise CompareError(str(err)) from None


def compare(
    spec_a: str,
    spec_b: str,
    *,
    storage: str = "results",
    scale: str = "paper",
    metrics: tuple[str, ...] = (),
    threshold: float = 0.5,
    common: bool = True,
    out: str | None = None,
) -> str:
    """Compare two sides; return the text table (and write ``out/index.html`` + PNG when ``out``)."""
    from analysis.compare import compare_sides, comparison_figure, comparison_html, format_comparison
    from analysis.report import plot_axes

    a = resolve_side(spec_a, storage=storage, scale=scale)
    b = resolve_side(spec_b, storage=storage, scale=scale, other=a)
    cols_a, cols_b = a.lf.collect_schema().names(), b.lf.collect_schema().names()
    meta = a.meta or b.meta
    try:
        panel, x, y = plot_axes(meta, [c for c in cols_a if c in cols_b])
    except ValueError as err:
        raise CompareError(str(err)) from None
    chosen = list(metrics) or [m for m in ("val_accuracy", "train_accuracy") if m in cols_a and m in cols_b]
    bad = [m for m in chosen if m not in cols_a or m not in cols_b]
    if bad or not chosen:
        raise CompareError(f"invalid --metric {bad or chosen}; allowed: metrics both sides have, e.g. val_accuracy")
    try:
        df = compare_sides(
            a.lf, b.lf, panel=panel, x=x, y=y, metrics=chosen, threshold=threshold, common=common
        )
    except ValueError as err:
        raise CompareError(str(err)) from None
    text = format_comparison(df, panel, a.label, b.label, threshold)
    if common:
        text += f"\n(over the common grid of {panel} x {x} x {y}; --all-configs for each side's whole grid)"
    if out:
        out_dir = Path(out)
        out_dir.mkdir(parents=True, exist_ok=True)
        imgs = []
        for m in chosen:
            png = out_dir / f"compare_{m}.png"
            comparison_figure(df, panel, a.label, b.label, m).savefig(png, dpi=100)
            data = base64.b64encode(png.read_bytes()).decode("ascii")
            imgs.append(f"<figure><img src='data:image/png;base64,{data}' alt='comparison {html.escape(m)}'></figure>")
        page = (
            "<!DOCTYPE html><html><head><meta charset='utf-8'><title>compare</title><style>"
            "body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}"
            "table.data{border-collapse:collapse;font-size:.85em}table.data td,table.data th"
            "{border:1px solid #ccc;padding:.2em .5em;text-align:right}table.data th{background:#f3f3f3}"
            ".pos{color:#1a7f37}.neg{color:#cf222e}img{max-width:100%}</style></head><body>"
            f"<h1>{html.escape(a.label)} vs {html.escape(b.label)}</h1>"
            + comparison_html(df, panel, a.label, b.label, threshold)
            + "".join(imgs)
            + "</body></html>\n"
        )
        (out_dir / "index.html").write_text(page)
        df.write_csv(out_dir / "compare.csv")
        text += f"\nwritten: {out_dir / 'index.html'}"
    return text
