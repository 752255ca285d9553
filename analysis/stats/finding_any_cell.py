"""A finding's time-axis bounds read at some cell of its region (``cell="any"``) instead of its best cell.

A sentence like "when the model dimension is too small, the first case is learned and then unlearned" is about one
cell of the grid the paper shows (its learning rate only in the figure), not about the cell with the best G: the
cell that learns a case best need not be the one that loses it again. With ``cell="any"`` each of ``reached_by``,
``still_holds`` and ``learned_then_unlearned`` is decided per cell of the panel value's region by the one
per-curve check of :func:`analysis.stats.finding_time.time_checks`, and the cells' states are combined:

* it **holds** when some cell holds it with that cell's intervals read at the end's error divided by the number C
  of cells in the region. The holding cell is picked from the data - a search over C cells - so a bound the truth
  breaks in every cell would be held by chance in one of them with probability up to C times a cell's error; at the
  end's error / C each, the union over the C cells stays within the end's error (Bonferroni: no assumption on how
  the cells' noise is related), and the finding's confidence is the study's as for every other bound;
* it **fails** when every cell fails it, each at the end's whole error: where some cell truly holds it, a wrong FAIL
  needs that one cell to fail, which its own interval allows with at most the end's error;
* else it is **undecided**; a cell that has not run yet is undecided, so it leaves a FAIL open, while a cell that
  already holds the bound decides it (C counts the region's cells, run or not).

Each bound picks its own cell. Its words name the cell that decided (its axis values) "of C cells": the first that
holds; for a FAIL the best cell; for an UNDECIDED one left open, preferably one whose seed means alone hold it (while
cells have not run, one that has).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import polars as pl

from analysis.stats.curve_intervals import with_grid_noise
from analysis.stats.finding_cells import lower_is_better
from analysis.stats.finding_check import Check
from analysis.stats.finding_intervals import Errors
from analysis.stats.finding_time import cell_curve, time_checks
from analysis.stats.seed_noise import NoiseModel
from search_spaces.axes import show_value
from search_spaces.finding import Finding


def any_cell_checks(finding: Finding, metric: str, cells_of: Callable[[str], pl.DataFrame],
                    rows: tuple[pl.DataFrame, Sequence[str], str], errors: Errors, percent: bool,
                    noise: NoiseModel) -> list[Check]:
    """Every time-axis bound of ``finding`` (``cell="any"``: module docstring), in the order of
    :func:`analysis.stats.finding_time.time_checks`: ``cells_of(panel value)`` is the value's cells in ``where``
    (``n`` 0: not run yet); ``rows``: the per-evaluation rows, the columns naming a cell and the panel's column."""
    none: dict[str, Any] = {"reached_by": {}, "still_holds": (), "learned_then_unlearned": {}}
    singles = [(v, {"reached_by": {v: by}}) for v, by in finding.reached_by.items()]
    singles += [(v, {"still_holds": (v,)}) for v in finding.still_holds]
    singles += [(v, {"learned_then_unlearned": {v: drop}}) for v, drop in finding.learned_then_unlearned.items()]
    return [_some_cell(finding.model_copy(update={**none, **bound}), value, cells_of(value),
                       (*rows, metric), errors, percent, noise) for value, bound in singles]


def _some_cell(one: Finding, value: str, cells: pl.DataFrame, rows: tuple[pl.DataFrame, Sequence[str], str, str],
               errors: Errors, percent: bool, noise: NoiseModel) -> Check:
    """``one``'s single bound on ``value``, held by some cell of ``cells`` (module docstring)."""
    evaluations, keys, panel, metric = rows
    if cells.is_empty():  # no cell at all: fails, as the best cell's check says
        return time_checks(one, metric, lambda _v, _r, at: (None, at), one.where, errors, percent)[0]
    count = cells.height
    narrow = replace(errors, low=errors.low / count, high=errors.high / count)
    curves = [with_grid_noise(cell_curve(cells.slice(i, 1), evaluations, keys, metric, one.time), cells.slice(i, 1),
                              noise) for i in range(count)]

    def judge(i: int, e: Errors) -> Check:
        return time_checks(one, metric, lambda _v, _r, at: ([curves[i]], at), one.where, e, percent)[0]

    judged = [(judge(i, narrow), judge(i, errors)) for i in range(count)]
    names = [", ".join(f"{k} {show_value(v)}" for k, v in cells.select(k for k in keys if k != panel).row(i, named=True)
                       .items() if v is not None) for i in range(count)]
    holding = [i for i, (held, _) in enumerate(judged) if held.state == "holds"]
    if holding:
        i = holding[0]
        return replace(judged[i][0], subject=f"{value} at {names[i]} (one of {count} cells, each at 1/{count} of "
                                             f"the error)")
    if all(full.state == "fails" for _, full in judged):
        best = (cells["g"].arg_min() if lower_is_better(metric) else cells["g"].arg_max()) or 0
        return replace(judged[best][1], state="fails",
                       subject=f"{value}: each of {count} cells fails; the best, at {names[best]}")
    ran = [i for i in range(count) if not curves[i].is_empty()]
    left = [i for i in ran if judged[i][1].state != "fails"]
    pending = f" ({count - len(ran)} not run yet)" if len(ran) < count else ""
    # shown: a cell left open whose seed means alone (each end at an error of one half) hold it, else one left open,
    # else (cells not run yet leave it open) one that has run, else the first
    means = replace(errors, low=0.5, high=0.5)
    i = next((i for i in left if judge(i, means).state == "holds"), (left or ran or [0])[0])
    return replace(judged[i][0], state="undecided",
                   subject=f"{value}: none of {count} cells holds at 1/{count} of the error, not every one "
                           f"fails{pending}; at {names[i]}")
