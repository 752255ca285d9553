"""The paper's observations as findings, checked on the authors' own numbers: the verdict of each one the release
ships data for (PASS; PARTIAL where the release lacks some of the architectures it names; UNDECIDED where the
authors' own numbers hold the bound inside their interval from seed variation: docs/richter2020.md says which), the
same finding reversed FAILs on the same numbers (so these tests can fail), and `study findings` prints and exits as
docs/cli.md says."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from analysis.stats.verdicts.status import Status
from search_spaces import Finding, Study, get_study
from study.cli import main
from study.cli.findings import published_verdicts

#: (study, scale) -> the verdict of each of its findings on its shipped published data, in order: the release's per-seed
#: runs (Figs. 3, 5/14, 7, 9, 15, 16 and Table 4) and the papers' printed numbers as cells
#: (analysis/data/published_cells.py: NAP's Tables 2-3, the NDR's Table 1, Gros' stated levels); docs/<paper>.md says
#: why each is not a PASS.
EXPECTED = {
    # App. F's order of the cases: BERT's shares 75.0% [40.0, 90.0] and 88.8% [37.5, 98.8] hold 50% inside; App. F's
    # curiosity at d = 8 (some cell of 8): the first case at 2.2e-4 reaches 60% at epoch 6 [epoch 4, never] and ends at
    # 7.1% [0.0, 16.3]; the opposite at 6.6e-5: argmin leads first by 20 points at epoch 4 [epoch 1, never]
    ("richter2020.fig3", "paper"): [Status.PARTIAL, Status.PASS, Status.PASS, Status.NOT_CHECKED, Status.NOT_CHECKED,
     Status.NOT_CHECKED, Status.UNDECIDED, Status.UNDECIDED,
                                    Status.NOT_CHECKED, Status.UNDECIDED, Status.UNDECIDED,
                                    Status.UNDECIDED,  # #12 per seed: 5 of 5, 1/32 above a cell of 8's 0.63%
                                    # #13, #14 per run: BERT learns argmin before first in 263 of 337 runs, first
                                    # before argmax in 231 of 242 (both hold); the other five are not in the file
                                    Status.PARTIAL, Status.PARTIAL],
    ("richter2020.fig3", "cpu"): [Status.NOT_CHECKED] * 14,
    # Sec. 5.2's "harder", every architecture on Tables 2 and 3's unregularised rows: NON and sum hold (+75.9, +76.1
    # points), BERT's and MTE's first-token seeds split (sd 30.5, 21.4 points) and max's lead is 1.4 points
    ("richter2020.tasks", "paper"): [Status.UNDECIDED],
    ("richter2020.tasks", "cpu"): [Status.NOT_CHECKED],
    # Fig. 5/14 on the first-token release (issue 48: each cell's seed noise from its grid neighbours, so a cell next to
    # cells whose seeds split is not trusted at its own spread): obs. 1 - max's share of first-case cells is 97.5%
    # [88.8, 100.0] against 90%; obs. 3 - NAP's best all-cases cell (5 seeds at 93-96%) sits beside a cell whose seeds
    # split (86, 82, 47, 3, 2%): [45.9, 100.0] against 50%; Fig. 14's first crossing: BERT's large models at low rates
    # are split cells, lead +67.1 [+13.9, ...] against 20 points; the seed spread: BERT's leads NAP's by +14.2 [-3.3,
    # +31.8] against 2.5 points; the second crossing and the conclusion as before
    ("richter2020.fig5", "paper"): [Status.UNDECIDED, Status.PASS, Status.UNDECIDED, Status.NOT_CHECKED,
     Status.UNDECIDED, Status.UNDECIDED, Status.UNDECIDED,
                                    Status.UNDECIDED],
    ("richter2020.fig5", "cpu"): [Status.PARTIAL, Status.PASS] + [Status.NOT_CHECKED] * 6,
    # Fig. 7 obs. 2: max's best is 14.1%, [10.9, 15.0]: the upper end of a best reads only the truly best cell, so it
    # takes no share over the 80 cells (issue 48); the conclusion's "better than BERT": NAP 95.7% against BERT 95.9%
    ("richter2020.fig7", "paper"): [Status.PASS, Status.PASS, Status.PASS, Status.UNDECIDED],
    ("richter2020.fig7", "cpu"): [Status.PASS, Status.NOT_CHECKED, Status.NOT_CHECKED, Status.NOT_CHECKED],
    # Fig. 9 on the release's ablation runs, BERT's step alone (the four MTE-side steps are missing from the copy
    # converted here): the first-case focus at high rates, 63.4% [14.9, 92.1] against 20 points
    ("richter2020.fig9", "paper"): [Status.NOT_CHECKED, Status.NOT_CHECKED, Status.UNDECIDED, Status.NOT_CHECKED,
     Status.NOT_CHECKED, Status.NOT_CHECKED],
    ("richter2020.fig9", "cpu"): [Status.NOT_CHECKED] * 6,
    # Fig. 15 on BERT's depth runs (the other five panels are missing from the copy): L = 4 leads L = 2 by +34.6 points
    # and L >= 32 by +27.5, but BERT's seeds split there (intervals [-5.9, +62.2] and [-13.8, +62.4])
    # #10, the decline from L = 4 to every deeper depth: BERT's best at L = 8 is 76.8% against 75.4% at L = 4, lead
    # -1.3 [-45.7, +62.7]: UNDECIDED
    ("richter2020.fig15", "paper"): [Status.UNDECIDED, Status.UNDECIDED] + [Status.NOT_CHECKED] * 7 + [
        Status.UNDECIDED],
    ("richter2020.fig15", "cpu"): [Status.NOT_CHECKED] * 10,
    # Fig. 16 on the vocabulary runs, all six: obs. 1 and 2 PASS; obs. 3's small vocabularies: NAP at S = 2 and 4 and
    # BERT, NON at S = 8 hold 95% inside their intervals; S = 256: NAP's lead over BERT +10.2 [-7.1, +32.1] and over
    # MTE +19.7 [+0.5, +28.4] against 5 points
    # Table 5's bold (NAP's worst seed above every other's best seed: S = 64 and 256 training, 256 validation): on the
    # release the seeds separate in all three, but the lead of G over MTE and sum at S = 64 (+2.3 [-2.3, +22.8], +0.4
    # [-2.3, +3.3]) and over BERT at S = 256 (+10.2 [-7.1, +32.1]; validation +11.3 [-12.1, +38.8]) holds zero
    ("richter2020.fig16", "paper"): [Status.PASS] * 11 + [Status.UNDECIDED] * 4 + [Status.PASS] * 3,
    ("richter2020.fig16", "cpu"): [Status.NOT_CHECKED, Status.PASS, Status.PASS,
     Status.PASS] + [Status.NOT_CHECKED] * 14,
    # App. E's "none of these improvements is significant" as equivalence (at most 2 points ahead, two one-sided
    # tests): BERT's and MTE's seeds split (sd 21-31 points in the release's own runs of those cells), so their lead's
    # interval reaches past 2 points: UNDECIDED where it was a PASS for "the interval holds zero"
    # App. E's counting sentences (#3-#5, ``counted``): on the printed tables few values are decided at their share of
    # the error (Table 2's BERT dropout -1.2 [-1.7, -0.7] is), and the tables print one strength per kind, so the
    # smallest strength cannot be compared with the larger ones: UNDECIDED
    ("richter2020.table2", "paper"): [Status.PASS] + [Status.UNDECIDED] * 4,
    ("richter2020.table2", "cpu"): [Status.NOT_CHECKED] * 5,
    ("richter2020.table3", "paper"): [Status.UNDECIDED] * 5,
    ("richter2020.table3", "cpu"): [Status.NOT_CHECKED] * 5,
    # Table 4 on the release's own regularised seeds (and the unregularised d = 128 runs): max's best with dropout
    # 0.0625 is 24.5% (its five seeds 22.8-25.5%) against 14.4% without (13.8-15.0%): +10.1 [+5.0, +13.7] points, so
    # the authors' own runs do not support "none of these improvements is significant" there
    # App. E's counting sentences on the release's seeds: of 24 values one is shown lower (sum's training with dropout,
    # -6.5 [-8.8, -4.9]) and one shown higher (max's, +10.1); the bests of 40 cells read wide (BERT's training with
    # dropout -5.7 [-13.8, +8.0]): UNDECIDED
    ("richter2020.table4", "paper"): [Status.FAIL] + [Status.UNDECIDED] * 4,
    ("richter2020.table4", "cpu"): [Status.NOT_CHECKED] * 5,
    # the five inside findings (13-17) read probes, which the paper's table does not have: NOT CHECKED
    # #18 ("the only row at 1.00"): + abs/rel + gate's printed 0.98 ± 0.02 / 0.98 ± 0.03 is not told from 99% on 5 seeds
    ("csordas2021.table1", "paper"): [Status.PASS] * 12 + [Status.NOT_CHECKED] * 5 + [Status.UNDECIDED]
                                     + [Status.NOT_CHECKED] * 6,
    ("csordas2021.table1", "cpu"): [Status.NOT_CHECKED, Status.PASS] + [Status.NOT_CHECKED] * 22,
    # the text states no level for EA in Figs. 3 and 5 but Fig. 3's "both systems achieve 100%" (N_con = 56): EA's
    # findings at N_con = 32 and 52 are NOT CHECKED; the text prints levels, not curves: the time-axis findings too
    # (#7-#9; the per-seed and time-axis findings issue 58 added to Figs. 6 and 7 as well)
    ("gros2024.fig3", "paper"): [Status.PASS, Status.NOT_CHECKED, Status.PASS, Status.PASS, Status.NOT_CHECKED,
     Status.PASS, Status.NOT_CHECKED, Status.NOT_CHECKED, Status.NOT_CHECKED, Status.NOT_CHECKED],
    ("gros2024.fig3", "cpu"): [Status.PASS, Status.NOT_CHECKED, Status.PASS, Status.PASS, Status.NOT_CHECKED,
     Status.PASS, Status.NOT_CHECKED, Status.NOT_CHECKED, Status.NOT_CHECKED, Status.NOT_CHECKED],
    ("gros2024.fig5", "paper"): [Status.PASS, Status.NOT_CHECKED, Status.PASS],
    ("gros2024.fig5", "cpu"): [Status.PASS, Status.NOT_CHECKED, Status.NOT_CHECKED],
    ("gros2024.fig6", "paper"): [Status.PASS] * 4 + [Status.NOT_CHECKED] * 2,
    ("gros2024.fig6", "cpu"): [Status.PASS] * 4 + [Status.NOT_CHECKED] * 2,
    ("gros2024.fig6_single", "paper"): [Status.PASS],
    ("gros2024.fig6_single", "cpu"): [Status.PASS],
    # #7: EA's lead over DPA at N_con = 64 (+62.8 points) exceeds its lead at 128 (+27.9) by 34.9 points
    ("gros2024.fig7", "paper"): [Status.PASS] * 4 + [Status.NOT_CHECKED] * 2 + [Status.PASS],
    ("gros2024.fig7", "cpu"): [Status.PASS] * 4 + [Status.NOT_CHECKED] * 2 + [Status.PASS],
}
#: The studies whose shipped published data is a paper's printed table (cells), not a release's per-seed runs.
CELLS = ("richter2020.table2", "richter2020.table3", "csordas2021.table1", "gros2024.fig3", "gros2024.fig5",
         "gros2024.fig6", "gros2024.fig6_single", "gros2024.fig7")


def _verdicts(study: Study, data: str = "published") -> list:
    return published_verdicts(study, data)[1]


@pytest.mark.parametrize(("name", "scale"), sorted(EXPECTED))
def test_every_finding_passes_on_the_published_data_or_says_why_not(name: str, scale: str) -> None:
    verdicts = _verdicts(get_study(name, scale))
    assert [v.status for v in verdicts] == EXPECTED[(name, scale)]
    for v in verdicts:
        if v.status == Status.NOT_CHECKED:  # the reason is the scale, the architectures the release lacks or its curves
            assert v.reason.startswith(("not checked at this scale", "the data has none of the panel values",
                                        "its time-axis bounds read the rows of each evaluation")) or \
                v.reason.endswith("probes are written only by trials that ask for them (the `probes` config field, "
                                  "docs/results.md)")  # a paper's printed table has no probes


def test_the_published_numbers_are_the_papers() -> None:
    fig7 = _verdicts(get_study("richter2020.fig7"))
    assert [c.text() for c in fig7[0].checks] == ["max: 14.1% [10.9, 15.0] (5 seeds), required <= 15.0%: holds"]
    assert fig7[0].basis.startswith("95% confidence (a wrong PASS or FAIL at most 5%; one look); seed noise from "
                                    "each cell's grid neighbours")
    assert [c.text() for c in fig7[1].checks] == [
        "max (best at d_model in {1024}): 13.3% [11.1, 14.4] (5 seeds), required <= 15.0%: holds"]
    fig5 = _verdicts(get_study("richter2020.fig5"))
    assert [c.text() for c in fig5[2].checks] == ["BERT: 2.9% [1.4, 4.1] (5 seeds), required <= 50.0%: holds",
                                                  "sum: 2.4% [1.2, 3.0] (5 seeds), required <= 50.0%: holds",
                                                  "NAP: 95.0% [45.9, 100.0] (5 seeds), required >= 50.0%: undecided",
                                                  "max: 90.0% [64.7, 100.0] (5 seeds), required >= 50.0%: holds"]
    assert fig5[2].status == Status.UNDECIDED  # NAP's best all-cases cell sits beside a cell whose seeds split
    assert fig5[2].reason == "not decided: an interval holds the bound; not in the data, left out: MTE, NON"
    assert fig5[5].checks[0].text() == (
        "BERT (best at learning_rate >= 0.00243, d_model <= 64): 46.0% [20.2, 81.6] (5 seeds), required >= BERT "
        "(best at learning_rate >= 0.00243, d_model >= 512) 22.3% (5 seeds) + 10.0 pp = 32.3%; lead +23.7 pp "
        "[-15.4, +61.0] pp: undecided")
    fig3 = _verdicts(get_study("richter2020.fig3"))
    assert fig3[1].checks[0].text() == (
        "BERT (best at learning_rate >= 0.027, d_model <= 16): 96.4% [81.7, 100.0] (5 seeds), required >= BERT (best "
        "at learning_rate >= 0.027, d_model >= 512) 31.2% (5 seeds) + 30.0 pp = 61.2%; lead +65.1 pp [+41.0, +92.4] "
        "pp: holds")


def _reversed(finding: Finding) -> Finding:
    """The claim turned round: at least t <-> below t (at most t - 1e-6, so that a number on the bound, e.g. Gros'
    "above 99%" printed as 99%, is no longer inside), a two-sided level ("about 55%": between 50% and 60%) above its
    upper bound, and a comparison's two regions (or two sides) swapped."""
    if finding.versus_where is not None:
        return finding.replace(where=finding.versus_where, versus_where=finding.where)
    def swapped(pairs: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        turned: dict[str, tuple[str, ...]] = {}
        for a, bs in pairs.items():
            for b in bs:
                turned[b] = (*turned.get(b, ()), a)
        return turned

    return finding.replace(below={k: v - 1e-6 for k, v in finding.above.items() if k not in finding.below},
                           above={k: v + 1e-6 for k, v in finding.below.items()}, ahead=swapped(finding.ahead),
                           worst_beats_best=swapped(finding.worst_beats_best))


@pytest.mark.parametrize("name", ["richter2020.fig3", "richter2020.fig5", "richter2020.fig7", "richter2020.fig16",
                                  "richter2020.table4", *CELLS])
def test_each_passing_finding_reversed_fails_on_the_same_numbers(name: str) -> None:
    """Every PASS, turned round, FAILs on the same numbers (a ``level_with`` or ``not_ahead`` has no reverse that
    could FAIL: turned round it claims a lead the same seed noise cannot show; Table 4's FAIL is its test that it can
    fail)."""
    study = get_study(name)
    verdicts = _verdicts(study)
    passing = [f for f, v in zip(study.findings, verdicts, strict=True)
               if v.status == Status.PASS and not f.level_with and not f.not_ahead]
    if name.startswith("richter2020.table"):
        assert not passing
        return
    assert passing
    wrong = study.replace(findings=tuple(_reversed(f) for f in passing))
    assert [v.status for v in _verdicts(wrong)] == [Status.FAIL] * len(passing)


def test_the_two_case_tasks_are_tables_2_and_3_unregularised_rows_side_by_side() -> None:
    """``richter2020/nap_tasks`` composes the two tables' cells: their unregularised rows, labelled with the task axis
    of ``richter2020.tasks`` (BERT 99.3% at every token, 36.6% from the first token), the sources kept; the finding
    reads each architecture's lead of the first over the second."""
    from analysis.data.published_cells import is_cells, published_cells

    assert is_cells("richter2020/nap_tasks")
    cells, frame = published_cells("richter2020/nap_tasks")
    train = cells["train_accuracy"].sort("task", "architecture")
    assert train.columns == ["task", "architecture", "g", "sd", "n"] and train.height == 12
    bert = {t: g for t, a, g in train.select("task", "architecture", "g").iter_rows() if a == "BERT"}
    assert bert == {"cases": 0.993, "cases_first_token": 0.366}
    assert "regularization" not in frame.columns and frame.get_column("source").str.contains("Table 3").sum() == 12
    (verdict,) = _verdicts(get_study("richter2020.tasks"))
    states = {c.panel_value: c.state for c in verdict.checks}
    assert states == {"BERT": "undecided", "MTE": "undecided", "NAP": "undecided", "NON": "holds", "sum": "holds",
                      "max": "undecided"}, verdict.lines()


def test_the_papers_tables_as_cells_say_where_each_number_is_printed() -> None:
    """The cells files hold the printed numbers: NDR's Table 1 without the DNC row (no DNC here), NAP's Tables 2-3 with
    each regularised value at the strength its superscript names, Gros' stated levels; each with its source."""
    from analysis.data.published_cells import published_cells

    _, ndr = published_cells("csordas2021/ndr_table1")
    assert ndr.height == 28 and "DNC" not in ndr.get_column("model").to_list()
    lstm = ndr.filter(pl.col("model") == "LSTM", pl.col("direction") == "backward", pl.col("metric") == "test_accuracy")
    assert lstm.select("value", "sd", "n_seeds").row(0) == (0.22, 0.03, 5)
    _, table2 = published_cells("richter2020/nap_table2")
    assert table2.height == 36 and set(table2.get_column("regularization")) >= {"none", "dropout 0.0625"}
    sum_regularised = table2.filter(pl.col("architecture") == "sum", pl.col("metric") == "val_accuracy",
                                pl.col("regularization") != "none")
    assert sum_regularised.select("regularization", "value").rows() == [("dropout 0.0625", 0.831), ("L2 0.001", 0.677)]
    for name in ("gros2024/fig3", "gros2024/fig5", "gros2024/fig6", "gros2024/fig6_single", "gros2024/fig7",
                 "richter2020/nap_table2", "richter2020/nap_table3"):
        _, frame = published_cells(name)
        assert frame.filter(pl.col("source").is_null() | (pl.col("read_off") != "false")).is_empty()


def test_a_finding_about_values_the_grid_did_not_run_is_not_checked() -> None:
    """Fig. 16 at the cpu scale sweeps S = 4, 8, 16 (a Linked axis: its labels are the values): every finding about
    S = 2 is NOT CHECKED there, never FAIL, even on numbers that would fail it; S = 4's is checked."""
    from analysis.stats.verdicts.data import FindingData
    from analysis.stats.verdicts.evaluate import evaluate_findings
    from search_spaces.record import StudyRecord

    study = get_study("richter2020.fig16", "cpu")
    meta = StudyRecord.of(study)
    cells = pl.DataFrame([{"architecture": a, "vocab_size": s, "learning_rate": lr, "g": 0.9, "sd": 0.01, "n_seeds": 3}
                          for a in study.axis_values("architecture") for s in (4, 8, 16)
                          for lr in study.axis_values("learning_rate")])
    data = FindingData(cells={"train_accuracy": cells}, panel="architecture", select_metric="train_accuracy",
                       max_seeds=3)
    verdicts = {v.finding.description: v for v in evaluate_findings(meta, data)}
    at_two = [v for d, v in verdicts.items() if re.search(r"S = 2\b", d)]
    assert len(at_two) == 5 and all(v.status == Status.NOT_CHECKED for v in at_two)
    max_fails = next(v for d, v in verdicts.items() if d.startswith("Fig. 16 (App. H, obs. 1)") and "S = 2:" in d)
    assert max_fails.reason == ("not checked at this scale (cpu): the grid has no cell at vocab_size in {2} (its "
                                "vocab_size: 4, 8, 16)")
    at_four = next(v for d, v in verdicts.items() if d.startswith("Fig. 16 (App. H, obs. 1)") and "S = 4:" in d)
    assert at_four.status == Status.FAIL  # max at 90%: far above S = 4's base rate


def test_swapped_architectures_fail() -> None:
    study = get_study("richter2020.fig7")
    right = study.findings[0]
    swapped = right.replace(below={"sum": 0.15}, above={"max": 0.5, "NAP": 0.5})
    (v,) = _verdicts(study.replace(findings=(swapped,)))
    assert v.status == Status.FAIL
    assert [c.text() for c in v.checks] == ["sum: 95.9% [92.9, 100.0] (5 seeds), required <= 15.0%: fails",
                                            "max: 14.1% [10.5, 15.3] (5 seeds), required >= 50.0%: fails",
                                            "NAP: 95.7% [92.0, 100.0] (5 seeds), required >= 50.0%: holds"]


@pytest.mark.parametrize(("name", "head", "exit_code"), [
    ("richter2020.fig9", "the published data richter2020/ablation__cases, 80 cells of ablation BERT x 5 seeds", 0),
    ("richter2020.fig15", "the published data richter2020/cases__first_token_output__var_layers, 70 cells of "
                          "architecture BERT x 5 seeds", 0),
    ("richter2020.fig16", "the published data richter2020/mode__var_vocab, 480 cells of architecture BERT, MTE, NAP, "
                          "NON, max, sum x 5 seeds", 0),
    ("richter2020.table4", "the published data richter2020/mode__regularization, 540 cells of architecture BERT, MTE, "
                           "NAP, NON, max, sum x 5 seeds", 3),
])
def test_the_studies_the_converted_release_covers_check_on_it(name: str, head: str, exit_code: int) -> None:
    """Each study a file of the converted release covers (issue 50) names it as its reference: `study findings NAME
    --data published` reads it, its header names the file, the cells and the seeds, and nothing the authors' own runs
    support comes out FAIL (Table 4's training claim is refuted by those runs: its FAIL is the one)."""
    result = CliRunner().invoke(main, ["findings", name, "--data", "published"])
    assert result.exit_code == exit_code, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"{name} (scale paper): findings on {head}"
    failed = [line for line in lines if line.startswith("  FAIL: ")]
    table4 = ("  FAIL: Table 4 (App. E): neither dropout nor L2 helps beyond seed variation: no architecture's best "
              "train G with regularisation (the best of its eight settings) leads its best without by more than 2 "
              "points")
    assert failed == ([table4] if exit_code else [])


def test_table4_checks_on_the_releases_own_regularised_seeds() -> None:
    """Table 4's reference stacks the release's dropout and L2 runs and its unregularised d = 128 runs, labelled as the
    study labels them; each of the table's 36 printed values is the best seed mean of its cell at the strength its
    superscript names, and max's training gain with dropout is a gain on every seed."""
    from analysis.data.reference import REFERENCE_DIR, load_reference

    study = get_study("richter2020.table4")
    rows = load_reference(study.reference or "").collect()
    assert sorted(rows.get_column("regularization").unique()) == sorted(study.axis_values("regularization"))
    assert rows.get_column("d_model").unique().to_list() == [128]
    best = (rows.group_by("architecture", "regularization", "learning_rate", "epoch")
            .agg(pl.col("train_accuracy", "val_accuracy").mean())
            .group_by("architecture", "regularization").agg(pl.col("train_accuracy", "val_accuracy").max()))
    computed = {(a, r, m): round(v, 3) for m in ("train_accuracy", "val_accuracy")
                for a, r, v in best.select("architecture", "regularization", m).iter_rows()}
    printed = pl.read_csv(REFERENCE_DIR / "richter2020" / "nap_tables2to4.csv").filter(pl.col("table") == "Table 4")
    assert printed.height == 36
    for row in printed.iter_rows(named=True):
        strength = re.search(r"(dropout) rate ([\d.]+)|(L2) weighting ([\d.]+)", row["note"] or "")
        label = " ".join(g for g in strength.groups() if g) if strength else "none"
        metric = "train_accuracy" if row["block"].startswith("top") else "val_accuracy"
        assert computed[(row["column_label"], label, metric)] == row["value"], row
    fail, _, consistently, often, smallest = _verdicts(study)
    # App. E's counts on the release's seeds: on the means 12 of 24 values lower and 16 of 24 best at the smallest
    # strength, but a best over 40 cells reads wide, so few are decided at their share of the error
    assert "1 of 24 comparisons shown so (each at 1/18 of the error), 23 could be (those shown not so at 1/7), 12 on " \
           "the means" in often.checks[0].text()
    assert "sum train_accuracy dropout -6.5 pp [-8.8, -4.9] pp: so" in often.checks[0].text()
    assert "max train_accuracy dropout +10.1 pp [+4.5, +14.4] pp: not so" in often.checks[0].text()
    assert "16 on the means" in smallest.checks[0].text() and consistently.checks[4].state == "holds"
    assert fail.status == Status.FAIL and fail.checks[-1].text() == (
        "max (best at regularization in {dropout 0.0625, dropout 0.125, dropout 0.25, dropout 0.5, L2 0.0001, "
        "L2 0.001, L2 0.01, L2 0.1}): 24.5% [20.5, 26.1] (5 seeds), required at most 2.0 pp ahead of max (best at "
        "regularization in {none}) 14.4% (5 seeds); difference +10.1 pp [+5.0, +13.7] pp: fails")
    at_best = rows.filter(pl.col("architecture") == "max", pl.col("learning_rate").is_between(0.0269, 0.0271),
                          pl.col("epoch") == 32)  # lr 0.027, the last epoch: the best cell with and without dropout
    seeds = at_best.group_by("regularization").agg(pl.col("train_accuracy").min().alias("lo"),
                                                   pl.col("train_accuracy").max().alias("hi"))
    spread = {r: (lo, hi) for r, lo, hi in seeds.iter_rows()}
    assert spread["dropout 0.0625"][0] > spread["none"][1] + 0.07  # its worst dropout seed 7 points above the best


def test_study_findings_on_published_data_prints_and_exits() -> None:
    ok = CliRunner().invoke(main, ["findings", "richter2020.fig7", "--data", "published"])
    assert ok.exit_code == 0, ok.output
    lines = ok.output.splitlines()
    assert lines[0] == ("richter2020.fig7 (scale paper): findings on the published data richter2020/mode__var_dim, "
                        "480 cells of architecture BERT, MTE, NAP, NON, max, sum x 5 seeds")
    assert lines[1] == ("  PASS: Fig. 7 (Sec. 5.3, obs. 2): max pooling cannot learn mode finding at any size of "
                        "the grid (best validation G <= 15%; the majority-class rate at N = 256 is 11.4%)")
    none = CliRunner().invoke(main, ["findings", "richter2020.fig4", "--data", "published"])
    assert none.exit_code == 2
    assert "invalid --data 'published': study richter2020.fig4 ships no published results; allowed: " \
           "published:<path>.parquet" in none.output
    bad = CliRunner().invoke(main, ["findings", "richter2020.fig7", "--data", "publishd"])
    assert bad.exit_code == 2 and "invalid --data 'publishd'; allowed: published, " in bad.output


def test_a_failed_finding_on_a_published_file_exits_3(tmp_path: Path) -> None:
    from analysis.data.reference import reference_path

    learned = tmp_path / "max_learns.parquet"
    raw = pl.read_parquet(reference_path("richter2020/mode__var_dim"))
    raw.with_columns(pl.when(pl.col("architecture") == "max").then(0.9).otherwise(pl.col("val_accuracy"))
                     .alias("val_accuracy")).write_parquet(learned)
    result = CliRunner().invoke(main, ["findings", "richter2020.fig7", "--data", f"published:{learned}"])
    assert result.exit_code == 3, result.output
    assert re.search(r"      max: 90\.0% \[89\.\d, 90\.\d\] \(5 seeds\), required <= 15\.0%: fails", result.output)
    assert "2 finding(s) checked and failed: exit status 3" in result.output  # obs. 2 over the grid and at d = 1024


def test_study_findings_and_report_on_a_run_use_the_current_findings(tmp_path: Path) -> None:
    from analysis.data.synthetic import write_synthetic_study

    grid = {"architecture": ["NAP", "sum", "max"], "d_model": [32], "learning_rate": [0.027, 0.0081, 0.0024]}
    write_synthetic_study(tmp_path / "demo", grid, seeds=(0, 1, 2), cases=False, name="demo",
                          meta={"scale": "paper", "findings": []})  # recorded before the study had findings
    result = CliRunner().invoke(main, ["findings", "demo", "--storage", str(tmp_path)])
    assert result.output.splitlines()[0].startswith(f"demo (scale paper): findings on {tmp_path / 'demo'}")
    assert result.exit_code == 0, result.output
    assert re.search(r"^  [A-Z]+: max pooling cannot learn mode finding", result.output, re.M)
    assert re.search(r"      max: 11\.6% \[[\d.]+, [\d.]+\] \(3 seeds\), required <= 20\.0%: holds", result.output)
    # the report of the named study checks the same findings, in its summary and on the page
    report = CliRunner().invoke(main, ["report", "demo", "--storage", str(tmp_path)])
    assert report.exit_code == 0, report.output
    summary = (tmp_path / "demo" / "report" / "summary.txt").read_text()
    assert re.search(r"^  [A-Z]+: max pooling cannot learn mode finding", summary, re.M) and "max: 11.6% [" in summary
    assert "max pooling cannot learn mode finding" in (tmp_path / "demo" / "report" / "index.html").read_text()


def test_the_report_checks_a_finding_over_a_region_of_case_accuracies(tmp_path: Path) -> None:
    """The report's findings section and summary carry the extended findings, with the number recomputed here
    from the rows: per cell the smallest of the three case accuracies' G, best over the low rates."""
    from analysis.data.synthetic import write_synthetic_study
    from analysis.report.build import build_report

    metric = "min(train_argmin_accuracy, train_first_accuracy, train_argmax_accuracy)"
    finding = {"description": "all three cases at low rates", "quote": 'Sec. 5.2: "(3) Only NAP and max ..."',
               "metric": metric, "where": {"learning_rate": {"max": 0.01}}, "above": {"NAP": 0.0}}
    grid = {"architecture": ["NAP", "max"], "d_model": [16, 32], "learning_rate": [0.09, 0.0027]}
    write_synthetic_study(tmp_path / "s", grid, seeds=(0, 1), meta={"scale": "paper", "findings": [finding]})
    report = build_report(tmp_path / "s", tmp_path / "out")
    (v,) = report.verdicts
    rows = pl.read_parquet(tmp_path / "s" / "trials" / "*.parquet")
    cases = [f"train_{c}_accuracy" for c in ("argmin", "first", "argmax")]
    per_cell = (rows.filter(pl.col("architecture") == "NAP", pl.col("learning_rate") <= 0.01)
                .group_by("d_model", "learning_rate", "step").agg(pl.col(c).mean() for c in cases)
                .group_by("d_model", "learning_rate").agg(pl.col(c).max() for c in cases)
                .select(pl.min_horizontal(cases).alias("v")))
    expected = per_cell.get_column("v").max()
    assert v.status == Status.PASS and v.checks[0].value == pytest.approx(expected)
    line = f"      NAP (best at learning_rate <= 0.01): {100 * expected:.1f}% ["
    summary = report.summary.splitlines()
    assert any(s.startswith(line) and s.endswith("(2 seeds), required >= 0.0%: holds") for s in summary)
    assert "Sec. 5.2: &quot;(3) Only NAP and max ...&quot;" in report.index_html.read_text()


@pytest.mark.parametrize("name", ["richter2020.fig3", "richter2020.fig4", "richter2020.fig5", "richter2020.fig6",
                                  "richter2020.fig7", "richter2020.fig9", "richter2020.fig13", "richter2020.fig15",
                                  "richter2020.fig16"])
def test_every_finding_reads_columns_its_study_writes(name: str, tmp_path: Path) -> None:
    """On rows with the study's own axes (every value, one learning rate in three; two seeds, as a spread needs) each
    finding computes its number: no metric or region names a column the study does not have (that would FAIL on any
    run)."""
    from analysis.data.meta import parse_meta
    from analysis.data.synthetic import write_synthetic_study
    from analysis.report.sections import ReportContext
    from analysis.report.summary import verdicts_of

    study = get_study(name)
    meta = study.to_json()
    grid = {k: study.axis_values(k) for k in study.scientific}
    grid["learning_rate"] = meta["nuisance"]["learning_rate"][::3]
    write_synthetic_study(tmp_path / "s", grid, seeds=(0, 1), n_evals=2, meta={**meta, "n_trials": None})
    ctx = ReportContext.open(tmp_path / "s", parse_meta({**meta, "n_trials": None}))
    verdicts = verdicts_of(ctx)
    assert len(verdicts) == len(study.findings)
    assert [v.reason for v in verdicts if v.reason.startswith(("finding where", "the results have no column"))] == []
    # a count over runs has no number where no run learns either metric (synthetic max: all at chance), and says so
    assert all(c.value is not None or c.relation == "learned_in_order" and " 0 of the 0 runs " in c.text()
               for v in verdicts for c in v.checks)


@pytest.mark.slow  # a measurement of every pooling, length and seed: ~10 CPU s (2026-11-29), out of make test-fast
def test_fig1_findings_pass_on_the_measurement_itself() -> None:
    """Fig. 1 has no published numbers: its twelve findings are checked on the study's own measurement (no training;
    a quarter of the vectors per seed here, so that it takes seconds), every one a PASS at the paper's grid (NON's
    length-independent contribution of context, Sec. 4, among them; softmax within a factor of 2 of mean pooling at
    N = 16, 128 and 1024: 1.5-1.7 times it); NON's bounds turned round fail, and so does softmax level with mean within
    a factor of 1.26 (0.1 log10) at N = 1024."""
    from analysis.stats.verdicts.data import FindingData
    from analysis.stats.verdicts.evaluate import evaluate_findings
    from search_spaces.record import StudyRecord
    from trainables.pooling_scale.config import PoolingScaleConfig
    from trainables.pooling_scale.scale import pooling_output_scale

    study = get_study("richter2020.fig1")
    rows = [{"pooling": p, "seq_len": n, "seed": seed,
             **pooling_output_scale(PoolingScaleConfig.from_dict(
                 {"task": "pooling_scale", "pooling": p, "seq_len": n, "n_vectors": 4096}), seed)}
            for p in study.axis_values("pooling") for n in study.axis_values("seq_len") for seed in study.seeds]
    cells = {m: pl.DataFrame(rows).group_by("pooling", "seq_len").agg(
        pl.col(m).mean().alias("g"), pl.col(m).std().alias("sd"), pl.len().alias("n_seeds"))
        for m in ("output_std", "output_std_log10")}
    data = FindingData(cells=cells, panel="pooling", select_metric="output_std", max_seeds=5)
    verdicts = evaluate_findings(StudyRecord.of(study), data)
    assert [v.status for v in verdicts] == [Status.PASS] * 12, [line for v in verdicts for line in v.lines()]
    non = [v for v in verdicts if "non" in v.finding.panel_values()]
    assert [(v.finding.statistic, c.estimate.value) for v in non for c in v.checks] == [
        ("worst", pytest.approx(1.0, abs=0.02)), ("best", pytest.approx(1.0, abs=0.02))]
    ratios = [10 ** v.checks[0].estimate.value for v in verdicts[7:10]]  # softmax's std / mean's, N = 16, 128, 1024
    assert ratios == [pytest.approx(1.46, abs=0.05), pytest.approx(1.61, abs=0.06), pytest.approx(1.66, abs=0.06)]
    wrong = study.replace(findings=(study.findings[5].replace(above={"non": 1.05}),
                                    study.findings[6].replace(below={"non": 0.95}),
                                    study.findings[9].replace(equivalence_margin=0.1)))
    assert [v.status for v in evaluate_findings(StudyRecord.of(wrong), data)] == [Status.FAIL] * 3


def test_table5_bold_on_the_release_seeds_separate_beyond_chance_with_the_lead_of_g_open() -> None:
    """Table 5's bold numbers (NAP's worst seed above every other's best: S = 64 and 256 training, 256 validation) as
    ``worst_beats_best``: on the authors' runs NAP's seeds are above every other architecture's in all 15 pairs, as the
    paper prints, by more than relabeled seeds of no difference separate at their best learning rates (at most 1% a
    pair): PASS by the paper's criterion alone, though the lead of G holds zero against MTE and sum at S = 64 and BERT
    at 256."""
    study = get_study("richter2020.fig16")
    verdicts = [v for f, v in zip(study.findings, _verdicts(study), strict=True) if f.worst_beats_best]
    assert [v.finding.where for v in verdicts] == [{"vocab_size": (64,)}, {"vocab_size": (256,)},
                                                   {"vocab_size": (256,)}]
    assert [v.status for v in verdicts] == [Status.PASS] * 3
    checks = [c for v in verdicts for c in v.checks]
    assert len(checks) == 15 and all(re.search(r"separation \+\d", c.text()) for c in checks)
    chances = [float(re.search(r"without a difference ([\d.]+)%", c.text()).group(1)) for c in checks]  # type: ignore[union-attr]
    assert max(chances) < 1.0 and "allowed 1%" in checks[0].text()
    open_lead = {(v.finding.metric, c.versus) for v in verdicts for c in v.checks if c.estimate.low < 0}
    assert open_lead == {("train_accuracy", "MTE"), ("train_accuracy", "sum"), ("train_accuracy", "BERT"),
                         ("val_accuracy", "BERT")}
    s64_mte = next(c for c in verdicts[0].checks if c.versus == "MTE")
    assert "worst seed 99.6% (5 seeds) against the best seed of MTE (best at vocab_size in {64}) 98.0%" in \
        s64_mte.text()


_VERDICT = re.compile(r"^(PASS|FAIL|UNDECIDED|PARTIAL|NOT CHECKED)\b")


def _published_column(short: str) -> list[tuple[str, int, str]]:
    """(row id, finding number, verdict): every verdict docs/richter2020.md's table of observations gives a finding of
    the study ``short`` (``fig7``) on the published data."""
    said: list[tuple[str, int, str]] = []
    text = (Path(__file__).resolve().parent.parent / "docs" / "richter2020.md").read_text()
    for row in (line for line in text.splitlines() if line.startswith("| `nap.")):
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        finding, published = cells[2], re.sub(r"\([^()]*\)", "", cells[4])  # asides in parentheses left out
        own = re.findall(rf"`{short}` #(\d+)", finding)
        for segment in (s.strip() for s in published.split(";")):
            refs, _, verdict = segment.rpartition(": ") if ": " in segment else ("", "", segment)
            state = _VERDICT.match(verdict.strip())
            numbers = re.findall(rf"`{short}` #(\d+)", refs) or (re.findall(r"^#(\d+)$", refs) if own else [])
            if state and refs == "" and set(re.findall(r"`(\w+)` #", finding)) == {short}:
                numbers = own  # one verdict for the row's findings, all of this study
            for n in numbers:
                assert state, f"{cells[0]}: no verdict for {short} #{n} in {cells[4]!r}"
                said.append((cells[0], int(n), state.group(1)))
    return said


def test_the_observation_table_says_what_study_findings_prints_for_fig7() -> None:
    """docs/richter2020.md's published-data column gives each fig7 finding the verdict `study findings richter2020.fig7
    --data published` prints (nap.conc.3 said UNDECIDED for #1 after it had become a PASS)."""
    said = _published_column("fig7")
    printed = {k + 1: v.status for k, v in enumerate(_verdicts(get_study("richter2020.fig7", "paper")))}
    assert {n for _, n, _ in said} == {1, 2, 3, 4}  # every finding is named somewhere in the table
    assert [(row, n, state) for row, n, state in said if state != printed[n]] == []
