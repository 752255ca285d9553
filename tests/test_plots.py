"""One visual language: the same colour per architecture in every figure, legends off the data, cells not run
hatched, and grid geometry that points at the right pixels of the saved PNG."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.image import imread

from analysis.render.grids import NOT_RUN_HATCH, GridPainter, ink_on, rgb_grid
from analysis.render.plots import PANEL_COLORS, learning_curve_figure, panel_color, robustness_figure
from analysis.render.png import png_bytes

PANELS = ["NAP", "sum", "max"]


def _overlap(a, b) -> bool:  # noqa: ANN001 - matplotlib Bbox
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def _line_colors(fig) -> dict[str, str]:  # noqa: ANN001
    legend = fig.legends[0]
    return {t.get_text().split(" ")[0]: to_hex(h.get_color()) for t, h in zip(legend.get_texts(), legend.legend_handles,
                                                                             strict=True)}


def test_every_figure_colours_an_architecture_the_same_way_and_keeps_its_legend_off_the_data() -> None:
    steps = pl.DataFrame({"architecture": [p for p in PANELS for _ in range(3)], "step": [100, 200, 300] * 3,
                          "mean": np.linspace(0.1, 0.9, 9), "min": 0.0, "max": 1.0})
    curves = learning_curve_figure(steps.with_columns(label=pl.col("architecture") + " (d=8)"), "architecture",
                                   label="label")
    curve = pl.DataFrame({"architecture": PANELS * 2, "g": [0.9, 0.5, 0.1, 0.8, 0.4, 0.05],
                          "fraction": [0.5] * 3 + [1.0] * 3})
    robust = robustness_figure(curve, "architecture", x="fraction")
    for fig in (curves, robust):
        FigureCanvasAgg(fig).draw()
        assert _line_colors(fig) == {p: PANEL_COLORS[p] for p in PANELS}
        legend = fig.legends[0].get_window_extent()
        assert not any(_overlap(legend, ax.get_window_extent()) for ax in fig.axes)
    assert PANEL_COLORS["sum"] != PANEL_COLORS["max"] and panel_color("an unknown mixer") == panel_color(
        "an unknown mixer")


def test_grid_geometry_points_at_each_cell_and_cells_not_run_are_hatched(tmp_path: Path) -> None:
    rows = [("NAP", d, lr, 0.2 * k / 9, 0.5, 0.9) for k, (d, lr) in
            enumerate((d, lr) for d in (8, 16, 32) for lr in (0.1, 0.01, 0.001))]
    rgb = pl.DataFrame(rows[:-1], schema=["architecture", "d_model", "learning_rate", "r", "g", "b"], orient="row")
    grid = rgb_grid(rgb, "architecture", "d_model", "learning_rate", "t")  # (32, 0.001) not run
    (geo,) = grid.geometry()
    grid.fig.savefig(tmp_path / "g.png", dpi=100)
    assert grid.geometry(draw=False) == [geo]  # right after saving: the same boxes without drawing again
    img = imread(tmp_path / "g.png")[..., :3]
    x0, y0, x1, y1 = geo["box"]
    assert grid.ys == [0.1, 0.01, 0.001]  # the highest learning rate is the top row
    for i, d in enumerate(grid.xs):
        for j, lr in enumerate(grid.ys):
            cx = int(x0 + (i + 0.25) * (x1 - x0) / 3)  # off the centre: the best cell carries a cross
            cy = int(y0 + (j + 0.25) * (y1 - y0) / 3)
            cell = rgb.filter(pl.col("d_model") == d, pl.col("learning_rate") == lr)
            if cell.height:
                assert np.allclose(img[cy, cx], cell.select("r", "g", "b").row(0), atol=1.5 / 255), (d, lr)
            else:
                patch = img[cy - 6:cy + 6, cx - 6:cx + 6].reshape(-1, 3)
                hatch = np.array([int(NOT_RUN_HATCH[k:k + 2], 16) / 255 for k in (1, 3, 5)])
                assert (np.abs(patch - 1.0).max(axis=1) < 0.02).any()  # white
                assert (np.abs(patch - hatch).max(axis=1) < 0.12).any()  # grey stripes


def test_numbers_written_in_cells_read_on_dark_and_light_cells(tmp_path: Path) -> None:
    """Seeds per cell: each cell run carries its count, white on a dark cell, black on a light one; none on a cell
    not run. The text is drawn: the cells differ from the same grid without numbers only at their centres."""
    rows = [("NAP", d, lr, n, n / 6, n / 6, n / 6) for n, (d, lr) in
            enumerate((d, lr) for d in (8, 16, 32) for lr in (0.1, 0.01, 0.001)) if n < 7]  # two cells of d 32: not run
    frame = pl.DataFrame(rows, schema=["architecture", "d_model", "learning_rate", "n", "r", "g", "b"], orient="row")
    no_cross = frame.select("architecture", "d_model", "learning_rate", value="g").head(0)
    with_numbers = rgb_grid(frame, "architecture", "d_model", "learning_rate", best=no_cross, numbers="n")
    written = {(t.get_position(), t.get_text(), t.get_color()) for t in with_numbers.axes[0].texts}
    xs, ys = with_numbers.xs, with_numbers.ys
    assert written == {((xs.index(d), ys.index(lr)), str(n), "white" if n / 6 < 0.46 else "black")
                       for _, d, lr, n, *_ in rows}
    (geo,) = with_numbers.geometry()
    pixels = []
    for grid in (with_numbers, rgb_grid(frame, "architecture", "d_model", "learning_rate", best=no_cross)):
        grid.fig.savefig(tmp_path / "g.png", dpi=100)
        pixels.append(imread(tmp_path / "g.png")[..., :3])
    differ = np.abs(pixels[0] - pixels[1]).max(axis=2) > 0.3
    x0, y0, x1, y1 = geo["box"]
    w, h = (x1 - x0) / 3, (y1 - y0) / 3
    for _, d, lr, *_ in rows:  # a number at each run cell's centre, nothing near its edges
        cx, cy = x0 + (xs.index(d) + 0.5) * w, y0 + (ys.index(lr) + 0.5) * h
        centre = differ[int(cy - h / 4):int(cy + h / 4), int(cx - w / 4):int(cx + w / 4)]
        assert centre.sum() >= 5, (d, lr)
        assert differ[int(cy - h / 2) + 2, int(x0 + xs.index(d) * w) + 2:int(x0 + (xs.index(d) + 1) * w) - 2].sum() == 0
    assert differ.sum() == sum(
        differ[int(y0 + ys.index(lr) * h):int(y0 + (ys.index(lr) + 1) * h),
               int(x0 + xs.index(d) * w):int(x0 + (xs.index(d) + 1) * w)].sum() for _, d, lr, *_ in rows)
    assert (ink_on((0.0, 0.0, 0.0)), ink_on((1.0, 1.0, 1.0)), ink_on((0.5, 0.5, 0.5))) == ("white", "black", "black")


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _png_pixels(data: bytes, path: Path) -> np.ndarray:
    return np.round(imread(_write(path, data))[..., :3] * 255).astype(np.uint8)


def test_painted_grids_are_the_figure_of_rgb_grid_and_share_one_layout(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    cells = [(a, d, lr) for a in PANELS for d in (8, 16, 32, 64) for lr in (0.1, 0.01, 0.001)]
    grids = []
    for k in range(3):  # each grid leaves out other cells; the painter must not show the last grid's cells
        values = np.sort(rng.random((len(cells), 3)), axis=1)
        rows = [(*c, *v) for i, (c, v) in enumerate(zip(cells, values, strict=True)) if i % 7 != k]
        grids.append(pl.DataFrame(rows, schema=["architecture", "d_model", "learning_rate", "r", "g", "b"],
                                  orient="row"))
    painter = GridPainter()
    for k, rgb in enumerate(grids):
        painted = painter.paint(rgb, "architecture", "d_model", "learning_rate", f"grid {k}")
        figure = rgb_grid(rgb, "architecture", "d_model", "learning_rate", f"grid {k}")
        figure.fig.savefig(tmp_path / "figure.png", dpi=100)
        expected = np.round(imread(tmp_path / "figure.png")[..., :3] * 255).astype(np.uint8)
        got = _png_pixels(painted.png, tmp_path / "painted.png")
        assert got.shape == expected.shape
        assert painted.boxes == figure.geometry(draw=False)
        assert (painted.panels, painted.xs, painted.ys) == (figure.panels, figure.xs, figure.ys)
        # the same picture: at most a pixel column / row at a cell edge rounded the other way
        differ = np.abs(got.astype(int) - expected.astype(int)).max(axis=2) > 2
        assert differ.mean() < 0.002, differ.mean()
    assert len(painter._layouts) == 1  # one layout drawn, three grids painted on it


def test_png_bytes_decode_to_the_same_pixels_whether_deflated_whole_or_in_bands(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    rgba = np.full((97, 131, 4), 255, np.uint8)
    rgba[10:60, 20:90, :3] = rng.integers(0, 256, (50, 70, 3))  # noise on a flat background
    for pixels in (rgba, rgba[..., :3]):
        for bands in (1, 3):
            data = png_bytes(pixels, bands=bands)
            raw = zlib.decompress(data[41:-16])  # one valid zlib stream (its checksum checked)
            assert len(raw) == pixels.shape[0] * (pixels.shape[1] * pixels.shape[2] + 1)
            got = np.round(imread(_write(tmp_path / "p.png", data)) * 255).astype(np.uint8)
            assert got.shape == pixels.shape and (got == pixels).all(), bands
