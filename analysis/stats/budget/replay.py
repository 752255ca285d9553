"""The adaptive budget replayed over rows that already exist (the authors' release, a finished fixed study): which
models it would have trained, which verdicts it would have reached, against the verdicts of all the rows.

The replay gives each cell its seeds in their order (the release's seed 0, 1, ...), exactly as a live adaptive study
would train them, and counts:

* **models** - cell x seed pairs the budget gave, out of all the rows' (cells x seeds);
* **model-epochs** - the evaluations those models trained: every one, except where the stopping rule of a model ends
  it early (:func:`stop_epochs`: once every seed of its cell sits at the ceiling of every column the study reads at
  one evaluation, the cell's G, R and B are final and the cell's last model stops there);
* **same verdicts** - of the verdicts every seed decides under the budget's own error spending (the adaptive study
  completed: every cell at every seed, its last look), how many the budget reached too; a budget that decides the
  opposite is named (it must never happen with the stated confidence). Beside them, the verdicts of one look at
  every seed with the whole error (a fixed budget): a verdict that one look decides by less than the spending costs
  (the error a look spends is a share of the whole) is open under any adaptive budget, seeds or not, and is named.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from analysis.stats.budget.adaptive import Budget, Outcome, run_budget
from analysis.stats.training_stats import TrainingStats, training_stats
from analysis.stats.verdicts.data import FindingData, published_data
from analysis.stats.verdicts.evaluate import Verdict, evaluate_findings
from analysis.stats.verdicts.status import DECIDED
from search_spaces.finding import stopping_columns
from search_spaces.record import StudyRecord

#: The ceiling of an accuracy column: a model at it can only stay or fall.
CEILING = 1.0


@dataclass(frozen=True)
class Replay:
    """The adaptive budget over the rows, beside the verdicts of all the rows."""

    outcome: Outcome
    full: list[Verdict]  # every seed, the adaptive study completed (its last look)
    models: tuple[int, int]  # used, all
    epochs: tuple[int, int]  # model-epochs used, all
    fixed: list[Verdict] = field(default_factory=list)  # every seed, one look (a fixed budget)

    @property
    def adaptive(self) -> list[Verdict]:
        """The budget's verdicts (each finding's first decided one)."""
        return self.outcome.verdicts()

    def agreement(self) -> tuple[int, int, list[str], list[str]]:
        """(same, decided in the full rows, findings decided the opposite way, findings the budget left open)."""
        same, decided, opposite, left_open = 0, 0, [], []
        for full, mine in zip(self.full, self.adaptive, strict=True):
            if full.status not in DECIDED:
                continue
            decided += 1
            if mine.status == full.status:
                same += 1
            elif mine.status in DECIDED:
                opposite.append(full.finding.description)
            else:
                left_open.append(full.finding.description)
        return same, decided, opposite, left_open

    def line(self) -> str:
        """``budget: 1,234 of 2,400 models (51.4%), 30,000 of 76,800 model-epochs (39.1%); 15 of 15 decided verdicts
        same``, plus what is left open or reversed."""
        (used, total), (e_used, e_total) = self.models, self.epochs
        same, decided, opposite, left_open = self.agreement()
        text = (f"budget: {used:,} of {total:,} models ({100 * used / max(total, 1):.1f}%), {e_used:,} of {e_total:,} "
                f"model-epochs ({100 * e_used / max(e_total, 1):.1f}%); {same} of {decided} decided verdicts same")
        if left_open:
            text += f"; left UNDECIDED: {'; '.join(left_open)}"
        if opposite:
            text += f"; DECIDED THE OPPOSITE: {'; '.join(opposite)}"
        spent = [f.finding.description for f, c in zip(self.fixed, self.full, strict=True)
                 if f.status in DECIDED and c.status not in DECIDED]
        if spent:
            text += f"; decided by one look at every seed only (the looks' error spending): {'; '.join(spent)}"
        return text


def replay(meta: StudyRecord, rows: pl.LazyFrame) -> Replay:
    """The adaptive budget of ``meta`` over ``rows`` (every cell of the study's grid with all its seeds)."""
    fixed = meta.replace(budget="fixed")
    adaptive = meta.replace(budget="adaptive")
    full_stats = training_stats(rows, fixed)
    keys = full_stats.axes.by
    every_seed = published_data(full_stats, len(meta.seeds))
    full, one_look = evaluate_findings(adaptive, every_seed), evaluate_findings(fixed, every_seed)
    cells = full_stats.select_rgb.select(keys)

    def view(budget: Budget) -> FindingData:
        given = budget.seed_rows()
        seen = rows.join(given.lazy(), on=[*keys, "seed"], how="semi", nulls_equal=True)
        return published_data(training_stats(seen, adaptive, report=False), len(meta.seeds))

    outcome = run_budget(adaptive, cells, view)
    given = outcome.budget.seed_rows() if outcome.budget is not None else cells.head(0)
    epochs = stop_epochs(rows, given, keys, _read_columns(meta, full_stats), len(meta.seeds))
    all_epochs = rows.group_by([*keys, "seed"]).agg(pl.col("step").n_unique().alias("e")).select(pl.col("e").sum())
    n_all = rows.select(pl.struct([*keys, "seed"]).n_unique()).collect().item()
    return Replay(outcome, full, (given.height, int(n_all)), (epochs, int(all_epochs.collect().item())), one_look)


def _read_columns(meta: StudyRecord, stats: TrainingStats) -> list[str]:
    """The columns the study reads of a model: its grids' metrics and its findings' (a loss reads no ceiling; a probe is
    read at the checkpoint, which a model stopped at the ceiling no longer moves: none)."""
    return sorted({*stats.metrics.grids, *stopping_columns(meta.findings, meta.metric)})


def stop_epochs(rows: pl.LazyFrame, given: pl.DataFrame, keys: list[str], read: list[str], all_seeds: int) -> int:
    """The model-epochs the given models train under the stopping rule: a cell that got all its seeds stops its
    last model at the first evaluation where every seed of the cell is at :data:`CEILING` on every read column (the
    cell's G, R and B are then final); every other model trains every evaluation. A read column that is no accuracy
    (a loss has no ceiling) stops nothing."""
    seen = rows.join(given.lazy(), on=[*keys, "seed"], how="semi", nulls_equal=True)
    per_model = seen.group_by([*keys, "seed"]).agg(pl.col("step").n_unique().alias("e"))
    total = int(per_model.select(pl.col("e").sum()).collect().item())
    if any("accuracy" not in c for c in read):
        return total
    at_ceiling = pl.all_horizontal(pl.col(c).fill_nan(0.0).fill_null(0.0) >= CEILING for c in read)
    full = given.group_by(keys).agg(pl.len().alias("k"), pl.col("seed").max().alias("last")).filter(
        pl.col("k") >= all_seeds)
    steps = seen.join(full.lazy(), on=keys, how="semi", nulls_equal=True).with_columns(top=at_ceiling)
    first = (steps.group_by([*keys, "step"]).agg(pl.col("top").all().alias("all_top"), pl.len().alias("m"))
             .filter(pl.col("all_top") & (pl.col("m") >= all_seeds)).group_by(keys).agg(pl.col("step").min()
                                                                                        .alias("stop")))
    saved = (seen.join(full.lazy(), on=keys, how="inner", nulls_equal=True).filter(pl.col("seed") == pl.col("last"))
             .join(first, on=keys, how="inner", nulls_equal=True).filter(pl.col("step") > pl.col("stop"))
             .select(pl.len()).collect().item())
    return total - int(saved)
