"""PNG encoding of figures and painted grids.

Pillow's encoder (what ``savefig`` uses) tries every filter on every row; on the report's large grid figures
(2,350 x 1,990 pixels) that takes several times longer than drawing them. Here every row gets the "up"
filter, which turns the flat areas of a figure into zeros, and zlib at a low level: bench/README.md has the
times and sizes.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np


def png_bytes(pixels: np.ndarray, level: int = 1) -> bytes:
    """``pixels`` (height, width, 3 or 4 channels: RGB or RGBA, uint8) as a PNG: every row filtered "up" (its
    difference to the row above: flat areas and an opaque alpha channel become zeros), deflated at zlib
    ``level``."""
    height, width, channels = pixels.shape
    rows = np.ascontiguousarray(pixels).reshape(height, width * channels)
    raw = np.empty((height, width * channels + 1), np.uint8)
    raw[:, 0] = 2  # filter type "up"
    raw[0, 1:] = rows[0]
    np.subtract(rows[1:], rows[:-1], out=raw[1:, 1:])  # modulo 256, as the filter says

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2 if channels == 3 else 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(memoryview(raw), level))
            + chunk(b"IEND", b""))
