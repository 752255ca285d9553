"""Published numbers as cells: a paper's table (mean, its printed spread over seeds, the seeds) in the study's own
columns, so that `study findings NAME --data published` checks the findings on the authors' own numbers where no
per-seed release exists (the NDR's Table 1, Gros' stated numbers, NAP's Tables 2-4).

A cells file is ``reference_data/<paper>/<name>.cells.csv``, one row per (cell, metric):

* the study's cell columns (its axes, e.g. ``model``, ``direction``), values as the study writes them;
* ``metric`` - the results column the number is of (e.g. ``test_accuracy``), ``value`` - the printed mean (an
  accuracy as a fraction), ``sd`` - the printed spread over seeds when it is a standard deviation (empty: none
  printed; the number then decides on its own, with no confidence to state), ``n_seeds`` (empty: unknown, taken
  as one);
* ``source`` - where in the paper (table, caption, section) and ``read_off`` - true for a number read off a figure
  rather than printed.

The loader gives per metric a cell frame (:class:`analysis.stats.table.CellTable`: the cell's columns, ``g``, ``sd``,
``n``), the form findings read.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

REFERENCE_DIR = Path(__file__).parent / "reference_data"
SUFFIX = ".cells.csv"
#: The columns of a cells file that are not a cell's configuration.
BOOKKEEPING = ("metric", "value", "sd", "n_seeds", "source", "read_off", "note")


#: Cells composed of shipped cells files: name -> (the column its parts are labelled in, per part its label, the cells
#: file and the rows kept of it (column, value), that column dropped). Sec. 5.2's two case tasks side by side: Tables 2
#: and 3's unregularised rows, each the release's d = 128 column of its task (docs/richter2020.md).
COMPOSED: dict[str, tuple[str, tuple[tuple[str, str, tuple[str, str]], ...]]] = {
    "richter2020/nap_tasks": ("task", (("cases", "richter2020/nap_table2", ("regularization", "none")),
                                       ("cases_first_token", "richter2020/nap_table3", ("regularization", "none")))),
}


def is_cells(name: str) -> bool:
    """Whether published results ``name`` are cells of a table (else the per-seed rows of a release)."""
    return name in COMPOSED or name.endswith(SUFFIX) or (REFERENCE_DIR / f"{name}{SUFFIX}").is_file()


def cells_path(name: str) -> Path:
    """The file of cells ``name`` (``<paper>/<name>`` shipped, or a path ending in ``.cells.csv``).

    Raises:
        FileNotFoundError: naming the shipped cells files when ``name`` is none of them.
    """
    path = Path(name) if name.endswith(SUFFIX) else REFERENCE_DIR / f"{name}{SUFFIX}"
    if not path.is_file():
        shipped = sorted(f"{p.parent.name}/{p.name.removesuffix(SUFFIX)}" for p in REFERENCE_DIR.glob(f"*/*{SUFFIX}"))
        raise FileNotFoundError(f"unknown published cells {name!r}; valid: {', '.join(shipped)}")
    return path


def published_cells(name: str) -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """(metric -> its cells: configuration columns, ``g``, ``sd``, ``n``; the whole file) of published cells ``name``.

    Raises:
        ValueError: a row without a metric or a value, or a cells file without configuration columns.
    """
    path = name if name in COMPOSED else cells_path(name)
    frame = _composed(name) if name in COMPOSED else pl.read_csv(path, infer_schema_length=None)
    keys = [c for c in frame.columns if c not in BOOKKEEPING]
    missing = [c for c in ("metric", "value") if c not in frame.columns]
    if missing or not keys:
        raise ValueError(f"{path}: a cells file needs the cell's columns and metric, value; it has {frame.columns}")
    if frame.filter(pl.col("metric").is_null() | pl.col("value").is_null()).height:
        raise ValueError(f"{path}: every row needs a metric and a value")
    sd = pl.col("sd").cast(pl.Float64) if "sd" in frame.columns else pl.lit(None, pl.Float64)
    n = pl.col("n_seeds").cast(pl.Int64).fill_null(1) if "n_seeds" in frame.columns else pl.lit(1, pl.Int64)
    cells = frame.select(*keys, "metric", pl.col("value").cast(pl.Float64).alias("g"), sd.fill_null(0.0).alias("sd"),
                         n.alias("n"))
    return {m: part.drop("metric") for (m,), part in cells.partition_by("metric", as_dict=True).items()}, frame


def _composed(name: str) -> pl.DataFrame:
    """A composed cells file (:data:`COMPOSED`): its parts' kept rows, each labelled, in one frame."""
    column, parts = COMPOSED[name]
    frames = []
    for label, part, (kept, value) in parts:
        rows = pl.read_csv(cells_path(part), infer_schema_length=None).filter(pl.col(kept) == value).drop(kept)
        frames.append(rows.with_columns(pl.lit(label).alias(column)).select(column, *rows.columns))
    return pl.concat(frames, how="diagonal_relaxed")
