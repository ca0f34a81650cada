"""Drawings as PNG images, for the faces that cannot run the page's script (the offline HTML export, MCP).

The page draws an ``attention-heads`` drawing itself (static/heads.js); here the same bytes become one
PNG: every drawn head's heatmap in a grid (rows: layers, columns: heads), coloured with the same
viridis scale, each head enlarged to whole pixels per token. No plotting library: zlib and struct.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from tools.core.results import Drawing

#: The polynomial fit of viridis that heads.js uses too (coefficients of t^0 .. t^6 per channel).
VIRIDIS = np.array([
    [0.2777273272234177, 0.1050930431085774, -0.3308618287255563, -4.634230498983486, 6.228269936347081,
     4.776384997670288, -5.435455855934631],
    [0.005407344544966578, 1.404613529898575, 0.214847559468213, -5.799100973351585, 14.17993336680509,
     -13.74514537774601, 4.645852612178535],
    [0.3340998053353061, 1.384590162594685, 0.09509516302823659, -19.33244095627987, 56.69055260068105,
     -65.35303263337234, 26.3124352495832],
])
#: Pixels between heads, and the least pixels a head is drawn with.
GAP, MIN_SIDE = 4, 48


def viridis_table() -> np.ndarray:
    """256 x 3 uint8: the colour of each weight byte."""
    t = np.arange(256) / 255.0
    powers = t[:, None] ** np.arange(VIRIDIS.shape[1])[None, :]
    return np.rint(np.clip(powers @ VIRIDIS.T, 0, 1) * 255).astype(np.uint8)


def png(rgb: np.ndarray) -> bytes:
    """An (height, width, 3) uint8 image as PNG bytes."""
    height, width, _ = rgb.shape
    rows = np.concatenate([np.zeros((height, 1), np.uint8), rgb.reshape(height, width * 3)], axis=1)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows.tobytes(), 9))
            + chunk(b"IEND", b""))


def heads_png(drawing: Drawing) -> bytes:
    """An ``attention-heads`` drawing as one PNG: a grid of heatmaps, rows layers and columns heads."""
    rows, cols, n, _ = drawing.meta["shape"]
    weights = np.frombuffer(drawing.data, dtype=np.uint8).reshape(rows, cols, n, n)
    scale = max(1, -(-MIN_SIDE // n))
    side = n * scale
    image = np.full((rows * side + (rows + 1) * GAP, cols * side + (cols + 1) * GAP, 3), 255, np.uint8)
    colours = viridis_table()
    for r in range(rows):
        for c in range(cols):
            cell = colours[weights[r, c]].repeat(scale, axis=0).repeat(scale, axis=1)
            top, left = GAP + r * (side + GAP), GAP + c * (side + GAP)
            image[top:top + side, left:left + side] = cell
    return png(image)


def drawing_png(drawing: Drawing) -> bytes:
    """A drawing as PNG bytes (refused for a kind this module cannot draw)."""
    if drawing.kind == "attention-heads":
        return heads_png(drawing)
    raise ValueError(f"no PNG for drawings of kind {drawing.kind!r}")
