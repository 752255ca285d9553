"""Drawing: figures, grids, PNGs, HTML / Markdown tables and the self-contained page (imports data and stats).

* :mod:`~analysis.render.plots` - robustness and learning-curve figures, the fixed colour of each panel;
* :mod:`~analysis.render.grids` - the RGB hyperparameter grids (:class:`~analysis.render.grids.GridPainter`);
* :mod:`~analysis.render.interactive` - hover / click data and script of the grids;
* :mod:`~analysis.render.png` - fast PNG encoding;
* :mod:`~analysis.render.page` - the page under construction, one HTML file at the end;
* :mod:`~analysis.render.tables` - tables as HTML and Markdown;
* :mod:`~analysis.render.comparison` - `study compare`'s table as text, HTML and a figure.

Nothing here knows which sections a report has: that is :mod:`analysis.report`.
"""
