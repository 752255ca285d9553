"""Which hyperparameter matters: Optuna's importance evaluators over a finished study's trials, per panel value.

Per architecture (the panel), every configuration of the study becomes one completed Optuna trial whose
value is its G (mean over seeds of the metric, maximised over training: the paper's statistic) and whose
params are the study's other axes. :func:`importances` runs an evaluator of ``optuna.importance`` on them:
PED-ANOVA by default (it needs nothing beyond Optuna), fANOVA or mean decrease impurity when scikit-learn
is installed. Importances are normalised to sum to 1 per panel value. Optuna is imported on first use only
(``analysis`` stays light), and its own warnings are replaced by the conditions stated in the table.
"""

from __future__ import annotations

import copy
import datetime
import functools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import polars as pl

from analysis.stats.order import order_panels
from analysis.stats.rgb import epochwise_rgb
from search_spaces.record import StudyRecord

EVALUATORS: tuple[str, ...] = ("ped-anova", "fanova", "mean-decrease-impurity")
#: Fewer configurations than this per panel value give no importance (PED-ANOVA compares the best ones
#: with all of them; with a handful there is nothing to compare).
MIN_TRIALS: int = 10
#: PED-ANOVA's top quantile: Optuna's 0.1, raised so that at least this many trials are "top" trials.
MIN_TOP_TRIALS: int = 5


def _evaluator(name: str, n_trials: int) -> Any:
    import optuna.importance as oi

    if name == "ped-anova":
        quantile = min(0.5, max(0.1, MIN_TOP_TRIALS / n_trials))
        return oi.PedAnovaImportanceEvaluator(target_quantile=quantile)
    if name not in EVALUATORS:
        raise ValueError(f"invalid evaluator {name!r}; allowed: {', '.join(EVALUATORS)}")
    try:
        import sklearn  # type: ignore[import-not-found]  # noqa: F401 - fANOVA and MDI fit scikit-learn forests
    except ImportError:
        raise ValueError(f"evaluator {name!r} needs scikit-learn (pip install scikit-learn); "
                         "allowed without it: ped-anova") from None
    return oi.FanovaImportanceEvaluator(seed=0) if name == "fanova" else \
        oi.MeanDecreaseImpurityImportanceEvaluator(seed=0)


def _distribution(values: Sequence[Any]) -> Any:
    """An Optuna distribution over the values an axis took: log-scaled when they span a decade or more."""
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    if not numeric:
        return CategoricalDistribution(sorted({str(v) for v in values}))
    low, high = min(values), max(values)
    log = low > 0 and high / low >= 10
    if all(isinstance(v, int) for v in values):
        return IntDistribution(int(low), int(high), log=log)
    return FloatDistribution(float(low), float(high), log=log)


def param_names(meta: StudyRecord, columns: Sequence[str], panel: str) -> list[str]:
    """The study's axes (other than the panel) that are columns of the results."""
    return [n for n in meta.axes if n != panel and n in columns]


def configuration_values(lf: pl.LazyFrame, panel: str, params: Sequence[str], metric: str) -> pl.DataFrame:
    """One row per configuration: ``panel, *params, g`` (failed rows left out; G null when no finite value)."""
    if "status" in lf.collect_schema().names():
        lf = lf.filter(pl.col("status") != "failed")
    return epochwise_rgb(lf, metric, [panel, *params]).select(panel, *params, "g").collect()


@functools.cache
def _trial_class() -> type:
    """Optuna's ``FrozenTrial``, stored as it is by ``Study.add_trials`` (which validates every trial): its
    in-memory storage deep-copies each trial otherwise, most of the time of the importances of a 25,000-trial
    study (bench/README.md). The trials made here are never changed afterwards."""
    from optuna.trial import FrozenTrial

    class StoredAsIs(FrozenTrial):
        def __deepcopy__(self, memo: dict[int, object]) -> FrozenTrial:
            return copy.copy(self)

    return StoredAsIs


