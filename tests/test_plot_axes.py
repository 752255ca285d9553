"""The report's grid axes (a study's ``Plot``, defaults filled in): a layout its rows cannot fill is refused by
`study report` / `study findings` in one line naming the axis and the columns, never a traceback from the report."""

from __future__ import annotations

import pytest

from core.errors import OneLineError
from search_spaces import Plot
from search_spaces.schema import StudyError
from search_spaces.yun2020_properties import EQUIVARIANCE


def test_defaults_fill_the_unset_axes_from_the_columns() -> None:
    from analysis.stats.training_stats import plot_axes
    from search_spaces.record import StudyRecord

    unset = StudyRecord.of(EQUIVARIANCE.replace(plot=Plot(panel=None, x=None, y=None)))
    columns = ["architecture", "pooling", "seq_len", "learning_rate", "seed"]
    assert plot_axes(unset, columns) == ("architecture", "pooling", "learning_rate")
    named = StudyRecord.of(EQUIVARIANCE.replace(plot=Plot(panel="pooling", x="width", y="learning_rate")))
    with pytest.raises(StudyError, match=r"cannot choose plot axes \['x'\]"):  # set, but not a column
        plot_axes(named, columns)


def test_a_recorded_plot_without_columns_is_one_line() -> None:
    from analysis.stats.training_stats import plot_axes
    from search_spaces.record import StudyRecord

    record = StudyRecord.of(EQUIVARIANCE.replace(plot=Plot(panel="pooling", x="seq_len", y=None)))
    with pytest.raises(StudyError, match=r"cannot choose plot axes \['y'\]") as caught:
        plot_axes(record, ["pooling", "seq_len", "seed"])
    assert isinstance(caught.value, OneLineError) and "\n" not in str(caught.value)
    assert plot_axes(record, ["pooling", "seq_len", "learning_rate"]) == ("pooling", "seq_len", "learning_rate")
