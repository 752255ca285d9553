"""A study's report: sections registered by name, composed into one ``index.html`` and ``summary.txt``.

* :mod:`~analysis.report.sections` - the registry and :class:`~analysis.report.sections.ReportContext`;
* :mod:`~analysis.report.build` - :func:`~analysis.report.build.build_report`: which sections, in which order;
* :mod:`~analysis.report.header` - title, goal, deviations, search space;
* :mod:`~analysis.report.progress` - ``progress``: what the numbers are computed from;
* :mod:`~analysis.report.grids` - ``grids``: the interactive RGB grids beside the published ones;
* :mod:`~analysis.report.results` - ``robustness``, ``learning_curves``, ``paper_table``, ``importance``;
* :mod:`~analysis.report.summary` - ``findings`` and the summaries at the top and on the command line.

Imports data, stats and render; never :mod:`analysis.papers`, whose modules it imports by package name.
"""
