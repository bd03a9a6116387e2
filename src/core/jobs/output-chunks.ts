/**
 * Streamed output (POST /v1/jobs/{id}/output): the checks on a request's chunks, and slicing the
 * stored batches (each a JSON array as sent) into single chunks for GET …/output-chunks.
 */
import { fail } from "../errors.js";

export const outputLimits = {
  /** Chunks in one request. */
  maxChunks: 1000,
  /** One request's chunks, as JSON. */
  maxBytes: 1024 * 1024,
  /** Chunks in one answer of GET …/output-chunks. */
  readPageMax: 1000,
} as const;

/** The request's chunks as one JSON array, checked: 1–1000 chunks, ≤ 1 MiB of JSON. */
export function checkOutputChunks(chunks: unknown): { chunksJson: string; count: number } {
  if (!Array.isArray(chunks)) fail("ValidationFailed", "chunks must be an array of JSON values.");
  if (chunks.length === 0) fail("ValidationFailed", "chunks must hold at least 1 chunk.");
  if (chunks.length > outputLimits.maxChunks) fail("ValidationFailed", `chunks holds at most ${outputLimits.maxChunks} chunks; got ${chunks.length}.`);
  const chunksJson = JSON.stringify(chunks);
  const bytes = Buffer.byteLength(chunksJson);
  if (bytes > outputLimits.maxBytes) fail("ValidationFailed", `chunks is ${bytes} bytes of JSON; at most ${outputLimits.maxBytes}.`);
  return { chunksJson, count: chunks.length };
}

/** The single chunks (JSON texts) from `fromIndex`, at most `limit`, of batches in index order. */
export function chunksFrom(batches: ReadonlyArray<{ index: number; chunksJson: string }>, fromIndex: number, limit: number): string[] {
  const out: string[] = [];
  for (const b of batches) {
    const chunks = JSON.parse(b.chunksJson) as unknown[];
    for (let i = Math.max(0, fromIndex - b.index); i < chunks.length && out.length < limit; i++) out.push(JSON.stringify(chunks[i]));
    if (out.length >= limit) break;
  }
  return out;
}
