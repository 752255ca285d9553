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
# # How does the best learning rate move with model size, per architecture?
#
# For every (architecture, d_model) the learning rate with the highest G (mean accuracy over seeds,
# maximised over training), then a line fitted to log10(best lr) against log10(d) per architecture:
# its slope says how the best learning rate scales with width (slope -1: lr ~ 1/d; 0: independent
# of d). Done on the study in `STUDY_DIR` and on the published results of the same figure, whose
# grid spans 8 sizes x 10 learning rates. A size with a single learning rate, or an architecture
# with a single size, gives no information and is left out of the fit.

# %%
# %matplotlib inline
import os

import matplotlib.pyplot as plt
import numpy as np
import polars as pl

from analysis import find_study_dir, load_reference, read_study_meta, scan_study
from analysis.stats.order import order_panels
from analysis.stats.rgb import best_config, epochwise_rgb

STUDY_DIR = find_study_dir()
meta = read_study_meta(STUDY_DIR)
REFERENCE = os.environ.get("REFERENCE") or meta.reference or "richter2020/mode__var_dim"
metric = "val_accuracy"
sources = {
    f"{meta.name} ({meta.scale})": scan_study(STUDY_DIR),
    f"published {REFERENCE}": load_reference(REFERENCE),
}


# %%
def best_lr_per_size(lf: pl.LazyFrame) -> pl.DataFrame:
    """Per (architecture, d_model): the learning rate of the best G, and that G."""
    rgb = epochwise_rgb(lf, metric, ["architecture", "d_model", "learning_rate"])
    return (
        best_config(rgb, ["architecture", "d_model"]).select("architecture", "d_model", "learning_rate", "g").collect()
    )


def fit_slopes(best: pl.DataFrame) -> pl.DataFrame:
    """Per architecture: slope and intercept of log10(best lr) = slope * log10(d) + intercept."""
    rows = []
    for arch in order_panels(best.get_column("architecture").to_list()):
        d = best.filter(pl.col("architecture") == arch).sort("d_model")
        if d.height < 2:
            continue
        slope, intercept = np.polyfit(np.log10(d["d_model"].to_numpy()), np.log10(d["learning_rate"].to_numpy()), 1)
        rows.append({"architecture": arch, "n_sizes": d.height, "slope": float(slope), "intercept": float(intercept)})
    return pl.DataFrame(
        rows, schema={"architecture": pl.String, "n_sizes": pl.Int64, "slope": pl.Float64, "intercept": pl.Float64}
    )


best = {name: best_lr_per_size(lf) for name, lf in sources.items()}
fits = {name: fit_slopes(b) for name, b in best.items()}
for name, fit in fits.items():
    print(name)
    for row in fit.iter_rows(named=True):
        print(
            f"  {row['architecture']:>5}: slope {row['slope'] + 0.0:+.2f} "
            f"(best lr ~ d^{row['slope'] + 0.0:.2f}, {row['n_sizes']} sizes)"
        )

# %% [markdown]
# ## Best learning rate against model size, with the fitted lines (log-log)

# %%
fig, axes = plt.subplots(1, len(best), figsize=(6 * len(best), 4.2), squeeze=False, layout="constrained")
for ax, (name, b) in zip(axes[0], best.items(), strict=True):
    archs = order_panels(b.get_column("architecture").to_list())
    colors = dict(zip(archs, plt.get_cmap("tab10").colors, strict=False))
    fit = {r["architecture"]: r for r in fits[name].iter_rows(named=True)}
    for arch in archs:
        d = b.filter(pl.col("architecture") == arch).sort("d_model")
        ax.scatter(d["d_model"], d["learning_rate"], color=colors[arch], s=25, label=arch)
        if arch in fit:
            xs = np.geomspace(d["d_model"].min(), d["d_model"].max(), 20)
            ax.plot(xs, 10 ** (fit[arch]["slope"] * np.log10(xs) + fit[arch]["intercept"]), color=colors[arch], lw=1.2)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("d_model")
    ax.set_ylabel(f"best learning rate ({metric} G)")
    ax.set_title(name, fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
fig  # noqa: B018 - the cell shows it

# %%
pl.concat([f.with_columns(pl.lit(name).alias("data")) for name, f in fits.items()]).select(
    "data", "architecture", "n_sizes", "slope"
)
