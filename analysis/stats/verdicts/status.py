"""A finding's outcome."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """What a finding's checks add up to (docs/cli.md, Findings)."""

    PASS = "PASS"  # every bound holds
    FAIL = "FAIL"  # a bound fails
    UNDECIDED = "UNDECIDED"  # an interval holds a bound
    PARTIAL = "PARTIAL"  # every bound the data can check holds, on some of the panel values the finding names
    NOT_CHECKED = "NOT CHECKED"  # not at this scale, outside its grid, or nothing it names is in the data


#: Verdicts that more seeds cannot change: a pass, a fail, or a pass of the part of the claim the data can check.
DECIDED = (Status.PASS, Status.FAIL, Status.PARTIAL)
