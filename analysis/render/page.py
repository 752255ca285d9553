"""The report page under construction: headings, paragraphs, tables and figures, then one HTML file.

Figures are written as PNG files and embedded (base64) so that ``index.html`` is one self-contained file:
no outside request, no library; the only script is the inline one of :mod:`analysis.render.interactive`. PNGs are
encoded by :func:`analysis.render.png.png_bytes`.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from analysis.render import interactive
from analysis.render.png import RgbaCanvas, png_bytes

CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1200px;margin:0 auto;padding:1.5em 1.5em 4em;
color:#1f2328;line-height:1.45;background:#fff}
h1{font-size:1.7em;margin:.2em 0 .3em}h2{font-size:1.3em;border-bottom:2px solid #d0d7de;padding-bottom:.25em;
margin-top:2.2em}h3{font-size:1.05em;margin-top:1.5em}
nav.toc{font-size:.9em;margin:.8em 0 1.2em;display:flex;flex-wrap:wrap;gap:.3em .9em}
nav.toc a{color:#0969da;text-decoration:none}nav.toc a:hover{text-decoration:underline}
.goal{background:#f6f8fa;border-left:4px solid #0969da;padding:.7em 1em;margin:.8em 0;font-size:1.05em}
.goal b{color:#0969da}
.chips{display:flex;flex-wrap:wrap;gap:.4em;margin:.4em 0}
.chip{background:#eaeef2;border-radius:1em;padding:.1em .7em;font-size:.85em}
.deviations{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:.6em 1em .6em 2em;margin:.6em 0}
.deviations li{margin:.25em 0}
.glance{border:1px solid #d0d7de;border-radius:6px;padding:.6em 1em;margin:1em 0}
.glance p{margin:.3em 0}
.warn{background:#fff1f0;border:1px solid #cf222e;border-radius:6px;padding:.5em 1em;margin:.6em 0}
.progress{display:flex;height:1.1em;border-radius:4px;overflow:hidden;background:#eaeef2;max-width:640px;
margin:.5em 0}
.progress span{display:block;height:100%}
.bar-ok{background:#2da44e}.bar-div{background:#d4a72c}.bar-fail{background:#cf222e}.bar-pend{background:#eaeef2}
.bar-bad{background:repeating-linear-gradient(45deg,#8250df 0 4px,#d8b9ff 4px 8px)}
.legend{display:flex;flex-wrap:wrap;gap:.5em 1.4em;margin:.6em 0;font-size:.88em}
.legend div{display:flex;align-items:center;gap:.45em}
.sw{display:inline-block;width:1.4em;height:1.4em;border:1px solid #888;border-radius:2px;flex:none}
.sw.hatch{background:repeating-linear-gradient(45deg,#8c8c8c 0 1.5px,#fff 1.5px 5px)}
table.data{border-collapse:collapse;font-size:.8em;margin:.5em 0;font-variant-numeric:tabular-nums}
table.data td,table.data th{border:1px solid #d0d7de;padding:.2em .45em;text-align:right}
table.data td{white-space:nowrap}
table.data th{background:#f6f8fa;font-weight:600;vertical-align:bottom;min-width:3.5em}
table.data tbody tr:nth-child(even){background:#fafbfc}
table.data td.l{text-align:left}
.scroll{overflow-x:auto;max-width:100%}
.row{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}
.row figure{flex:1 1 0;min-width:300px}
figure{margin:.5em 0}img{max-width:100%;height:auto}
.pass{color:#1a7f37;font-weight:bold}.fail{color:#cf222e;font-weight:bold}.note{color:#57606a}
.undecided{color:#9a6700;font-weight:bold}.unchecked{color:#57606a;font-weight:bold}
pre{background:#f6f8fa;padding:.6em;overflow-x:auto;font-size:.85em}
details{margin:.5em 0}summary{cursor:pointer;color:#0969da}
""" + interactive.CSS


@dataclass
class Page:
    """The HTML body under construction and the PNGs written so far (into ``out_dir``)."""

    out_dir: Path
    parts: list[str] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    toc: list[tuple[str, str]] = field(default_factory=list)
    interactive: bool = False  # whether an interactive grid was added (then the page gets the script)
    dpi: float = 100.0  # of every figure

    def h(self, level: int, text: str) -> None:
        """A heading; level 2 headings are listed in the table of contents."""
        if level == 2:
            anchor = f"s{len(self.toc) + 1}"
            self.toc.append((anchor, text))
            self.parts.append(f"<h2 id='{anchor}'>{html.escape(text)}</h2>")
        else:
            self.parts.append(f"<h{level}>{html.escape(text)}</h{level}>")

    def slot(self) -> int:
        """A place to fill later (e.g. the summary at the top, known only at the end)."""
        self.parts.append("")
        return len(self.parts) - 1

    def p(self, text: str, cls: str = "") -> None:
        """A paragraph of plain text (escaped)."""
        attr = f' class="{cls}"' if cls else ""
        self.parts.append(f"<p{attr}>{html.escape(text)}</p>")

    def raw(self, text: str) -> None:
        """HTML as is."""
        self.parts.append(text)

    def figure(self, fig: Figure, name: str, alt: str) -> str:
        """Draw ``fig`` at the page's dpi, write it as ``<name>.png`` and return an embedded ``<figure>`` of it."""
        fig.set_dpi(self.dpi)
        canvas: RgbaCanvas = FigureCanvasAgg(fig)
        canvas.draw()
        return self.png(png_bytes(np.asarray(canvas.buffer_rgba(), dtype=np.uint8)), name, alt)

    def png(self, data: bytes, name: str, alt: str) -> str:
        """Write ``data`` (a PNG) as ``<name>.png`` and return an embedded ``<figure>`` of it."""
        path = self.out_dir / f"{name}.png"
        path.write_bytes(data)
        self.figures.append(path)
        encoded = base64.b64encode(data).decode("ascii")
        return f'<figure><img src="data:image/png;base64,{encoded}" alt="{html.escape(alt)}"></figure>'

    def table(self, table_html: str) -> None:
        """A table that scrolls sideways on its own instead of widening the page."""
        self.parts.append(f'<div class="scroll">{table_html}</div>')

    def render(self, title: str) -> str:
        """The whole page: head with the stylesheet, the body, and the inline script when needed."""
        script = interactive.script() if self.interactive else ""
        return ("<!DOCTYPE html><html><head><meta charset='utf-8'>"
                f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
                + "\n".join(self.parts) + script + "</body></html>\n")
