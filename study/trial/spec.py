"""A trial as one typed value, from the tuner to the row writer: a point of the search space and the seeds it trains.

A grid study with a fixed budget trains every seed of a point in one trial (its key is the key trials had before
seeds could be split, so studies on disk resume); an adaptive budget trains a point's first seeds in one trial and
each later seed in a trial of its own, and completing such a study to the full grid trains each point's missing seeds
in one more. Whatever the split, a seed's rows are the same (each seed has its own initialisation and data stream).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from search_spaces.study import Study
from study.trial.identity import trial_key


@dataclass(frozen=True)
class Trial:
    """One trial: ``point`` (axis -> value; packed learning rates as a list) and the ``seeds`` it trains."""

    point: Mapping[str, Any]
    seeds: tuple[int, ...]
    #: the seeds of the same point's earlier trials, as they were grouped (an adaptive budget's first seeds, then one
    #: seed per trial): the cell's rows a model's stopping rule reads (study.trial.stopping); not part of the key
    earlier: tuple[tuple[int, ...], ...] = ()

    @classmethod
    def every_seed(cls, study: Study, point: Mapping[str, Any]) -> Trial:
        """The trial of ``point`` with all of the study's seeds."""
        return cls(dict(point), tuple(study.seeds))

    @classmethod
    def from_config(cls, config: Mapping[str, Any], study: Study) -> Trial:
        """The trial Ray Tune hands a worker (:meth:`to_config` under ``trial``; a bare point, as a sampler draws it:
        every seed)."""
        config = config.get("trial", config)
        if "point" in config:
            earlier = tuple(tuple(group) for group in config.get("earlier") or ())
            return cls(dict(config["point"]), tuple(config.get("seeds") or study.seeds), earlier)
        return cls.every_seed(study, config)

    def to_config(self) -> dict[str, Any]:
        """What Ray Tune carries to the worker."""
        return {"point": dict(self.point), "seeds": list(self.seeds), "earlier": [list(g) for g in self.earlier]}

    def key(self, study: Study) -> str:
        """The trial key: (study, configuration, seeds, the study's plugin modules)."""
        return trial_key(study.name, study.configuration(self.point), self.seeds, study.plugins)
