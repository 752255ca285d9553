"""`study compare A B`: resolve the two sides, then let :mod:`analysis.stats.compare` do the statistics.

A side is one of:

* ``NAME`` or ``NAME@SCALE`` - a study of ``search_spaces`` in ``--storage`` (``NAME`` alone takes
  ``--scale``), e.g. ``richter2020.fig7@smoke``;
* a study directory (holding ``study.json`` and ``trials/``);
* ``published:<paper>/<file>`` - published results shipped with the package, e.g.
  ``published:richter2020/mode__var_dim``; ``published:<path>.parquet`` - a file in the release's schema
  (docs/richter2020.md); ``published`` alone (as B) means A's own reference.

Either side may be published, both included: a published side's axes are the architecture, its swept
column (``d_model``, ``vocab_size``, ...) and the learning rate. Two sides with different x axes are an
error naming both.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from pathlib import Path

import click
import polars as pl

from analysis.data.location import Location
from analysis.data.machines import PUBLISHED as PUBLISHED_MACHINE
from analysis.data.machines import machine_counts, machines_line
from core.errors import OneLineError, one_line
from search_spaces import SCALES, StudyError, get_study
from search_spaces.record import StudyRecord
from study.cli.common import scale_option, storage_option
from study.results.storage import StorageError, StudyStorage

PUBLISHED = "published"


class CompareError(OneLineError, ValueError):
    """A side that cannot be resolved or compared; the message says what is allowed."""


@dataclass
class Side:
    """One side of a comparison: a label, the rows, the study definition, what its numbers lack."""

    label: str
    lf: pl.LazyFrame
    meta: StudyRecord
    note: str = ""  # e.g. "1 unreadable trial file left out: ..."
    machines: tuple[str, ...] = ()  # where its numbers came from (analysis.data.machines)


def _published(spec: str, other: Side | None) -> Side:
    from analysis.data.published_cells import is_cells
    from analysis.data.reference import available_references, open_reference, published_record

    name = spec.partition(":")[2] or ((other.meta.reference if other else None) or "")
    if not name:
        raise CompareError(f"invalid side {spec!r}: the other side names no published reference; "
                           f"allowed: published:<name> with name in {available_references()}, or "
                           "published:<path>.parquet")
    if is_cells(name):
        raise CompareError(f"invalid side {spec!r}: {name} is a table of means (a paper's printed numbers), not a grid "
                           "of runs; allowed: published per-seed runs (published:<name> with name in "
                           f"{available_references()}); the table's numbers: `study findings NAME --data published`")
    try:
        lf, column = open_reference(name)
    except (FileNotFoundError, ValueError) as err:
        raise CompareError(str(err)) from None
    return Side(label=f"published:{name}", lf=lf, meta=published_record(name, lf, column),
                machines=(PUBLISHED_MACHINE,))


def resolve_side(spec: str, *, storage: str, scale: str, other: Side | None = None) -> Side:
    """The :class:`Side` named by ``spec`` (see the module docstring)."""
    if spec == PUBLISHED or spec.startswith(PUBLISHED + ":"):
        return _published(spec, other)
    path = Path(spec)
    if path.is_dir() and (path / "study.json").is_file():
        return _from_dir(path, str(path))
    name, _, at_scale = spec.partition("@")
    if at_scale and at_scale not in SCALES:
        raise CompareError(f"invalid scale {at_scale!r} in {spec!r}; allowed: {', '.join(SCALES)}")
    try:
        study = get_study(name, at_scale or scale)
    except StudyError as err:
        raise CompareError(f"{err} (or give a study directory, or published:<name>)") from None
    target = StudyStorage(storage=storage, directory=study.directory)
    try:
        target.check_readable()
    except StorageError as error:
        raise CompareError(str(error)) from None
    location = target.location  # local or remote: read in place
    if not location.exists("table/_delta_log") and not location.list_files("trials", ".parquet"):
        raise CompareError(
            f"no results for study {study.name} (scale {study.scale}) in {location.uri}; run "
            f"`study run {study.name} --scale {study.scale}` first"
        )
    return _from_dir(location, f"{study.name}@{study.scale}")


def _from_dir(study_dir: Path | Location, label: str) -> Side:
    from analysis.data.meta import MetaError, read_study_meta
    from analysis.data.rows import open_trials

    location = Location.of(study_dir)
    try:
        meta = read_study_meta(location)
    except (FileNotFoundError, MetaError) as err:
        raise CompareError(str(err)) from None
    scan = open_trials(location)
    if scan.lf is None:
        raise CompareError(f"no readable trial results in {location.uri}"
                           + (f" ({len(scan.unreadable)} unreadable)" if scan.unreadable else ""))
    note = ""
    if scan.unreadable:
        note = (f"{label}: {len(scan.unreadable)} unreadable trial file(s) left out of every number: "
                + ", ".join(str(p) for p in scan.unreadable))
    return Side(label=label, lf=scan.lf, meta=meta, note=note, machines=tuple(machine_counts(scan.lf)))


def comparison_text(
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
    from analysis.render.comparison import format_comparison
    from analysis.stats.compare import common_grid, common_types, compare_sides, restrict
    from analysis.stats.paired import format_paired, paired_differences
    from analysis.stats.training_stats import plot_axes

    a = resolve_side(spec_a, storage=storage, scale=scale)
    b = resolve_side(spec_b, storage=storage, scale=scale, other=a)
    cols_a, cols_b = a.lf.collect_schema().names(), b.lf.collect_schema().names()
    try:
        axes_a, axes_b = plot_axes(a.meta, cols_a), plot_axes(b.meta, cols_b)
    except ValueError as err:
        raise CompareError(str(err)) from None
    if axes_a != axes_b:
        raise CompareError(f"the two sides have different plot axes (panel, x, y): A {a.label} {axes_a}, "
                           f"B {b.label} {axes_b}; allowed: two sides over the same axes")
    panel, x, y = axes_a
    chosen = list(metrics) or [m for m in ("val_accuracy", "train_accuracy") if m in cols_a and m in cols_b]
    bad = [m for m in chosen if m not in cols_a or m not in cols_b]
    if bad or not chosen:
        raise CompareError(f"invalid --metric {bad or chosen}; allowed: metrics both sides have, e.g. val_accuracy")
    try:  # the common grid once, for the table and the pairs (each is a scan of both sides' trial files)
        lf_a, lf_b = common_types(a.lf, b.lf, [panel, x, y])
        if common:
            grid = common_grid(lf_a, lf_b, [panel, x, y])
            lf_a, lf_b = restrict(lf_a, grid), restrict(lf_b, grid)
        df = compare_sides(lf_a, lf_b, panel=panel, x=x, y=y, metrics=chosen, threshold=threshold, common=False)
        paired = {m: paired_differences(lf_a, lf_b, panel=panel, x=x, y=y, metric=m) for m in chosen}
    except (ValueError, pl.exceptions.PolarsError) as err:
        raise CompareError(one_line(err, typed=False)) from None
    text = format_comparison(df, panel, a.label, b.label, threshold)
    text += "".join("\n\n" + format_paired(df_m, panel, m) for m, df_m in paired.items())
    text += "\n" + machines_line(a.label, list(a.machines), b.label, list(b.machines))
    for side in (a, b):
        if side.note:
            text += f"\nINCOMPLETE: {side.note}"
    if common:
        text += f"\n(over the common grid of {panel} x {x} x {y}; --all-configs for each side's whole grid)"
    if out:
        text += "\nwritten: " + _write_page(Path(out), df, paired, panel, a.label, b.label, threshold)
    return text


def _write_page(out_dir: Path, df: pl.DataFrame, paired: dict[str, pl.DataFrame], panel: str, label_a: str,
                label_b: str, threshold: float) -> str:
    """OUT/index.html (the table, the paired differences and one bar figure per metric, embedded), PNGs,
    compare.csv and paired_<metric>.csv; the page's path."""
    from analysis.render.comparison import comparison_figure, comparison_html
    from analysis.stats.paired import format_paired

    out_dir.mkdir(parents=True, exist_ok=True)
    parts = []
    for m, pairs in paired.items():
        pairs.write_csv(out_dir / f"paired_{m}.csv")
        parts.append(f"<pre>{html.escape(format_paired(pairs, panel, m))}</pre>")
        png = out_dir / f"compare_{m}.png"
        comparison_figure(df, panel, label_a, label_b, m).savefig(png, dpi=100)
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        parts.append(f"<figure><img src='data:image/png;base64,{data}' alt='comparison {html.escape(m)}'></figure>")
    page = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>compare</title><style>"
        "body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}"
        "table.data{border-collapse:collapse;font-size:.85em}table.data td,table.data th"
        "{border:1px solid #ccc;padding:.2em .5em;text-align:right}table.data th{background:#f3f3f3}"
        ".pos{color:#1a7f37}.neg{color:#cf222e}img{max-width:100%}</style></head><body>"
        f"<h1>{html.escape(label_a)} vs {html.escape(label_b)}</h1>"
        + comparison_html(df, panel, label_a, label_b, threshold)
        + "".join(parts)
        + "</body></html>\n"
    )
    (out_dir / "index.html").write_text(page)
    df.write_csv(out_dir / "compare.csv")
    return str(out_dir / "index.html")


@click.command()
@click.argument("a")
@click.argument("b")
@scale_option
@storage_option
@click.option("--metric", "metrics", multiple=True,
              help="Metric to compare (repeatable; default: val_accuracy and train_accuracy).")
@click.option("--threshold", type=float, default=0.5, show_default=True,
              help="G a configuration must reach to count towards the robustness share.")
@click.option("--all-configs", is_flag=True,
              help="Use each side's whole grid instead of the values both ran.")
@click.option("--out", default=None, help="Also write OUT/index.html, PNG bars and compare.csv.")
def compare(a: str, b: str, scale: str, storage: str, metrics: tuple[str, ...], threshold: float,
            all_configs: bool, out: str | None) -> None:
    """Two studies side by side (A, B: NAME[@SCALE], a study directory, or published[:PAPER/FILE]).

    Per architecture: best G, where, robustness share, and A - B. NAME without @SCALE uses --scale.
    """
    # a side, scale, storage, metric or reference that cannot be used: a CompareError, one line, exit status 2
    click.echo(comparison_text(a, b, storage=storage, scale=scale, metrics=metrics, threshold=threshold,
                               common=not all_configs, out=out))
