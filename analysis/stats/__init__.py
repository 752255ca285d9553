"""The statistics: pure functions of a study's rows, no figure, no HTML (imports only :mod:`analysis.data`).

* :mod:`~analysis.stats.rgb` - the paper's RGB statistic and its relatives (over seeds, over training);
* :mod:`~analysis.stats.training_stats` - every number of a training study's report, from one scan of the rows;
* :mod:`~analysis.stats.coverage` - what the numbers are computed from (trials and models by status);
* :mod:`~analysis.stats.cells` - per-cell data behind the interactive grids;
* :mod:`~analysis.stats.paper_tables` - the paper-style tables as DataFrames;
* :mod:`~analysis.stats.published` - the published grid on the study's cells;
* :mod:`~analysis.stats.findings`, :mod:`~analysis.stats.finding_intervals`, :mod:`~analysis.stats.seed_noise` -
  findings checked against the numbers, each with its interval from seed noise;
* :mod:`~analysis.stats.budget`, :mod:`~analysis.stats.replay` - the adaptive budget, and its replay on finished rows;
* :mod:`~analysis.stats.holdout`, :mod:`~analysis.stats.calibration` - the intervals held to their word: on held-out
  seeds of the authors' release, and on studies of known truth;
* :mod:`~analysis.stats.compare`, :mod:`~analysis.stats.paired` - two studies side by side, cell by cell;
* :mod:`~analysis.stats.importance` - which hyperparameter matters (Optuna's evaluators);
* :mod:`~analysis.stats.order` - the paper's panel order and how values are written.
"""
