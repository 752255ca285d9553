"""The finding kinds: one bound of a finding per class, one class per file (:mod:`analysis.stats.kinds.base` says what
a kind is). Importing this package registers the project's own kinds in :data:`~analysis.stats.kinds.base.KINDS`, in
the order a verdict lists their checks; a kind of yours registers itself from your own module (docs/extending.md).

* :mod:`~analysis.stats.kinds.threshold` - ``below`` / ``above`` a threshold;
* :mod:`~analysis.stats.kinds.ahead`, :mod:`~analysis.stats.kinds.level_with`, :mod:`~analysis.stats.kinds.not_ahead`
  - two panel values compared (:mod:`~analysis.stats.kinds.comparison`); :mod:`~analysis.stats.kinds.lead_grows` - a
  lead in one region against the same lead in another;
* :mod:`~analysis.stats.kinds.worst_beats_best` - the NAP paper's worst seed against best seed;
* :mod:`~analysis.stats.kinds.counted` - more than a share of some comparisons are so (a sentence that counts);
* :mod:`~analysis.stats.kinds.reached_by`, :mod:`~analysis.stats.kinds.still_holds`,
  :mod:`~analysis.stats.kinds.learned_then_unlearned`, :mod:`~analysis.stats.kinds.faster_than`,
  :mod:`~analysis.stats.kinds.level_along`, :mod:`~analysis.stats.kinds.gain` - the time axis
  (:mod:`~analysis.stats.kinds.time_axis`; ``cell="any"``: :mod:`~analysis.stats.kinds.any_cell`);
* :mod:`~analysis.stats.kinds.falls_short` - every row of a region short of a level in some panel value ("the only
  one"), stated under a finding's ``kinds``; :mod:`~analysis.stats.kinds.learned_in_order` - within one panel
  value, one metric mostly learned before another (each run's own curve), stated under ``kinds``.
"""

# Each module registers its kind when imported, and a verdict lists its checks in this order (not sorted: I001).
from analysis.stats.kinds import (  # noqa: F401, I001
    threshold,
    ahead,
    level_with,
    not_ahead,
    lead_grows,
    worst_beats_best,
    counted,
    reached_by,
    still_holds,
    learned_then_unlearned,
    faster_than,
    level_along,
    gain,
    falls_short,
    learned_in_order,
)
