"""`study reproduction NAME`: a study's results against the authors' released seeds, in one report (docs/richter2020.md,
"The figure at paper scale on one GPU").

Three parts, each from code other commands use too:

1. per architecture the best G and the robustness share beside the authors' (`study compare NAME@SCALE published`);
2. per architecture the share of cells whose interval of G over this run's seeds (the one a verdict reads) excludes
   the authors' G over theirs (analysis.stats.intervals.reproduction);
3. every finding's verdict on this run beside its verdict on the authors' data (`study findings NAME` and
   `study findings NAME --data published`), with the numbers of both where they disagree.

Exit status 0 whatever the verdicts (a disagreement is a result); 2 on bad input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
import polars as pl

from study.cli.common import InputError, load_study, scale_option, storage_option, study_storage

if TYPE_CHECKING:
    from analysis.stats.verdicts.evaluate import Verdict


def _findings_side_by_side(ours: list[Verdict], theirs: list[Verdict]) -> list[str]:
    """One line per finding: this run's status, the authors', agree or DISAGREE; the numbers of both under a
    disagreement."""
    lines = ["findings: this run | the authors' data"]
    by_text = {v.finding.description: v for v in theirs}
    agree = 0
    for verdict in ours:
        other = by_text.get(verdict.finding.description)
        status = other.status if other is not None else "not in the published data"
        same = other is not None and status == verdict.status
        agree += same
        lines.append(f"  {verdict.status:>11} | {status:<11} {'agree' if same else 'DISAGREE'}: "
                     f"{verdict.finding.description}")
        if not same:
            lines += [f"      this run: {line.strip()}" for line in verdict.lines()[1:]]
            lines += [f"      authors:  {line.strip()}" for line in (other.lines()[1:] if other else [])]
    lines.append(f"  {agree} of {len(ours)} finding(s) reach the same verdict on both")
    return lines


def reproduction_text(name: str, scale: str, storage: str, metric: str = "val_accuracy",
                      confidence: float = 0.95) -> str:
    """The three parts of the module docstring, as text."""
    from analysis.data.rows import open_trials
    from analysis.stats.intervals.reproduction import cell_test, format_cell_test
    from analysis.stats.training_stats import training_stats
    from study.cli.common import current_meta
    from study.cli.compare import comparison_text
    from study.cli.findings import published_rows, published_verdicts, run_verdicts

    study = load_study(name, scale)
    if not study.reference:
        raise InputError(f"invalid NAME {name!r}: study {study.name} ships no published results to compare with; "
                         "allowed: a study with a reference (study show NAME says)")
    if not 0 < confidence < 1:
        raise InputError(f"invalid --confidence {confidence}; allowed: a number between 0 and 1")
    target = study_storage(study, storage)
    parts = [f"{study.name} (scale {study.scale}) in {target.uri} against the authors' seeds "
             f"(published:{study.reference})", "",
             comparison_text(f"{name}@{scale}", "published", storage=storage, scale=scale, metrics=(metric,)), ""]
    ours = open_trials(target.location).lf
    if ours is None:
        raise InputError(f"invalid NAME {name!r}: no readable results in {target.uri}; run `study run {name} "
                         f"--scale {scale}` first")
    mine = training_stats(ours, current_meta(study, target))
    _, _, _, authors = published_rows(study, "published")
    try:
        test = cell_test(mine.finding_cells(), authors.finding_cells(), metric, mine.axes.panel, confidence)
    except ValueError as error:
        raise InputError(f"invalid --metric {metric!r}: {error}; allowed: a metric both the run and the release "
                         "have, e.g. val_accuracy") from None
    parts += [format_cell_test(test, confidence), ""]
    ours_head, ours_verdicts = run_verdicts(study, target)
    theirs_head, theirs_verdicts = published_verdicts(study, "published")
    parts += [ours_head, theirs_head, *_findings_side_by_side(ours_verdicts, theirs_verdicts)]
    return "\n".join(parts)


@click.command("reproduction")
@click.argument("name")
@scale_option
@storage_option
@click.option("--metric", default="val_accuracy", show_default=True, help="The metric compared.")
@click.option("--confidence", type=float, default=0.95, show_default=True,
              help="Level of each cell's interval over this run's seeds.")
def reproduction(name: str, scale: str, storage: str, metric: str, confidence: float) -> None:
    """A study's results against the authors' released seeds: best G and robustness per architecture, the share of
    cells whose interval of G excludes the authors' G, every finding's verdict on both (docs/richter2020.md)."""
    try:
        click.echo(reproduction_text(name, scale, storage, metric, confidence))
    except pl.exceptions.ColumnNotFoundError as error:
        raise InputError(f"invalid --metric {metric!r}: {str(error).splitlines()[0]}; allowed: a metric both the "
                         "run and the release have, e.g. val_accuracy") from None
