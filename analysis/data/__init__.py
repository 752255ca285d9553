"""Reading a study's results where they live, and its definition: nothing here computes a statistic or draws.

* :mod:`~analysis.data.location` - a local directory or an object-store URI, read in place;
* :mod:`~analysis.data.lake` - which rows a reader sees: the Delta table plus the trial files not folded yet;
* :mod:`~analysis.data.rows` - the rows (and artifact tables) as one lazy polars frame;
* :mod:`~analysis.data.columns` - rows written before a column's meaning changed, read as rows written now;
* :mod:`~analysis.data.meta` - ``study.json`` parsed into :class:`~analysis.data.meta.StudyRecord`: its only reader;
* :mod:`~analysis.data.machines` - which machines produced the rows;
* :mod:`~analysis.data.reference` - the published results (``reference_data/``) in the results schema;
* :mod:`~analysis.data.synthetic` - synthetic studies for tests and benchmarks;
* :mod:`~analysis.data.scalars` - a polars aggregate (a column's max, min, mean) as a typed Python number.

Imports nothing else of :mod:`analysis`.
"""
