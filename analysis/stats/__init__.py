"""The statistics: pure functions of a study's rows, no figure, no HTML (imports only :mod:`analysis.data`).

The numbers of a study (each module imports only modules of this list and :mod:`analysis.data`):

* :mod:`~analysis.stats.rgb` - the paper's RGB statistic and its relatives (over seeds, over training);
* :mod:`~analysis.stats.seed_stats` - what a cell's seeds say beyond their mean (noise, lift, spread);
* :mod:`~analysis.stats.training_stats` - every number of a training study's report, from one scan of the rows;
* :mod:`~analysis.stats.coverage` - what the numbers are computed from (trials and models by status);
* :mod:`~analysis.stats.hover` - per-cell data behind the interactive grids;
* :mod:`~analysis.stats.paper_tables` - the paper-style tables as DataFrames;
* :mod:`~analysis.stats.published` - the published grid on the study's cells;
* :mod:`~analysis.stats.compare`, :mod:`~analysis.stats.paired`, :mod:`~analysis.stats.separation` - two studies side
  by side, cell by cell;
* :mod:`~analysis.stats.importance` - which hyperparameter matters (Optuna's evaluators);
* :mod:`~analysis.stats.order` - the paper's panel order; :mod:`~analysis.stats.metric` - what a finding's metric
  is; :mod:`~analysis.stats.region` - a region of the grid.

The verdicts, in layers (each imports only the ones before it and the numbers above; tests/test_layout.py holds it):

1. :mod:`~analysis.stats.table` - the cell table, what every layer below passes on;
2. :mod:`~analysis.stats.noise` - the seed noise of a cell's G, from its grid neighbours;
3. :mod:`~analysis.stats.intervals` - the one interval of a cell's G, the error budget, the statistics over cells;
4. :mod:`~analysis.stats.kinds` - the finding kinds, one class per file;
5. :mod:`~analysis.stats.verdicts` - each finding's status, the one function behind every verdict;
6. :mod:`~analysis.stats.budget` - the adaptive budget and its replay.

The proof that the verdicts hold their stated confidence is not here: :mod:`analysis.calibration` imports these,
never the other way round.
"""
