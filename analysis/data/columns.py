"""Rows written before the ``mixer`` column meant one thing, read as rows written now (docs/results.md).

Until issue 25 the ``mixer`` column held a registry mixer name (``trainables/mixers/``) or one of four other
words, each of which another column already says:

* ``stack`` - a Richter encoder whose layers mix differently: ``mixer_stack`` names each layer's mixer;
* ``dpa`` / ``ea`` - Gros' own attention head: ``attention`` holds the same word;
* ``own`` - a CTL model's own attention: ``model`` names the model, ``attention`` its attention.

Now ``mixer`` is a registry mixer name or null (no registry mixer runs), and ``attention`` is the family's own
attention that ran, null where a registry mixer replaced it (an old Gros row kept the unused ``attention``
hyperparameter there, an old CTL row the mixer's name). :func:`current_columns` makes old rows read so; it
leaves new rows as they are, so a table that holds both reads as one. The readers (:mod:`analysis.data.rows`)
apply it to everything they read and the fold (``study/results/table.py``) to every file it folds. Trial keys hash the
trial's configuration, not these columns: a study on disk resumes without re-running a trial.
"""

from __future__ import annotations

from typing import TypeVar

import polars as pl

#: Values the ``mixer`` column held before issue 25 that name no registry mixer (see the module docstring).
OLD_MIXER_WORDS = ("stack", "dpa", "ea", "own")
Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


def current_columns(frame: Frame) -> Frame:
    """``frame`` with old rows' ``mixer`` / ``attention`` values as they are written now (new rows unchanged)."""
    schema = frame.collect_schema() if isinstance(frame, pl.LazyFrame) else frame.schema
    if schema.get("mixer") != pl.String:  # no mixer column, or one with no name at all: nothing old to map
        return frame
    mixer = pl.when(pl.col("mixer").is_in(OLD_MIXER_WORDS)).then(None).otherwise(pl.col("mixer"))
    if "attention" not in schema:
        return frame.with_columns(mixer.alias("mixer"))
    # Where a registry mixer ran, no attention of the family's own did (evaluated on the old mixer values).
    attention = pl.when(mixer.is_null()).then(pl.col("attention")).otherwise(None).cast(schema["attention"])
    return frame.with_columns(mixer.alias("mixer"), attention.alias("attention"))