def _one_panel(frame: pl.DataFrame, params: Sequence[str], evaluator: str, direction: str) -> dict[str, Any]:
    """Importances of ``params`` over the rows of one panel value, or the reason there are none."""
    import optuna

    usable = frame.filter(pl.col("g").is_not_null())
    varying = [p for p in params if usable.get_column(p).n_unique() > 1]
    if usable.height < MIN_TRIALS or not varying:
        why = f"{usable.height} configurations with a value (< {MIN_TRIALS})" if usable.height < MIN_TRIALS \
            else "no hyperparameter varies"
        return {"n": usable.height, "reason": why, "importances": {}}
    dists = {p: _distribution(usable.get_column(p).to_list()) for p in varying}
    made, trial = datetime.datetime.now(), _trial_class()
    trials = [
        trial(number=-1, trial_id=-1, state=optuna.trial.TrialState.COMPLETE, value=float(row["g"]),
              datetime_start=made, datetime_complete=made, distributions=dists, user_attrs={}, system_attrs={},
              intermediate_values={},
              params={p: (str(row[p]) if isinstance(dists[p], optuna.distributions.CategoricalDistribution)
                          else row[p]) for p in varying})
        for row in usable.iter_rows(named=True)
    ]
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize" if direction == "max" else "minimize")
    study.add_trials(trials)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Optuna's experimental / small-sample warnings: see the table instead
        result = optuna.importance.get_param_importances(
            study, evaluator=_evaluator(evaluator, len(trials)), params=varying)
    return {"n": usable.height, "reason": "", "importances": dict(result)}


def importances(lf: pl.LazyFrame, meta: StudyRecord, *, panel: str, metric: str | None = None,
                evaluator: str = "ped-anova") -> pl.DataFrame:
    """Per panel value and hyperparameter: Optuna's importance (normalised per panel value to sum 1).

    Columns: ``panel, hyperparameter, importance, n_configurations, evaluator, note``; a panel value with too
    few configurations gets one row with a null importance and the reason in ``note``.
    """
    metric = metric or meta.metric
    columns = lf.collect_schema().names()
    if metric not in columns:
        raise ValueError(f"invalid metric {metric!r}; allowed: columns of the results such as val_accuracy")
    params = param_names(meta, columns, panel)
    return importance_table(configuration_values(lf, panel, params, metric), panel, params, meta.mode, evaluator,
                            panel_order=tuple(meta.axis_values(panel) or ()))


def importance_table(values: pl.DataFrame, panel: str, params: Sequence[str], mode: str = "max",
                     evaluator: str = "ped-anova", panel_order: Sequence[object] = ()) -> pl.DataFrame:
    """:func:`importances` from one row per configuration (``panel, *params, g``, e.g. an RGB frame); panel
    values in ``panel_order`` (the study's), then the paper's order."""
    if evaluator not in EVALUATORS:
        raise ValueError(f"invalid evaluator {evaluator!r}; allowed: {', '.join(EVALUATORS)}")
    rows = []
    for pv in order_panels(values.get_column(panel).to_list(), panel_order):
        out = _one_panel(values.filter(pl.col(panel) == pv), params, evaluator, mode)
        ranked = sorted(out["importances"].items(), key=lambda kv: -kv[1])
        for name, value in ranked or [(None, None)]:
            rows.append({"panel": str(pv), "hyperparameter": name,
                         "importance": None if value is None or math.isnan(value) else float(value),
                         "n_configurations": out["n"], "evaluator": evaluator, "note": out["reason"]})
    schema = {"panel": pl.String, "hyperparameter": pl.String, "importance": pl.Float64,
              "n_configurations": pl.Int64, "evaluator": pl.String, "note": pl.String}
    return pl.DataFrame(rows, schema=schema).rename({"panel": panel})


def format_importances(table: pl.DataFrame, panel: str) -> list[str]:
    """Text lines: per panel value, the hyperparameters by importance (``learning_rate 0.92, d_model 0.08``)."""
    lines = []
    for (pv,), d in table.group_by(panel, maintain_order=True):
        if d.get_column("importance").is_null().all():
            lines.append(f"  {pv}: not computed ({d.get_column('note')[0]})")
            continue
        ranked = ", ".join(f"{r['hyperparameter']} {r['importance']:.2f}" for r in d.iter_rows(named=True))
        lines.append(f"  {pv}: {ranked} ({d.get_column('n_configurations')[0]} configurations)")
    return lines


