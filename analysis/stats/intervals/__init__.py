"""Intervals from seed noise: the one interval of a cell's G (:mod:`~analysis.stats.intervals.cell`), the error each
of its ends may have (:mod:`~analysis.stats.intervals.errors`), the statistics over a region's cells built from them
(:mod:`~analysis.stats.intervals.statistics`, :mod:`~analysis.stats.intervals.spread`) with what they are
(:mod:`~analysis.stats.intervals.estimate`), and a learning curve's (:mod:`~analysis.stats.intervals.curves`).
Imports :mod:`analysis.stats.table` and :mod:`analysis.stats.noise` only (below them), never the kinds above."""
