"""The adaptive budget (:mod:`~analysis.stats.budget.adaptive`: seeds only where a finding is undecided) and its
replay over rows that already exist (:mod:`~analysis.stats.budget.replay`). The top of the verdict layers: it imports
the verdicts, never the other way round."""
