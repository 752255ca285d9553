"""The calibration's findings: every statistic and relation at bounds set around its true value in a world
(:mod:`analysis.calibration.world`) - on it, inside by 0.5 to 2 points and outside by as much - so that a PASS is wrong
for half of them and a FAIL for the others. A decided verdict is wrong when it differs from the verdict on the truth;
each finding's wrong rate is counted on its own, never pooled. The time axis, two-sided levels and worst seed against
best seed: :mod:`analysis.calibration.time_findings`.

The findings are placed where a wrong statistic shows (:class:`Roles`): on the whole grid; where the seeds of the
architecture that splits most split (its mixed band of learning rates: a statistic there rests on cells whose first
seeds may all have learned, or none); on one cell alone (a plateau's noisy best: what picking the best evaluation
adds, the lift; a split cell's, from each side); and with one bound per architecture at once (six ends: each end's
share of the error is what keeps the finding's whole error at 5%).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from analysis.calibration.world import World
from search_spaces import Finding

OFFSETS = (-0.02, -0.005, 0.0, 0.005, 0.02)
#: Where NON's seeds split in the release's mode finding over d (learning rates >= 0.09: of its 16 cells there, 11 have
#: seeds that learn and seeds that do not, five-seed sd 5 to 30 points): the time axis' mixed region.
MIXED = {"learning_rate": {"min": 0.09}}


@dataclass(frozen=True)
class Roles:
    """Who plays which part in a world's findings, read from its truth."""

    learner: str  # the architecture with the best G but the splitter
    failing: str  # the one with the worst best G
    splitter: str  # the one whose seeds split in the most cells
    sharer: str  # the one whose share of cells at 90% is nearest one half (a share decided by many cells)
    mixed: dict[str, Any]  # the splitter's band of learning rates where at least three in four of its cells split
    plateau: dict[str, Any]  # one cell of a noisy plateau: mid-level G, its curve level over its second half
    split_cell: dict[str, Any]  # the splitter's cell whose seeds split most

    @classmethod
    def of(cls, world: World, truth: pl.DataFrame) -> Roles:
        """The roles in ``world`` (``truth``: :meth:`World.truth`)."""
        cells = world.cells.with_columns(split=pl.Series(world.split()), sd=pl.Series(world.curves.max(axis=2)
                                                                                      .std(axis=1, ddof=1)),
                                         g=truth.get_column("g"), _i=pl.int_range(world.cells.height))
        per = cells.group_by("architecture").agg(pl.col("g").max().alias("best"), pl.col("split").sum(),
                                                 (pl.col("g") >= 0.9).mean().alias("share"))
        splitter = str(per.sort("split", descending=True).row(0, named=True)["architecture"])
        mine = cells.filter(pl.col("architecture") == splitter)
        band = mine.group_by("learning_rate").agg(pl.col("split").mean()).filter(pl.col("split") >= 0.75)
        mean = world.curves.mean(axis=1)
        half = mean[:, mean.shape[1] // 2:]
        flat = half.max(axis=1) - half.min(axis=1)  # a plateau: its mean curve level over its second half
        level = cells.with_columns(flat=pl.Series(flat)).filter(pl.col("g").is_between(0.3, 0.9), ~pl.col("split"))
        plateau = level.sort("flat").row(0, named=True)
        split_cell = mine.sort("sd", descending=True).row(0, named=True)
        others = per.filter(pl.col("architecture") != splitter)
        return cls(learner=str(others.sort("best", descending=True).row(0, named=True)["architecture"]),
                   failing=str(per.sort("best").row(0, named=True)["architecture"]), splitter=splitter,
                   sharer=str(per.with_columns((pl.col("share") - 0.5).abs().alias("_d")).sort("_d")
                              .row(0, named=True)["architecture"]),
                   mixed={"learning_rate": tuple(sorted(band.get_column("learning_rate").to_list()))},
                   plateau=_cell_region(world, plateau), split_cell=_cell_region(world, split_cell))


def _cell_region(world: World, row: dict[str, Any]) -> dict[str, Any]:
    return {world.x: (row[world.x],), "learning_rate": (row["learning_rate"],), "architecture": (row["architecture"],)}


def calibration_findings(world: World, offsets: Sequence[float] = OFFSETS) -> list[Finding]:
    """Every statistic and relation at bounds around its true value on ``world`` (module docstring). An offset > 0
    puts the truth on the bound's true side, < 0 on its false side, 0 on the bound itself (a hair inside: the bounds
    are inclusive, the truth's float sums are not exact)."""
    truth = world.truth()
    roles = Roles.of(world, truth)
    found = []
    for o in offsets:
        inside = o + 1e-9
        tag = f" (truth {'+' if o >= 0 else '-'}{abs(100 * o):g} pp inside)"
        found += [Finding.model_validate({**f, "description": f["description"] + tag})
                  for f in _around(world, truth, roles, o, inside)]
    return found


def _around(world: World, truth: pl.DataFrame, r: Roles, o: float, inside: float) -> list[dict[str, Any]]:
    """The findings at one offset (descriptions without their tag)."""

    def of(arch: str, expr: pl.Expr, region: dict[str, Any] | None = None) -> float:
        cells = truth.filter(pl.col("architecture") == arch)
        if region:
            cells = cells.join(pl.DataFrame({k: list(v) for k, v in region.items() if k != "architecture"}),
                               on=[k for k in region if k != "architecture"], how="semi")
        return float(cells.select(expr).item())

    g, mixed = pl.col("g"), r.mixed
    s, lrn = r.splitter, r.learner
    cells = truth.filter(pl.col("architecture") == r.sharer).height
    mixed_cells = len(mixed["learning_rate"]) * truth.get_column(world.x).n_unique()
    lead = of(s, g.max()) - of(lrn, g.max())
    ahead_, behind = (s, lrn) if lead >= 0 else (lrn, s)  # not_ahead on the side that leads: its truth has a margin
    mixed_lead = of(s, g.max(), mixed) - of(lrn, g.max(), mixed)
    share = of(s, (g >= 0.5).mean(), mixed)
    every = {a: of(a, g.max()) for a in sorted(truth.get_column("architecture").unique().to_list())}
    plateau, split = r.plateau, r.split_cell
    one = {k: v for k, v in plateau.items() if k != "architecture"}
    split_where = {k: v for k, v in split.items() if k != "architecture"}
    p_arch, s_arch = plateau["architecture"][0], split["architecture"][0]
    return [
        {"description": f"{lrn}'s best", "above": {lrn: of(lrn, g.max()) - inside}},
        {"description": f"{r.failing}'s best", "below": {r.failing: of(r.failing, g.max()) + inside}},
        {"description": f"{r.sharer}'s share", "statistic": "share", "level": 0.9,
         "above": {r.sharer: of(r.sharer, (g >= 0.9).mean()) - round(100 * o) / cells - 1e-9}},
        {"description": f"{s}'s mean", "statistic": "mean", "above": {s: of(s, g.mean()) - inside}},
        {"description": f"{s}'s spread", "statistic": "spread", "level": 0.5,
         "above": {s: of(s, pl.col("gmd").filter(g >= 0.5).mean()) - inside}},
        {"description": f"{s} ahead of {lrn}", "ahead": {s: (lrn,)}, "margin": lead - inside},
        {"description": f"{s} level with {lrn}", "level_with": {s: (lrn,)},
         "equivalence_margin": max(abs(lead) + inside, 0.0)},
        {"description": f"{ahead_} not ahead of {behind}", "not_ahead": {ahead_: (behind,)},
         "equivalence_margin": max(abs(lead) + inside, 0.0)},
        # where the splitter's seeds split
        {"description": f"{s}'s best where seeds split", "where": mixed, "above": {s: of(s, g.max(), mixed) - inside}},
        {"description": f"{s}'s best where seeds split, at most", "where": mixed,
         "below": {s: of(s, g.max(), mixed) + inside}},
        {"description": f"{s}'s worst where seeds split, at most", "where": mixed, "statistic": "worst",
         "below": {s: of(s, g.min(), mixed) + inside}},
        {"description": f"{s}'s share where seeds split", "where": mixed, "statistic": "share", "level": 0.5,
         "above": {s: share - round(100 * o) / mixed_cells - 1e-9}},
        {"description": f"{s}'s mean where seeds split", "where": mixed, "statistic": "mean",
         "above": {s: of(s, g.mean(), mixed) - inside}},
        {"description": f"{s} ahead of {lrn} where seeds split", "where": mixed, "ahead": {s: (lrn,)},
         "margin": mixed_lead - inside},
        {"description": f"{s} level with {lrn} where seeds split", "where": mixed, "level_with": {s: (lrn,)},
         "equivalence_margin": max(abs(mixed_lead) + inside, 0.0)},
        # one cell alone
        {"description": "a plateau cell's G", "where": one, "above": {p_arch: of(p_arch, g.max(), plateau) - inside}},
        {"description": "a plateau cell's G, at most", "where": one,
         "below": {p_arch: of(p_arch, g.max(), plateau) + inside}},
        {"description": "a split cell's G", "where": split_where,
         "above": {s_arch: of(s_arch, g.max(), split) - inside}},
        {"description": "a split cell's G, at most", "where": split_where,
         "below": {s_arch: of(s_arch, g.max(), split) + inside}},
        # one bound per architecture: six ends
        {"description": "every architecture's best", "above": {a: v - inside for a, v in every.items()}},
        {"description": "every architecture's best, at most", "below": {a: v + inside for a, v in every.items()}},
    ]


def kind_of(finding: Finding) -> str:
    """A calibration finding's kind: its description without the offset's tag."""
    return finding.description.split(" (truth")[0]


def offset_of(finding: Finding) -> str:
    """A calibration finding's offset tag (``+0.5 pp``)."""
    return finding.description.split(" (truth ")[1].split(" inside")[0]


