"""The paper's RGB hyperparameter grids: one panel per architecture, one pixel per (x, learning rate), R / G / B
= worst / mean / best seed, a cross on the best combination (its G in the panel title), hatched cells: not run.

* :func:`rgb_grid` - one grid as a matplotlib figure, and where its cells are drawn (:class:`GridFigure`);
  optionally a whole number written in each cell (:func:`write_in_cells`).
* :class:`GridPainter` - many grids of a report, fast: the figure of a layout (panels, axis values, caption
  lines) is laid out and drawn once; each grid then only paints its cells (numpy) and draws its crosses and
  titles over a copy of that background, and comes back as RGB pixels (:class:`PaintedGrid`). A report of 40
  grids of 2,500 cells draws one figure instead of 40 (bench/README.md).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import matplotlib

matplotlib.use("Agg")

import matplotlib.patheffects as pe  # noqa: E402
import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402
import polars as pl  # noqa: E402
from matplotlib.artist import Artist  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.image import AxesImage  # noqa: E402
from matplotlib.layout_engine import ConstrainedLayoutEngine  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from analysis.render.png import RgbaCanvas, png_bytes  # noqa: E402
from analysis.stats.order import order_panels
from search_spaces.axes import show_value

RGB_CAPTION = "R = min over seeds, G = mean, B = max (each maxed over training); x = best G"
CASE_CAPTION = "R = argmin, G = first, B = argmax case accuracy (mean over seeds, maxed over training)"
#: Cells of a grid that were not run are hatched in this colour (never a colour a cell can take).
NOT_RUN_HATCH = "#8c8c8c"
_CELL_INCHES = 0.32


def grid_values(rgb_df: pl.DataFrame, panel: str, x: str, y: str, x_values: Sequence[object] | None = None,
                y_values: Sequence[object] | None = None, panel_order: Sequence[object] = ()
                ) -> tuple[list[object], list[object], list[object]]:
    """The panels (``panel_order`` first, then the paper's order: :func:`order_panels`), the x values
    (ascending) and the y values (descending: the highest on top)."""
    panels = order_panels(rgb_df.get_column(panel).to_list(), panel_order)
    xs = sorted(set(x_values) if x_values is not None else set(rgb_df.get_column(x).to_list()))
    ys = sorted(set(y_values) if y_values is not None else set(rgb_df.get_column(y).to_list()), reverse=True)
    return panels, xs, ys


def _figure_size(n_panels: int, nx: int, ny: int, max_cols: int) -> tuple[int, int, float, float]:
    """(rows, columns, width, height) of a grid figure in inches."""
    ncols = max(1, min(max(1, n_panels), max_cols))
    nrows = math.ceil(max(1, n_panels) / ncols)
    width = max(ncols * (_CELL_INCHES * nx + 1.3) + 0.4, 4.0)
    return nrows, ncols, width, max(nrows * (_CELL_INCHES * ny + 1.5) + 0.9, 3.0)


def _wrap(caption: str, fig_width: float) -> str:
    return textwrap.fill(caption, width=int(fig_width * 15)) if caption else ""


def panel_pixels(sub: pl.DataFrame | None, xs: Sequence[object], ys: Sequence[object], x: str, y: str
                 ) -> npt.NDArray[np.float64]:
    """RGBA floats ``(len(ys), len(xs), 4)`` of one panel: r, g, b clipped to [0, 1] (not finite: 0), alpha 1;
    cells not run (no row, or a value not in ``xs`` / ``ys``) transparent."""
    img = np.zeros((len(ys), len(xs), 4))
    if sub is None or sub.is_empty():
        return img
    x_index = {v: i for i, v in enumerate(xs)}
    y_index = {v: i for i, v in enumerate(ys)}
    xi = np.array([x_index.get(v, -1) for v in sub.get_column(x).to_list()], dtype=np.int64)
    yi = np.array([y_index.get(v, -1) for v in sub.get_column(y).to_list()], dtype=np.int64)
    rgb = sub.select(pl.col("r", "g", "b").cast(pl.Float64)).to_numpy()  # null -> NaN
    rgb = np.clip(np.nan_to_num(rgb, nan=0.0, posinf=0.0, neginf=0.0), 0.0, 1.0)
    ok = (xi >= 0) & (yi >= 0)
    img[yi[ok], xi[ok], :3] = rgb[ok]
    img[yi[ok], xi[ok], 3] = 1.0
    return img


def best_cells(rgb_df: pl.DataFrame, panel: str, value: str = "g") -> pl.DataFrame:
    """The row with the highest ``value`` of each panel."""
    return (rgb_df.filter(pl.col(value).is_not_null()).sort(value, descending=True)
            .group_by(panel, maintain_order=True).first())


class PanelBox(TypedDict):
    """Where a panel's cells are in a PNG of its grid: the panel's name and its pixel box ``[x0, y0, x1, y1]``."""

    panel: str
    box: list[float]


@dataclass
class GridFigure:
    """An RGB grid figure and where its cells are: ``panels[k]`` is drawn in ``axes[k]`` (its cells in
    ``images[k]``, its cross ``crosses[k]``), ``xs`` across and ``ys`` top to bottom (the highest ``y`` on top)."""

    fig: Figure
    panels: list[object]
    axes: list[Axes]
    xs: list[object]
    ys: list[object]
    names: tuple[str, str, str] = ("", "", "")  # the panel, x and y columns
    images: list[AxesImage] = field(default_factory=list)
    crosses: list[Line2D] = field(default_factory=list)
    caption: Text | None = None  # when the layout has room for one
    title: Text | None = None  # the figure's title, when the layout has one
    width: float = 0.0  # inches

    def geometry(self, dpi: float = 100.0, *, draw: bool = True) -> list[PanelBox]:
        """Per panel, the pixel box ``[x0, y0, x1, y1]`` (origin top-left) of its cells in a PNG saved at ``dpi``.

        Cell ``(i, j)`` (``xs[i]``, ``ys[j]``) spans ``1/len(xs)`` of the box width and ``1/len(ys)`` of its
        height; the interactive report maps a mouse position to a cell with this. ``draw=False`` reuses the
        layout of the last draw (right after ``savefig(dpi=dpi)``: no second rendering).
        """
        if draw:
            self.fig.set_dpi(dpi)
            canvas: RgbaCanvas = FigureCanvasAgg(self.fig)
            canvas.draw()
        height = self.fig.bbox.height
        out: list[PanelBox] = []
        for pv, ax in zip(self.panels, self.axes, strict=True):
            # imshow(origin="upper"): row 0 (the highest y) is at the top; flip display y to image y
            (x0, ya), (x1, yb) = ax.transData.transform([(-0.5, -0.5), (len(self.xs) - 0.5, len(self.ys) - 0.5)])
            top, bottom = sorted((height - ya, height - yb))
            box = [round(float(v), 2) for v in (min(x0, x1), top, max(x0, x1), bottom)]
            out.append({"panel": str(pv), "box": box})
        return out

    def show(self, rgb_df: pl.DataFrame, title: str = "", *, best: pl.DataFrame | None = None,
             caption: str = "", value: str = "g") -> None:
        """Put one grid's data on this layout: each panel's cells, its cross on the best cell (``best``: rows
        ``panel, x, y, value``; by default the argmax of ``value`` in ``rgb_df``), its title with that value, the
        figure's title and caption."""
        panel, x, y = self.names
        parts = rgb_df.partition_by(panel, as_dict=True) if rgb_df.height else {}
        best = best_cells(rgb_df, panel, value) if best is None else best
        best_of = {row[panel]: row for row in best.iter_rows(named=True)}
        x_index = {v: i for i, v in enumerate(self.xs)}
        y_index = {v: i for i, v in enumerate(self.ys)}
        for pv, ax, image, cross in zip(self.panels, self.axes, self.images, self.crosses, strict=True):
            image.set_data(panel_pixels(parts.get((pv,)), self.xs, self.ys, x, y))
            cell, label = best_of.get(pv), str(pv)
            shown = cell is not None and cell[x] in x_index and cell[y] in y_index and cell[value] is not None
            if shown and cell is not None:
                cross.set_data([x_index[cell[x]]], [y_index[cell[y]]])
                label = f"{label} {100 * cell[value]:.1f}%"
            cross.set_visible(shown)
            ax.title.set_text(label)
        if self.title is not None:
            self.title.set_text(title)
        if self.caption is not None:
            self.caption.set_text(_wrap(caption, self.width))

    def dynamic(self) -> list[Artist]:
        """What changes from one grid to the next on this layout (and the spines, drawn over the cells), in
        drawing order; the caption (the same for many grids) last."""
        out: list[Artist] = [*self.images, *(s for ax in self.axes for s in ax.spines.values()), *self.crosses,
                             *(ax.title for ax in self.axes)]
        return [*out, *(a for a in (self.title, self.caption) if a is not None)]


def grid_layout(names: tuple[str, str, str], panels: list[object], xs: list[object], ys: list[object], *,
                titled: bool, caption_lines: int, max_cols: int = 3) -> GridFigure:
    """The empty figure of a grid: axes, ticks, labels, the hatched background; room for a title and a caption
    of ``caption_lines`` lines. :meth:`GridFigure.show` puts data on it."""
    _, x, y = names
    nrows, ncols, width, height = _figure_size(len(panels), len(xs), len(ys), max_cols)
    layout = ConstrainedLayoutEngine()  # layout="constrained", kept to give the caption its room
    fig = Figure(figsize=(width, height), layout=layout)
    grid = GridFigure(fig=fig, panels=panels, axes=[], xs=xs, ys=ys, names=names, width=width)
    for k, ax in enumerate(fig.subplots(nrows, ncols, squeeze=False).flat):
        if k >= len(panels):
            ax.set_axis_off()
            continue
        grid.axes.append(ax)
        ax.set_facecolor("white")
        ax.add_patch(Rectangle((-0.5, -0.5), len(xs), len(ys), facecolor="white", edgecolor=NOT_RUN_HATCH,
                               hatch="////", linewidth=0, zorder=0))
        grid.images.append(ax.imshow(np.zeros((len(ys), len(xs), 4)), origin="upper", interpolation="nearest",
                                     aspect="equal", zorder=1))
        grid.crosses.append(ax.plot([0], [0], marker="x", markersize=9, markeredgewidth=2.2, color="white",
                                    path_effects=[pe.Stroke(linewidth=4, foreground="black"), pe.Normal()],
                                    zorder=2, visible=False)[0])
        ax.set_title(str(panels[k]), fontsize=10)
        ax.set_xticks(range(len(xs)), [show_value(v) for v in xs], rotation=90, fontsize=7)
        ax.set_yticks(range(len(ys)), [show_value(v) for v in ys], fontsize=7)
        ax.set_xlabel(x, fontsize=8)
        ax.tick_params(length=2)
        if k % ncols == 0:
            ax.set_ylabel(y, fontsize=8)
    if titled:
        grid.title = fig.suptitle(" ", fontsize=11)
    if caption_lines:
        bottom = 0.04 * caption_lines
        layout.set(rect=(0, bottom + 0.01, 1, 0.99 - bottom))
        grid.caption = fig.text(0.5, 0.01, "", ha="center", va="bottom", fontsize=7.5)
    return grid


def _caption_lines(caption: str, n_panels: int, nx: int, ny: int, max_cols: int) -> int:
    return _wrap(caption, _figure_size(n_panels, nx, ny, max_cols)[2]).count("\n") + 1 if caption else 0


def rgb_grid(
    rgb_df: pl.DataFrame,
    panel: str,
    x: str,
    y: str,
    title: str = "",
    *,
    best: pl.DataFrame | None = None,
    caption: str = RGB_CAPTION,
    value: str = "g",
    x_values: Sequence[object] | None = None,
    y_values: Sequence[object] | None = None,
    max_cols: int = 3,
    numbers: str | None = None,
) -> GridFigure:
    """The paper's RGB grid: one panel per ``panel`` value, one pixel per (``x``, ``y``).

    ``rgb_df`` has columns ``panel, x, y, r, g, b`` (values in [0, 1], e.g. from
    :func:`analysis.stats.rgb.epochwise_rgb` or :func:`analysis.stats.rgb.case_rgb`). ``y`` grows upwards (the
    highest learning rate is the top row, as in the paper); cells not run are hatched. The best
    combination of each panel (``best``: rows ``panel, x, y, value``; by default the argmax of
    ``value`` in ``rgb_df``) is marked with a cross and its ``value`` printed in the panel title. ``numbers``: a
    column of whole numbers (e.g. seeds per cell) written in each cell, where shades alone are hard to read apart.
    """
    panels, xs, ys = grid_values(rgb_df, panel, x, y, x_values, y_values)
    grid = grid_layout((panel, x, y), panels, xs, ys, titled=bool(title), max_cols=max_cols,
                       caption_lines=_caption_lines(caption, len(panels), len(xs), len(ys), max_cols))
    grid.show(rgb_df, title, best=best, caption=caption, value=value)
    if numbers is not None:
        write_in_cells(grid, rgb_df, numbers)
    return grid


def ink_on(rgb: Sequence[float]) -> str:
    """The text colour that reads best on a cell of colour ``rgb`` (floats in [0, 1]): black on a light cell, white
    on a dark one. The cut is WCAG's: black has more contrast than white above relative luminance 0.179."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return "black" if 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2] > 0.179 else "white"


def write_in_cells(grid: GridFigure, rgb_df: pl.DataFrame, column: str) -> None:
    """Write each row's ``column`` (a whole number) in its cell, in the ink :func:`ink_on` picks for the cell's
    colour (as :func:`panel_pixels` paints it)."""
    panel, x, y = grid.names
    axes = dict(zip(grid.panels, grid.axes, strict=True))
    x_index = {v: i for i, v in enumerate(grid.xs)}
    y_index = {v: j for j, v in enumerate(grid.ys)}
    for row in rgb_df.iter_rows(named=True):
        ax, i, j = axes.get(row[panel]), x_index.get(row[x]), y_index.get(row[y])
        if ax is None or i is None or j is None or row[column] is None:
            continue
        rgb = [min(max(float(c), 0.0), 1.0) if c is not None and math.isfinite(c) else 0.0
               for c in (row["r"], row["g"], row["b"])]
        ax.text(i, j, f"{int(row[column]):d}", ha="center", va="center", fontsize=8, color=ink_on(rgb), zorder=3)


def rgb_grid_figure(rgb_df: pl.DataFrame, panel: str, x: str, y: str, title: str = "", **kwargs: Any) -> Figure:
    """The figure of :func:`rgb_grid` (same arguments), for notebooks that only need the picture."""
    return rgb_grid(rgb_df, panel, x, y, title, **kwargs).fig


@dataclass(frozen=True)
class PaintedGrid:
    """One grid painted by :class:`GridPainter`: its PNG and where its cells are (:meth:`GridFigure.geometry`)."""

    png: bytes
    panels: list[object]
    xs: list[object]
    ys: list[object]
    boxes: list[PanelBox]


_Pixels = npt.NDArray[np.uint8]  # RGBA, (height, width, 4)
_Edges = npt.NDArray[np.int64]
#: A grid layout: the panel, x and y columns, the panels, xs and ys, whether it has a title, its caption lines.
_LayoutKey = tuple[tuple[str, str, str], tuple[object, ...], tuple[object, ...], tuple[object, ...], bool, int]


@dataclass
class _Layout:
    grid: GridFigure
    canvas: RgbaCanvas
    background: _Pixels  # the static part, drawn once
    boxes: list[PanelBox]
    edges: list[tuple[_Edges, _Edges]]  # per panel: the first pixel row of each cell row (and one past
    # the last), the first pixel column of each cell column (and one past the last)
    captioned: dict[str, _Pixels] = field(default_factory=dict)  # caption -> the background with it

    def background_with(self, caption: str) -> _Pixels:
        """The background with ``caption`` drawn on it (drawn once per caption)."""
        if caption not in self.captioned:
            buffer = np.asarray(self.canvas.buffer_rgba(), dtype=np.uint8)
            buffer[...] = self.background
            if self.grid.caption is not None:
                self.grid.caption.set_text(_wrap(caption, self.grid.width))
                self.grid.fig.draw_artist(self.grid.caption)
            self.captioned[caption] = buffer.copy()
        return self.captioned[caption]


def _cell_edges(start: float, end: float, n: int) -> _Edges:
    """The first pixel of each of ``n`` cells across a box (nearest: the cell holding the pixel's centre), and
    one past the last."""
    return np.ceil(start + (end - start) * np.arange(n + 1) / n - 0.5).astype(np.int64)


class GridPainter:
    """Paints the report's RGB grids (see the module docstring); layouts are kept for the painter's lifetime."""

    def __init__(self, dpi: float = 100.0, max_cols: int = 3) -> None:
        self.dpi, self.max_cols = dpi, max_cols
        self._layouts: dict[_LayoutKey, _Layout] = {}

    def _layout(self, rgb_df: pl.DataFrame, names: tuple[str, str, str], title: str, caption: str,
                values: tuple[list[object], list[object], list[object]]) -> _Layout:
        panels, xs, ys = values
        lines = _caption_lines(caption, len(panels), len(xs), len(ys), self.max_cols)
        key: _LayoutKey = (names, tuple(panels), tuple(xs), tuple(ys), bool(title), lines)
        if key not in self._layouts:
            grid = grid_layout(names, panels, xs, ys, titled=bool(title), caption_lines=lines, max_cols=self.max_cols)
            grid.show(rgb_df, title, caption=caption)  # text to lay out
            for artist in grid.dynamic():
                artist.set_animated(True)  # left out of the background
            grid.fig.set_dpi(self.dpi)
            canvas: RgbaCanvas = FigureCanvasAgg(grid.fig)
            canvas.draw()  # the layout, and the static part once
            grid.fig.set_layout_engine("none")
            boxes = grid.geometry(self.dpi, draw=False)
            edges = [(_cell_edges(top, bottom, len(ys)), _cell_edges(x0, x1, len(xs)))
                     for x0, top, x1, bottom in (geo["box"] for geo in boxes)]
            background = np.asarray(canvas.buffer_rgba(), dtype=np.uint8).copy()
            self._layouts[key] = _Layout(grid, canvas, background, boxes, edges)
        return self._layouts[key]

    def paint(self, rgb_df: pl.DataFrame, panel: str, x: str, y: str, title: str = "", *,
              best: pl.DataFrame | None = None, caption: str = RGB_CAPTION, value: str = "g",
              panel_order: Sequence[object] = ()) -> PaintedGrid:
        """The grid of :func:`rgb_grid` (same arguments; ``panel_order``: the study's order of the panels) as a
        PNG at the painter's dpi."""
        values = grid_values(rgb_df, panel, x, y, panel_order=panel_order)
        layout = self._layout(rgb_df, (panel, x, y), title, caption, values)
        grid = layout.grid
        background = layout.background_with(caption)
        grid.show(rgb_df, title, best=best, caption=caption, value=value)
        buffer = np.asarray(layout.canvas.buffer_rgba(), dtype=np.uint8)
        buffer[...] = background
        for image, (rows, cols) in zip(grid.images, layout.edges, strict=True):
            rgba = (np.asarray(image.get_array()) * 255).astype(np.uint8)
            run = rgba[..., 3] > 0
            rgba[..., 3] = 255
            for j in range(len(rows) - 1):  # one pixel row per row of cells, repeated down the cells
                buffer[rows[j]:rows[j + 1], cols[0]:cols[-1]] = np.repeat(rgba[j], np.diff(cols), axis=0)
            for j, i in zip(*np.nonzero(~run), strict=True):  # cells not run: the hatching again
                cells = (slice(rows[j], rows[j + 1]), slice(cols[i], cols[i + 1]))
                buffer[cells] = background[cells]
        for artist in grid.dynamic()[len(grid.images):None if grid.caption is None else -1]:
            grid.fig.draw_artist(artist)
        return PaintedGrid(png_bytes(buffer), *values, boxes=layout.boxes)
