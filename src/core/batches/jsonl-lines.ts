/**
 * Splits a stream of byte chunks into lines without holding more than one line (and one chunk):
 * a 200 MB file is read in constant memory. `\n` ends a line (a `\r` before it is dropped); a
 * last line without one counts; an empty line is kept so the numbers match the file's.
 */

export type JsonlLine = { line: number; text: string } | { line: number; tooLong: true };

export async function* jsonlLines(chunks: AsyncIterable<Uint8Array>, lineMaxBytes: number): AsyncGenerator<JsonlLine> {
  const decoder = new TextDecoder("utf-8");
  let parts: Uint8Array[] = [];
  let partBytes = 0;
  let tooLong = false;
  let line = 0;
  const finish = (): JsonlLine => {
    line++;
    if (tooLong) {
      parts = [];
      partBytes = 0;
      tooLong = false;
      return { line, tooLong: true };
    }
    let bytes = concat(parts, partBytes);
    parts = [];
    partBytes = 0;
    if (bytes.length > 0 && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
    return { line, text: decoder.decode(bytes) };
  };
  const add = (piece: Uint8Array): void => {
    if (tooLong || piece.length === 0) return;
    if (partBytes + piece.length > lineMaxBytes + 1) {
      tooLong = true;
      parts = [];
      partBytes = 0;
      return;
    }
    parts.push(piece);
    partBytes += piece.length;
  };
  let sawAny = false;
  for await (const chunk of chunks) {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      add(chunk.subarray(start, nl));
      yield finish();
      start = nl + 1;
      sawAny = false;
    }
    if (start < chunk.length) {
      add(chunk.subarray(start));
      sawAny = true;
    }
  }
  if (sawAny) yield finish();
}

/** Newline count and whether the bytes end without one: a file's lines, counted as it streams in. */
export function countNewlines(chunk: Uint8Array): number {
  let n = 0;
  for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) n++;
  return n;
}

function concat(parts: Uint8Array[], bytes: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(bytes);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
