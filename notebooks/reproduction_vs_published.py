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
# # A reproduction beside the published numbers
#
# The study's RGB grid next to the published one (the authors' released results, shipped in
# `analysis/data/reference_data/`), restricted to the cells both ran, and the best G / robustness share
# per architecture with the difference (what `study compare STUDY published` prints).
# `STUDY_DIR` selects the study; `REFERENCE` overrides the published data named in its `study.json`.

# %%
# %matplotlib inline
import os

from analysis import find_study_dir, load_reference, read_study_meta, scan_study
from analysis.render.comparison import comparison_figure, format_comparison
from analysis.render.grids import rgb_grid_figure
from analysis.stats.compare import common_grid, compare_sides, restrict
from analysis.stats.rgb import epochwise_rgb
from analysis.stats.training_stats import plot_axes

STUDY_DIR = find_study_dir()
meta = read_study_meta(STUDY_DIR)
REFERENCE = os.environ.get("REFERENCE") or meta.reference or "richter2020/mode__var_dim"
ours = scan_study(STUDY_DIR)
published = load_reference(REFERENCE)
panel, x, y = plot_axes(meta, ours.collect_schema().names())
metric = "val_accuracy"
print(f"{meta.name} ({meta.scale}) vs published {REFERENCE}")

# %% [markdown]
# ## The grids, on the cells both ran

# %%
grid = common_grid(ours, published, [panel, x, y])
print({k: [round(v, 6) if isinstance(v, float) else v for v in vs] for k, vs in grid.items()})
by = [panel, x, y]
rgb_ours = epochwise_rgb(restrict(ours, grid), metric, by).collect()
rgb_published = epochwise_rgb(restrict(published, grid), metric, by).collect()
rgb_grid_figure(rgb_ours, panel, x, y, f"reproduced · {meta.name} ({meta.scale})")

# %%
rgb_grid_figure(rgb_published, panel, x, y, f"published · {REFERENCE}")

# %% [markdown]
# ## Best G and robustness share per architecture, and the difference (reproduced - published)

# %%
table = compare_sides(ours, published, panel=panel, x=x, y=y, metrics=[metric])
print(format_comparison(table, panel, f"{meta.name}@{meta.scale}", f"published:{REFERENCE}", 0.5))
table  # noqa: B018 - the cell shows it

# %%
comparison_figure(table, panel, "reproduced", "published", metric)

# %% [markdown]
# ## The published grid in full (every size and learning rate of the paper)

# %%
rgb_grid_figure(epochwise_rgb(published, metric, by).collect(), panel, x, y, f"published · {REFERENCE} · full grid")

# %% [markdown]
# ## Deviations of this study from the paper

# %%
for deviation in meta.deviations or ["none stated"]:
    print("-", deviation)
