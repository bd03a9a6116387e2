/**
 * The blob sweep, on the injected clock and on every node: deletes blobs nothing holds once they
 * are due (blob-service.ts), a slice a pass, passes back to back while slices come back full.
 */
import type { Clock } from "../clock.js";
import { type PassLoop, startPassLoop } from "../pass-loop.js";
import type { BlobService } from "./blob-service.js";

export type BlobSweeper = PassLoop;

export const blobSweepIntervalMs = 60_000;

export function startBlobSweeper(p: { blobs: BlobService; clock: Clock; onError: (err: unknown) => void; intervalMs?: number }): BlobSweeper {
  const intervalMs = p.intervalMs ?? blobSweepIntervalMs;
  return startPassLoop({
    clock: p.clock,
    pass: async () => ((await p.blobs.sweep()).full ? 0 : intervalMs),
    retryMs: intervalMs,
    onChange: () => () => {},
    onError: p.onError,
  });
}
