"""Each paper's docs list every observation the paper states, its finding, how strong the finding is against the
sentence and its verdicts (the table "Every observation, its finding or why none"); the counts at the top of the page
are recounted here from that table, and every finding the table names must exist, so neither can drift from the code
or from each other."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from search_spaces import all_studies, get_study

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAPERS = ("richter2020", "csordas2021", "gros2024", "yun2020")
_ROW = re.compile(r"^\| `[a-z0-9]+\.[^`]+` \| ")
_STATUS = re.compile(r"\b(PASS|FAIL|UNDECIDED|PARTIAL|NOT CHECKED)\b")
_STRENGTHS = ("faithful", "weaker", "different")


@dataclass(frozen=True)
class Row:
    """One line of a paper's table of observations."""

    id: str
    finding: str
    strength: str
    published: str
    cpu: str


def rows(paper: str) -> list[Row]:
    """The table's lines, each split into its six columns (a line with another number of columns is an error)."""
    found = []
    for line in (DOCS / f"{paper}.md").read_text().splitlines():
        if not _ROW.match(line):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        assert len(cells) == 6, f"docs/{paper}.md: {cells[0]} has {len(cells)} columns, not 6"
        found.append(Row(cells[0].strip("`"), cells[2], cells[3], cells[4], cells[5]))
    return found


def strength(row: Row) -> str:
    """faithful, weaker or different (the first word of the strength column), mixed (a strength per finding, `#1
    faithful; #2 weaker`) or none (no finding of its own: `-`)."""
    if row.strength == "-":
        return "none"
    if row.strength.startswith("#"):
        return "mixed"
    word = re.match(r"\w+", row.strength)
    assert word and word.group(0) in _STRENGTHS, \
        f"{row.id}: strength {row.strength[:40]!r} starts with none of {', '.join(_STRENGTHS)}, '#' or '-'"
    return word.group(0)


def outcome(column: str) -> str:
    """A row's verdicts in one column, as one word: FAIL if any finding fails, open if any is UNDECIDED or PARTIAL,
    PASS if every checked one passes, NOT CHECKED if none is checked, no data if the column names no verdict (no
    published numbers); asides in parentheses (a verdict before some issue) are left out."""
    while (bare := re.sub(r"\([^()]*\)", "", column)) != column:
        column = bare
    said = set(_STATUS.findall(column))
    for word, statuses in (("FAIL", {"FAIL"}), ("open", {"UNDECIDED", "PARTIAL"}), ("PASS", {"PASS"}),
                           ("NOT CHECKED", {"NOT CHECKED"})):
        if said & statuses:
            return word
    return "no data"


def counts(paper: str) -> str:
    """The sentence at the top of ``docs/<paper>.md`` that counts its table."""
    table = rows(paper)
    kinds = Counter(strength(row) for row in table)
    judged = [row for row in table if strength(row) != "none"]
    published = Counter(outcome(row.published) for row in judged)
    cpu = Counter(outcome(row.cpu) for row in judged)

    def tally(counter: Counter[str], words: tuple[str, ...]) -> str:
        return ", ".join(f"{counter[word]} {word}" for word in words)

    outcomes = ("PASS", "FAIL", "open", "NOT CHECKED", "no data")
    return (f"{len(table)} observations; {len(judged)} with a finding of their own ("
            f"{tally(kinds, (*_STRENGTHS, 'mixed'))}), {kinds['none']} without. On the authors' numbers: "
            f"{tally(published, outcomes)}. At cpu scale: {tally(cpu, outcomes)}.")


@pytest.mark.parametrize("paper", PAPERS)
def test_the_counts_at_the_top_are_the_tables(paper: str) -> None:
    text = (DOCS / f"{paper}.md").read_text()
    head = text[:text.index("\n## ", text.index("\n## ") + 1)]  # the intro and the first section
    assert counts(paper) in " ".join(head.split()), f"docs/{paper}.md's counts at the top should read:\n{counts(paper)}"


@pytest.mark.parametrize("paper", PAPERS)
def test_every_finding_the_table_names_exists(paper: str) -> None:
    """`fig3` #12 in docs/richter2020.md is the twelfth finding of richter2020.fig3 (its paper scale, where every
    finding is listed; `atlas` #3 the atlas' own); a study or a number the code does not have is a stale line."""
    missing = []
    for row in rows(paper):
        for short, number in re.findall(r"`(\w+)` #(\d+)", row.finding):
            name = f"{paper}.{short}" if f"{paper}.{short}" in all_studies() else short  # `atlas`: no paper's own
            if name not in all_studies():
                missing.append(f"{row.id}: no study {name}")
            elif int(number) > len(get_study(name, "paper").findings):
                missing.append(f"{row.id}: {name} has {len(get_study(name, 'paper').findings)} findings, not #{number}")
    assert missing == []


def test_the_counts_see_a_changed_line() -> None:
    """The recount reads the table's words: a faithful row graded weaker moves one count from one to the other."""
    row = Row("x.1", "`fig3` #1", "faithful (as stated)", "PASS", "NOT CHECKED (scale)")
    assert (strength(row), outcome(row.published), outcome(row.cpu)) == ("faithful", "PASS", "NOT CHECKED")
    assert outcome("#1: PASS; #2: FAIL: 3.0% (was UNDECIDED (before issue 48))") == "FAIL"
    assert outcome("UNDECIDED (was PASS); #3: NOT CHECKED") == "open"
    assert outcome("no published numbers (the paper prints none)") == "no data"
    assert strength(Row("x.2", "none: background", "-", "-", "-")) == "none"
    with pytest.raises(AssertionError, match="starts with none of"):
        strength(Row("x.3", "`fig3` #1", "a reading of ours", "-", "-"))


def test_every_shipped_finding_names_the_numbers_it_chose() -> None:
    """A level, a margin, a band of rates read into a sentence are the project's, not the paper's: every finding the
    project ships says which (``chosen``), and its verdict prints them under the basis line."""
    unnamed = [f"{name} #{k}" for name, study in all_studies().items() if study.findings
               for k, finding in enumerate(get_study(name, "paper").findings, start=1) if not finding.chosen]
    assert unnamed == []


def test_a_verdict_prints_the_project_s_numbers() -> None:
    from analysis.stats.verdicts.evaluate import Verdict
    from analysis.stats.verdicts.status import Status
    from search_spaces import Finding

    finding = Finding(description="NAP learns well", above={"NAP": 0.9}, chosen=("90%: 'well' read as G >= 90%",))
    lines = Verdict(finding, "val_accuracy", Status.NOT_CHECKED, reason="no data").lines()
    assert lines[-1] == "      the project's numbers, not the paper's: 90%: 'well' read as G >= 90%"
    assert Verdict(finding.model_copy(update={"chosen": ()}), "val_accuracy", Status.NOT_CHECKED).lines()[-1] \
        .endswith("NAP learns well")
    with pytest.raises(ValueError, match="chosen"):
        Finding(description="x", above={"NAP": 0.9}, chosen="90%")
