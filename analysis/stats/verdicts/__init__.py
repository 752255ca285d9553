"""A study's verdicts: each finding's :class:`~analysis.stats.verdicts.status.Status` from its bounds' checks
(:mod:`~analysis.stats.verdicts.evaluate`), what they are checked on (:mod:`~analysis.stats.verdicts.data`), and the
one function behind every verdict the project shows or acts on (:mod:`~analysis.stats.verdicts.study`). Imports the
finding kinds, the intervals, the noise model and the cell table below it; the budget above it imports this."""
