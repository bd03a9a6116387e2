/** A QueueService on a real SQLite file with a manual clock and deterministic ids. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.js";
import { SluiceError } from "../../src/core/errors.js";
import type { IdSource } from "../../src/core/ids.js";
import { QueueService } from "../../src/core/queue-service.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";

export interface ServiceHarness {
  service: QueueService;
  clock: ManualClock;
  close(): Promise<void>;
}

export function counterIds(): IdSource {
  let n = 0;
  return {
    messageId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`,
    receiptToken: () => `token${String(++n).padStart(8, "0")}`,
  };
}

export function openServiceHarness(): ServiceHarness {
  const dir = mkdtempSync(join(tmpdir(), "sluice-core-"));
  const store = openSqliteStore({ filename: join(dir, "sluice.db") });
  const clock = new ManualClock();
  const service = new QueueService({ store, clock, ids: counterIds(), senderId: "000000000000" });
  return {
    service,
    clock,
    async close() {
      service.waiters.closeAll();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Lets pending promise callbacks and setImmediate-scheduled group commits run. */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
}

/**
 * Checks that `pending` is still unsettled when the clock has moved `ms - 1` ms, then moves it the
 * last millisecond and returns what it resolves with: "woken exactly when due, not before".
 */
export async function settlesAfter<T>(clock: ManualClock, ms: number, pending: Promise<T>): Promise<T> {
  let settled = false;
  const observed = pending.finally(() => (settled = true));
  clock.advance(ms - 1);
  await settle(10);
  if (settled) throw new Error(`expected the promise to settle after ${ms} ms, not before`);
  clock.advance(1);
  return observed;
}

/** The core error a promise rejects with (fails if it resolves or throws something else). */
export async function errorOf(p: Promise<unknown>): Promise<SluiceError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SluiceError) return err;
    throw err;
  }
  throw new Error("expected an error");
}

/** The core error code a promise rejects with (fails if it resolves or throws something else). */
export async function errorCode(p: Promise<unknown>): Promise<string> {
  return (await errorOf(p)).code;
}
