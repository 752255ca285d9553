"""A time-axis bound read at some cell of its region (the finding's ``cell="any"``) instead of its best cell.

A sentence like "when the model dimension is too small, the first case is learned and then unlearned" is about one
cell of the grid the paper shows (its learning rate only in the figure), not about the cell with the best G: the
cell that learns a case best need not be the one that loses it again. With ``cell="any"`` each of ``reached_by``,
``still_holds`` and ``learned_then_unlearned`` is decided per cell of the panel value's region by the kind's one
per-curve check (:meth:`analysis.stats.kinds.time_kind.TimeKind.on_curves`), and the cells' states are combined:

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

from collections.abc import Callable
from dataclasses import replace

from analysis.stats.intervals.errors import Errors
from analysis.stats.kinds.base import Check, Reading, State
from analysis.stats.kinds.time_axis import CurvesOf, cell_words, curve_of
from analysis.stats.metric import lower_is_better
from analysis.stats.table import Column

#: A time-axis bound's one check on the curves it is given: ``on_curves(curves_of, reading, errors)``.
OnCurves = Callable[[CurvesOf, Reading, Errors], Check]


def some_cell(value: str, on_curves: OnCurves, reading: Reading) -> Check:
    """A time-axis bound on panel value ``value`` (its check: ``on_curves``) held by some cell of its region (module
    docstring)."""
    cells = reading.cells(value, reading.finding.where)
    if cells.is_empty():  # no cell at all: fails, as the best cell's check says
        return on_curves(lambda _v, _r, at: (None, at), reading, reading.errors)
    count = cells.height
    curves = [curve_of(cells.cell(i), reading) for i in range(count)]

    def judge(i: int, e: Errors) -> Check:
        return on_curves(lambda _v, _r, at: ([curves[i]], at), reading, e)

    narrow = replace(reading.errors, low=reading.errors.low / count, high=reading.errors.high / count)
    judged = [(judge(i, narrow), judge(i, reading.errors)) for i in range(count)]
    names = [cell_words(cells.cell(i), reading.panel) for i in range(count)]
    holding = [i for i, (held, _) in enumerate(judged) if held.state == State.HOLDS]
    if holding:
        i = holding[0]
        return replace(judged[i][0], subject=f"{value} at {names[i]} (one of {count} cells, each at 1/{count} of "
                                             f"the error)")
    if all(full.state == State.FAILS for _, full in judged):
        g = cells.frame.get_column(Column.G)
        best = (g.arg_min() if lower_is_better(reading.metric) else g.arg_max()) or 0
        return replace(judged[best][1], state=State.FAILS,
                       subject=f"{value}: each of {count} cells fails; the best, at {names[best]}")
    ran = [i for i in range(count) if not curves[i].is_empty()]
    left = [i for i in ran if judged[i][1].state != State.FAILS]
    pending = f" ({count - len(ran)} not run yet)" if len(ran) < count else ""
    # shown: a cell left open whose seed means alone (each end at an error of one half) hold it, else one left open,
    # else (cells not run yet leave it open) one that has run, else the first
    means = replace(reading.errors, low=0.5, high=0.5)
    i = next((i for i in left if judge(i, means).state == State.HOLDS), (left or ran or [0])[0])
    return replace(judged[i][0], state=State.UNDECIDED,
                   subject=f"{value}: none of {count} cells holds at 1/{count} of the error, not every one "
                           f"fails{pending}; at {names[i]}")
