"""PNG encoding of figures and painted grids.

Pillow's encoder (what ``savefig`` uses) tries every filter on every row; on the report's large grid figures
(2,350 x 1,990 pixels) that takes several times longer than drawing them. Here every row gets the "up"
filter, which turns the flat areas of a figure into zeros, and zlib at a low level deflates bands of rows in
parallel threads (zlib lets go of the GIL), joined into one stream as pigz does: bench/README.md has the times.
"""

from __future__ import annotations

import os
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

import numpy as np
import numpy.typing as npt

#: Raw images above this many bytes are deflated in parallel bands.
PARALLEL_BYTES = 4 * 2**20


class RgbaCanvas(Protocol):
    """What is used here of matplotlib's ``FigureCanvasAgg`` (whose methods have no annotations): draw the figure,
    then read its pixels (height, width, 4 bytes: RGBA) in place."""

    def draw(self) -> None: ...

    def buffer_rgba(self) -> memoryview: ...


def _deflate(data: memoryview, level: int, last: bool) -> bytes:
    """Raw deflate blocks of ``data``; a band that is not the last ends on a byte boundary (sync flush)."""
    band = zlib.compressobj(level, zlib.DEFLATED, -15)
    return band.compress(data) + band.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)


def zlib_stream(data: npt.NDArray[np.uint8], level: int = 1, bands: int | None = None) -> bytes:
    """The zlib stream of ``data`` (contiguous bytes), its bands deflated in ``bands`` threads (default: one per
    CPU, up to 4, for data above :data:`PARALLEL_BYTES`)."""
    raw = data.data.cast("B")
    if bands is None:
        bands = min(os.cpu_count() or 1, 4) if raw.nbytes > PARALLEL_BYTES else 1
    cuts = [raw.nbytes * k // bands for k in range(bands + 1)]
    with ThreadPoolExecutor(bands) as pool:
        parts = pool.map(_deflate, [raw[a:b] for a, b in zip(cuts, cuts[1:], strict=False)], [level] * bands,
                         [k == bands - 1 for k in range(bands)])
        checksum = zlib.adler32(raw)  # meanwhile
        body = b"".join(parts)
    return b"\x78\x01" + body + struct.pack(">I", checksum)


def png_bytes(pixels: npt.NDArray[np.uint8], level: int = 1, bands: int | None = None) -> bytes:
    """``pixels`` (height, width, 3 or 4 channels: RGB or RGBA, uint8) as a PNG: every row filtered "up" (its
    difference to the row above: flat areas and an opaque alpha channel become zeros), deflated at zlib
    ``level`` by :func:`zlib_stream`."""
    height, width, channels = pixels.shape
    rows = np.ascontiguousarray(pixels).reshape(height, width * channels)
    raw = np.empty((height, width * channels + 1), np.uint8)
    raw[:, 0] = 2  # filter type "up"
    raw[0, 1:] = rows[0]
    np.subtract(rows[1:], rows[:-1], out=raw[1:, 1:])  # modulo 256, as the filter says

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2 if channels == 3 else 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib_stream(raw, level, bands))
            + chunk(b"IEND", b""))
