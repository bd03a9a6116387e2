"""The "model": Sobel edge detection on a binary PGM (P5) image, in plain Python — the same
algorithm as edges.js, byte for byte, so either worker gives the same picture."""
from __future__ import annotations

import math
from typing import NamedTuple


class Image(NamedTuple):
    width: int
    height: int
    pixels: bytes


def parse_pgm(data: bytes) -> Image:
    """A P5 PGM's size and one byte per pixel (maxval ≤ 255)."""
    at = 0

    def token() -> str:
        nonlocal at
        while True:
            while at < len(data) and chr(data[at]).isspace():
                at += 1
            if at >= len(data) or data[at] != 0x23:  # a comment runs to the end of its line
                break
            while at < len(data) and data[at] != 0x0A:
                at += 1
        start = at
        while at < len(data) and not chr(data[at]).isspace():
            at += 1
        return data[start:at].decode("latin-1")

    if token() != "P5":
        raise ValueError("not a binary PGM (P5) image")
    width, height, maxval = int(token()), int(token()), int(token())
    if not (width > 0 and height > 0 and 0 < maxval < 256):
        raise ValueError("unsupported PGM header")
    pixels = data[at + 1 : at + 1 + width * height]
    if len(pixels) != width * height:
        raise ValueError("truncated PGM image")
    return Image(width, height, pixels)


def sobel(img: Image) -> Image:
    """Gradient magnitude by the Sobel operator, clipped to 0–255; the border stays black."""
    w, h, px = img
    out = bytearray(w * h)
    for y in range(1, h - 1):
        for x in range(1, w - 1):
            def p(dx: int, dy: int) -> int:
                return px[(y + dy) * w + x + dx]

            gx = p(1, -1) + 2 * p(1, 0) + p(1, 1) - p(-1, -1) - 2 * p(-1, 0) - p(-1, 1)
            gy = p(-1, 1) + 2 * p(0, 1) + p(1, 1) - p(-1, -1) - 2 * p(0, -1) - p(1, -1)
            out[y * w + x] = min(255, math.floor(math.sqrt(gx * gx + gy * gy)))
    return Image(w, h, bytes(out))


def write_pgm(img: Image) -> bytes:
    return f"P5\n{img.width} {img.height}\n255\n".encode() + img.pixels


def edge_count(img: Image) -> int:
    """Pixels bright enough to count as an edge."""
    return sum(1 for v in img.pixels if v >= 128)
