"""PNG encoding of one report grid: Pillow (what ``savefig`` uses) against ``analysis.render.png.png_bytes``.

Paints one grid of the 25,000-trial report's shape (5 panels of 20 x 25 cells: 2,350 x 1,990 pixels) with
``analysis.render.grids.GridPainter``, then encodes its pixels with each encoder in turn, round-robin, and prints the
median time and size of each and the median of the per-round ratios against Pillow.

    .venv/bin/python bench/png_encode.py --rounds 7
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
from collections.abc import Callable

import numpy as np
import polars as pl
from PIL import Image

from analysis.render.grids import GridPainter
from analysis.render.png import png_bytes


def grid_pixels() -> np.ndarray:
    """The RGBA pixels of one painted grid (random cells, 5% not run)."""
    rng = np.random.default_rng(0)
    rows = [(a, 8 * (i + 1), float(lr), *np.sort(rng.random(3)))
            for a in ("BERT", "MTE", "NAP", "NON", "sum") for i in range(20) for lr in np.geomspace(0.3, 3e-6, 25)]
    rgb = pl.DataFrame([r for r in rows if rng.random() > 0.05],
                       schema=["architecture", "d_model", "learning_rate", "r", "g", "b"], orient="row")
    painted = GridPainter().paint(rgb, "architecture", "d_model", "learning_rate", "bench · val_accuracy")
    return np.asarray(Image.open(io.BytesIO(painted.png)))


def pillow(pixels: np.ndarray) -> bytes:
    """As matplotlib's ``savefig`` writes a PNG (Pillow, its default compression)."""
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="png")
    return out.getvalue()


def main() -> None:
    """Time the encoders round-robin and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    pixels = grid_pixels()
    encoders: dict[str, Callable[[np.ndarray], bytes]] = {
        "Pillow (savefig)": pillow,
        "png_bytes, 1 band": lambda p: png_bytes(p, bands=1),
        "png_bytes, 2 bands": lambda p: png_bytes(p, bands=2),
    }
    times: dict[str, list[float]] = {name: [] for name in encoders}
    sizes = {name: len(encode(pixels)) for name, encode in encoders.items()}
    for _ in range(args.rounds):
        for name, encode in encoders.items():
            start = time.perf_counter()
            encode(pixels)
            times[name].append(time.perf_counter() - start)
    print(f"{pixels.shape[1]} x {pixels.shape[0]} pixels, RGBA; {args.rounds} rounds\n")
    print("| encoder | median (ms) | / Pillow (median of rounds) | size (KiB) |")
    print("|---|---|---|---|")
    base = times["Pillow (savefig)"]
    for name, ts in times.items():
        ratio = statistics.median(t / b for t, b in zip(ts, base, strict=True))
        print(f"| {name} | {1000 * statistics.median(ts):.0f} | {ratio:.2f} | {sizes[name] / 1024:.0f} |")


if __name__ == "__main__":
    main()
