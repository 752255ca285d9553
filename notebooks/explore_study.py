# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Exploring one study
#
# The grids, best configurations, robustness and learning curves of one study, straight from its
# Parquet results (`docs/results.md`). Set `STUDY_DIR` to the study directory
# (`<storage>/<study>`, holding `study.json` and `trials/`); the default is the smoke-scale Fig. 7
# study that `study run richter2020.fig7 --scale smoke` writes under `results/`.

# %%
# %matplotlib inline

import polars as pl

from analysis import find_study_dir, read_study_meta, scan_study
from analysis.render.grids import rgb_grid_figure
from analysis.render.plots import learning_curve_figure, robustness_figure
from analysis.stats.coverage import model_status
from analysis.stats.rgb import best_config, epochwise_rgb, learning_curves, robustness_curve
from analysis.stats.training_stats import plot_axes, robustness_table

STUDY_DIR = find_study_dir()
meta = read_study_meta(STUDY_DIR)
lf = scan_study(STUDY_DIR)
panel, x, y = plot_axes(meta, lf.collect_schema().names())
metric = meta.metric
print(f"{meta.name} at scale {meta.scale}: {meta.goal}")
print(f"panel={panel}, x={x}, y={y}, metric={metric}")

# %% [markdown]
# ## Search space and progress

# %%
for kind in ("scientific", "nuisance"):
    for name, values in getattr(meta, kind).items():
        print(f"{kind:>10} {name}: {values}")
print(f"{'seeds':>10}: {list(meta.seeds)}")

# one status per trained model (trial x seed): diverged if any of its rows is
status = (
    model_status(lf)
    .group_by("status")
    .len()
    .sort("status")
    .collect()
)
status  # noqa: B018 - the cell shows it

# %% [markdown]
# ## RGB grids
# R / G / B = worst seed / mean / best seed accuracy, each maximised over training. White: every seed
# learns; blue: only the best seed does; black: none does. The cross marks the best G.

# %%
by = [panel, x, y]
rgb = epochwise_rgb(lf, metric, by).collect()
rgb_grid_figure(rgb, panel, x, y, f"{meta.name} · {metric}")

# %% [markdown]
# ## Best configuration per architecture

# %%
best = best_config(rgb.lazy(), panel).collect()
best.select(panel, x, y, pl.col("g").alias("mean"), pl.col("r").alias("worst_seed"), pl.col("b").alias("best_seed"))

# %% [markdown]
# ## Robustness: every combination sorted by G

# %%
curve = robustness_curve(rgb.lazy(), panel).collect()
robustness_figure(curve, panel, f"robustness · {metric}", x="fraction")

# %%
robustness_table(rgb, panel)

# %% [markdown]
# ## Learning curves of the best combination of each architecture

# %%
curves = (
    learning_curves(lf, metric, by)
    .join(best.lazy().select(by), on=by, how="inner")
    .with_columns(
        pl.format("{} ({}={}, {}={})", pl.col(panel), pl.lit(x), pl.col(x), pl.lit(y), pl.col(y)).alias("label")
    )
    .collect()
)
learning_curve_figure(curves, panel, "mean over seeds, band = min-max", label="label")
