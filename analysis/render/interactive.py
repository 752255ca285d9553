"""The interactive RGB grids of ``index.html``: hover a pixel for its numbers, click it for its seeds' curves.

Each grid PNG is wrapped with its cell data (JSON in an inline ``<script type="application/json">``) and
one small inline script (no outside request, no library) maps the mouse position on the image to a cell
with the pixel boxes of :meth:`analysis.render.grids.GridFigure.geometry`:

* hovering shows R / G / B (worst seed, mean, best seed), the seeds, the diverged seeds and the step at
  which G was best;
* clicking draws that cell's per-seed learning curves as an inline SVG below the grid (each line carries
  ``data-seed`` and ``data-values``, so tests can read back exactly what is drawn).
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

from analysis.render.grids import PaintedGrid
from search_spaces.axes import show_value

_SCRIPT = r"""
(function () {
  var SEED_COLORS = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"];
  var tip = document.createElement("div");
  tip.className = "celltip";
  document.body.appendChild(tip);
  function pct(v) { return v === null ? "–" : (100 * v).toFixed(1) + "%"; }
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) {
    return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]; }); }
  function cellAt(data, img, ev) {
    var r = img.getBoundingClientRect();
    var px = (ev.clientX - r.left) * img.naturalWidth / r.width;
    var py = (ev.clientY - r.top) * img.naturalHeight / r.height;
    for (var k = 0; k < data.panels.length; k++) {
      var p = data.panels[k], b = p.box;
      if (px >= b[0] && px < b[2] && py >= b[1] && py < b[3]) {
        var i = Math.floor((px - b[0]) / (b[2] - b[0]) * data.xs.length);
        var j = Math.floor((py - b[1]) / (b[3] - b[1]) * data.ys.length);
        return {panel: p.panel, x: data.xs[i], y: data.ys[j], cell: p.cells[j][i]};
      }
    }
    return null;
  }
  function title(data, hit) {
    return esc(hit.panel) + " · " + esc(data.x) + "=" + esc(hit.x) + ", " + esc(data.y) + "=" + esc(hit.y);
  }
  function describe(data, hit) {
    var c = hit.cell, head = "<b>" + title(data, hit) + "</b><br>";
    if (!c) { return head + "not run"; }
    return head + esc(data.metric) + ": R " + pct(c.r) + " (worst seed) · G " + pct(c.g) + " (mean) · B " +
      pct(c.b) + " (best seed)<br>" + c.seeds + " seeds · " + c.diverged + " diverged · best G at step " +
      (c.best_step === null ? "–" : c.best_step) + (c.curves ? "<br><i>click: per-seed learning curves</i>" : "");
  }
  function curvesSvg(data, hit) {
    var W = 640, H = 260, L = 48, R = 120, T = 14, B = 34, s = hit.cell.curves, all = [];
    s.forEach(function (c) { all = all.concat(c.steps); });
    var x0 = Math.min.apply(null, all), x1 = Math.max.apply(null, all);
    if (x1 === x0) { x1 = x0 + 1; }
    function X(v) { return L + (v - x0) / (x1 - x0) * (W - L - R); }
    function Y(v) { return T + (1 - v) * (H - T - B); }
    var out = ['<svg width="' + W + '" height="' + H + '" class="curves">'];
    [0, 0.25, 0.5, 0.75, 1].forEach(function (v) {
      out.push('<line x1="' + L + '" x2="' + (W - R) + '" y1="' + Y(v) + '" y2="' + Y(v) + '" class="gridline"/>');
      out.push('<text x="' + (L - 6) + '" y="' + (Y(v) + 4) + '" text-anchor="end">' + 100 * v + "%</text>");
    });
    [x0, (x0 + x1) / 2, x1].forEach(function (v) {
      out.push('<text x="' + X(v) + '" y="' + (H - B + 16) + '" text-anchor="middle">' + Math.round(v) + "</text>");
    });
    out.push('<text x="' + ((L + W - R) / 2) + '" y="' + (H - 4) + '" text-anchor="middle">step</text>');
    s.forEach(function (c, k) {
      var color = SEED_COLORS[k % SEED_COLORS.length], pts = [];
      c.steps.forEach(function (st, q) { if (c.values[q] !== null) { pts.push(X(st) + "," + Y(c.values[q])); } });
      out.push('<polyline fill="none" stroke="' + color + '" stroke-width="1.8" points="' + pts.join(" ") +
        '" data-seed="' + c.seed + '" data-values="' + c.values.join(",") + '"/>');
      out.push('<text x="' + (W - R + 10) + '" y="' + (T + 14 + 16 * k) + '" fill="' + color + '">seed ' + c.seed +
        (c.diverged ? " (diverged)" : "") + "</text>");
    });
    out.push("</svg>");
    return out.join("");
  }
  document.querySelectorAll(".cellgrid").forEach(function (wrap) {
    var data = JSON.parse(wrap.querySelector("script.celldata").textContent);
    var img = wrap.querySelector("img"), out = wrap.querySelector(".cellcurves");
    img.addEventListener("mousemove", function (ev) {
      var hit = cellAt(data, img, ev);
      if (!hit) { tip.style.display = "none"; img.style.cursor = ""; return; }
      img.style.cursor = hit.cell ? "pointer" : "not-allowed";
      tip.innerHTML = describe(data, hit);
      tip.style.display = "block";
      tip.style.left = Math.min(ev.pageX + 14, document.documentElement.scrollWidth - tip.offsetWidth - 8) + "px";
      tip.style.top = (ev.pageY + 14) + "px";
    });
    img.addEventListener("mouseleave", function () { tip.style.display = "none"; });
    img.addEventListener("click", function (ev) {
      var hit = cellAt(data, img, ev);
      if (!hit || !hit.cell) { return; }
      var head = "<p><b>" + title(data, hit) + "</b> · " + esc(data.metric) + " of every seed (G best at step " +
        hit.cell.best_step + ")</p>";
      out.innerHTML = hit.cell.curves ? head + curvesSvg(data, hit) :
        head + "<p class='note'>Per-seed curves are not embedded in reports of studies this large.</p>";
    });
  });
})();
"""

CSS = """
.cellgrid{position:relative}.cellgrid img{cursor:crosshair}
.celltip{position:absolute;display:none;z-index:10;background:#fff;border:1px solid #57606a;border-radius:6px;
padding:.4em .6em;font-size:.82em;box-shadow:0 2px 8px rgba(0,0,0,.2);pointer-events:none;max-width:420px}
.cellcurves svg{font-size:11px;background:#fff;border:1px solid #d0d7de;border-radius:4px}
.cellcurves .gridline{stroke:#d0d7de;stroke-width:1}
"""


def script() -> str:
    """The one inline ``<script>`` that makes every ``.cellgrid`` on the page interactive."""
    return f"<script>{_SCRIPT}</script>"


def grid_payload(grid: PaintedGrid, cells: dict[tuple[object, ...], dict[str, Any]], *, x: str, y: str,
                 metric: str) -> dict[str, Any]:
    """The JSON of one interactive grid: axes labels, per panel its pixel box and its cells (row = y, top first).

    ``cells`` maps ``(panel value, x value, y value)`` to the dict of :func:`analysis.stats.hover.cell_data`.
    """
    panels = []
    for geo, pv in zip(grid.boxes, grid.panels, strict=True):
        rows = [[cells.get((pv, xv, yv)) for xv in grid.xs] for yv in grid.ys]
        panels.append({**geo, "cells": rows})
    return {"metric": metric, "x": x, "y": y, "xs": [show_value(v) for v in grid.xs],
            "ys": [show_value(v) for v in grid.ys], "panels": panels}


def grid_html(img_html: str, payload: dict[str, Any], grid_id: str) -> str:
    """The image wrapped with its cell data and an (initially empty) place for a clicked cell's curves."""
    data = json.dumps(payload, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    return (f"<div class='cellgrid' id='{html.escape(grid_id)}'>{img_html}"
            f"<script type='application/json' class='celldata'>{data}</script>"
            "<div class='cellcurves'></div></div>")


def rekey(cells: dict[tuple[object, ...], dict[str, Any]], positions: Sequence[int] = (0, 1, 2)
          ) -> dict[tuple[object, ...], dict[str, Any]]:
    """Cells keyed by the ``(panel, x, y)`` part of their configuration (within one facet these are unique)."""
    return {tuple(k[i] for i in positions): v for k, v in cells.items()}
