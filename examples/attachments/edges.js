/**
 * The "model": Sobel edge detection on a binary PGM (P5) image, in plain JavaScript — the same
 * algorithm as edges.py, byte for byte, so either worker gives the same picture.
 */

/** Parses a P5 PGM: its size and one byte per pixel (maxval ≤ 255). */
export function parsePgm(bytes) {
  let at = 0;
  const token = () => {
    for (;;) {
      while (at < bytes.length && /\s/.test(String.fromCharCode(bytes[at]))) at++;
      if (bytes[at] !== 0x23) break; // a comment runs to the end of its line
      while (at < bytes.length && bytes[at] !== 0x0a) at++;
    }
    const start = at;
    while (at < bytes.length && !/\s/.test(String.fromCharCode(bytes[at]))) at++;
    return String.fromCharCode(...bytes.subarray(start, at));
  };
  if (token() !== "P5") throw new Error("not a binary PGM (P5) image");
  const [width, height, maxval] = [Number(token()), Number(token()), Number(token())];
  if (!(width > 0 && height > 0 && maxval > 0 && maxval < 256)) throw new Error("unsupported PGM header");
  const pixels = bytes.subarray(at + 1, at + 1 + width * height);
  if (pixels.length !== width * height) throw new Error("truncated PGM image");
  return { width, height, pixels };
}

/** Gradient magnitude by the Sobel operator, clipped to 0–255; the border stays black. */
export function sobel({ width, height, pixels }) {
  const out = new Uint8Array(width * height);
  const p = (x, y) => pixels[y * width + x];
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const gx = p(x + 1, y - 1) + 2 * p(x + 1, y) + p(x + 1, y + 1) - p(x - 1, y - 1) - 2 * p(x - 1, y) - p(x - 1, y + 1);
      const gy = p(x - 1, y + 1) + 2 * p(x, y + 1) + p(x + 1, y + 1) - p(x - 1, y - 1) - 2 * p(x, y - 1) - p(x + 1, y - 1);
      out[y * width + x] = Math.min(255, Math.floor(Math.sqrt(gx * gx + gy * gy)));
    }
  }
  return { width, height, pixels: out };
}

export function writePgm({ width, height, pixels }) {
  const header = new TextEncoder().encode(`P5\n${width} ${height}\n255\n`);
  const out = new Uint8Array(header.length + pixels.length);
  out.set(header);
  out.set(pixels, header.length);
  return out;
}

/** Pixels bright enough to count as an edge. */
export function edgeCount({ pixels }) {
  return pixels.reduce((n, v) => n + (v >= 128 ? 1 : 0), 0);
}
