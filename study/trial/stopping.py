"""When a model may stop early: once nothing the study reads of its cell can change any more.

What a study reads of a cell are its RGB numbers (per evaluation the worst, mean and best seed, each maximised over
training) of the columns its grids and findings use. At an evaluation where **every seed of the cell** sits at the
ceiling of every such column (100% accuracy), R, G and B are at the largest value they can take: later evaluations
cannot raise them, so the cell's last model to train stops there and the rows record where (``stopped_at``). A
model stops only where that is certain:

* the cell's other seeds must be known at that evaluation: this trial's seeds that trained before it, and the rows
  of the cell's earlier trials (an adaptive budget's first seeds), so it is the cell's last seeds that may stop; a
  trial whose cell can still get seeds later never stops;
* every read column must have a ceiling (an accuracy); a study that reads a loss stops nothing;
* a trial of packed learning rates holds several cells: it stops nothing.

The analysis reads the rows as usual: a stopped model's missing later evaluations cannot change R, G or B (they are
already at the ceiling). What does change is a learning curve after the stop, drawn from the seeds still training.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from search_spaces.finding import stopping_columns

if TYPE_CHECKING:
    from search_spaces.study import Study

#: The ceiling of an accuracy column.
CEILING = 1.0
#: The columns every report reads of a model where its family writes them: the grids' and the case grids'.
REPORT_COLUMNS = ("train_accuracy", "val_accuracy", *(f"{split}_{case}_accuracy" for split in ("train", "val")
                                                       for case in ("argmin", "first", "argmax")))


def read_columns(study: Study) -> tuple[str, ...]:
    """The columns the study reads of a model: its metric, the report's grids and its findings' metrics (a probe is
    read at the checkpoint its study's metric picks, which a model stopped at the ceiling no longer moves: not one)."""
    return tuple(dict.fromkeys([study.metric, *REPORT_COLUMNS, *stopping_columns(study.findings, study.metric)]))


class StopRule:
    """The ``on_eval`` answer of one trial (:mod:`trainables.rows`): True once every seed of the cell is at the
    ceiling of every read column at one evaluation."""

    def __init__(self, columns: Sequence[str], cell_seeds: Iterable[int], earlier: Iterable[Mapping[str, Any]] = ()):
        self.columns = tuple(columns)
        self.seeds = frozenset(cell_seeds)
        self.top: dict[int, dict[int, bool]] = {}  # step -> seed -> at the ceiling there
        for row in earlier:
            self.see(row)

    @classmethod
    def for_trial(cls, columns: Sequence[str], study_seeds: Sequence[int], trial_seeds: Sequence[int],
                  earlier: Iterable[Mapping[str, Any]], single_cell: bool) -> StopRule | None:
        """The rule of a trial, or None where none can apply (module docstring)."""
        earlier = list(earlier)
        known = {int(r["seed"]) for r in earlier} | set(trial_seeds)
        if not single_cell or not columns or any("accuracy" not in c for c in columns) or known < set(study_seeds):
            return None
        return cls(columns, study_seeds, earlier)

    def see(self, row: Mapping[str, Any]) -> None:
        """Note whether ``row``'s seed is at the ceiling at its step."""
        values = [row[c] for c in self.columns if c in row]  # the columns this family writes
        top = bool(values) and all(isinstance(v, int | float) and v >= CEILING for v in values)
        self.top.setdefault(int(row["step"]), {})[int(row["seed"])] = top

    def __call__(self, row: Mapping[str, Any]) -> bool:
        self.see(row)
        at = self.top.get(int(row["step"]), {})
        return set(at) >= self.seeds and all(at[s] for s in self.seeds)
