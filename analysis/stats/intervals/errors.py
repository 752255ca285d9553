"""The error each end of an interval may have, and how a finding's error budget is shared among its ends and spent
over the looks of an adaptive budget."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from analysis.stats.table import Floats
from search_spaces.record import StudyRecord


@dataclass(frozen=True)
class Errors:
    """The one-sided error each end of a statistic's interval may have (``low``: that the lower end lies above the
    truth; ``high``: that the upper end lies below it), and how an adaptive budget spends it: a cell of ``n`` seeds
    uses ``share(n)`` of it, a mean or a spread (one interval over many cells) ``look`` of it."""

    low: float
    high: float
    #: per adaptive seed count (``first``, ``first + 1``, ... ``last``) its share: 1 for a fixed budget
    shares: tuple[float, ...] = (1.0,)
    first: int = 1
    look: float = 1.0

    def share(self, n: Floats) -> Floats:
        """Per cell of ``n`` seeds the share of the error its interval spends (module docstring)."""
        index = np.clip(n.astype(int) - self.first, 0, len(self.shares) - 1)
        shares: Floats = np.asarray(self.shares, dtype=np.float64)[index]
        return shares

    def halved(self) -> Errors:
        """Each end at half the error (the two sides of a difference share it)."""
        return self.scaled(0.5)

    def scaled(self, factor: float) -> Errors:
        """Each end at ``factor`` times its error."""
        return replace(self, low=self.low * factor, high=self.high * factor)


#: The power of the error-spending function of an adaptive budget: a cell's interval at its ``i``-th seed count of
#: ``L`` (``starting seeds``, ..., all seeds) spends alpha ((i / L)^2 - ((i - 1) / L)^2), a mean's or a spread's at
#: look ``i`` of ``L`` the same: little on the first (two seeds decide only what is far from a bound), most on the last.
SPENDING_POWER = 2


def spent(alpha: float, look: int, looks: int) -> float:
    """The share of the error budget ``alpha`` that the ``look``-th of ``looks`` spends (all of it with one look)."""
    return alpha * ((look / looks) ** SPENDING_POWER - ((look - 1) / looks) ** SPENDING_POWER)


def error_budget(meta: StudyRecord, look: int, ends: int) -> Errors:
    """Each interval end's one-sided error in a finding whose checks have ``ends`` ends that can fail it (a level
    check two, any other one): ``alpha / ends``, alpha = 1 - confidence. A wrong PASS needs the one bound the truth
    breaks to be wrongly held (an end's error); a wrong FAIL needs any bound wrongly failed (the ends' errors summed):
    either way at most alpha. An adaptive budget spends it over the seed counts a cell goes through (a cell's
    interval is a function of its first seeds, whichever cells the earlier looks chose: docs/budget.md)."""
    alpha = (1.0 - meta.confidence) / max(ends, 1)
    if meta.looks == 1:
        return Errors(alpha, alpha)
    shares = tuple(spent(1.0, i, meta.looks) for i in range(1, meta.looks + 1))
    return Errors(alpha, alpha, shares, len(meta.starting_seeds), spent(1.0, look, meta.looks))
