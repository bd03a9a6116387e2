/**
 * How often one job's walk (submit → lease → complete, through JobService as the server builds
 * it) crosses from core into the store, on both stores: each crossing is a round trip to
 * PostgreSQL and a turn of SQLite's group commit. The store is wrapped in a Proxy that counts
 * every method called on it (its notifier is in-process and not a crossing).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import type { IdSource } from "../../src/core/ids.js";
import { JobService } from "../../src/core/jobs/job-service.js";
import { QueueService } from "../../src/core/queue-service.js";
import type { Store } from "../../src/core/store.js";
import { openPostgresStore } from "../../src/stores/postgres/open.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { usePostgresDatabase } from "../support/postgres.js";

const database = usePostgresDatabase();

/** The store, and the names of the methods called on it since `calls` was last emptied. */
function counted(store: Store): { store: Store; calls: string[] } {
  const calls: string[] = [];
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== "function" || typeof key !== "string") return value;
      return (...args: unknown[]) => {
        calls.push(key);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls };
}

/** Ids unique across the file's nodes. */
let n = 0;
function ids(): IdSource {
  return {
    messageId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`,
    receiptToken: () => `walktok${String(++n).padStart(8, "0")}`,
  };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const opens: Array<[string, () => Promise<Store>]> = [
  [
    "sqlite",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "sluice-walk-"));
      const store = openSqliteStore({ filename: join(dir, "sluice.db"), pipelinedSync: true });
      cleanups.push(async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      });
      return store;
    },
  ],
  [
    "postgres",
    async () => {
      const store = await openPostgresStore({ url: database.url, poolSize: 4 });
      cleanups.push(() => store.close());
      return store;
    },
  ],
];

/** Core's services as the server builds them (src/server/index.ts) on `store`, on a manual clock. */
function node(store: Store, clock: ManualClock): JobService {
  const queues = new QueueService({ store, clock, ids: ids(), senderId: "000000000000" });
  const jobs = new JobService({ store, queues, clock, ids: ids(), senderId: "000000000000", random: () => 0.5 });
  cleanups.unshift(async () => {
    jobs.close();
    queues.close();
  });
  return jobs;
}

/** One job submitted, leased and completed; the store methods it called, in order. */
async function walk(jobs: JobService, calls: string[], queueName: string): Promise<string[]> {
  calls.length = 0;
  const { job } = await jobs.submit("", queueName, { input: { n: 1 } });
  const [leased] = await jobs.lease("", queueName, { max: 1 });
  expect(leased?.id).toBe(job.id);
  const done = await jobs.complete("", job.id, { leaseId: leased!.leaseToken, output: { ok: true } });
  expect(done.status).toBe("succeeded");
  return [...calls];
}

describe.each(opens)("%s: a job's walk", (name, open) => {
  test("submit → lease → complete crosses into the store at most 4 times, however long since the last", async () => {
    const { store, calls } = counted(await open());
    const clock = new ManualClock();
    const jobs = node(store, clock);
    const queueName = `walk-${name}`;
    // The first walk makes the queue and its dead-letter queue; the next ones find them.
    const first = await walk(jobs, calls, queueName);
    const next = await walk(jobs, calls, queueName);
    expect(next.length, next.join(", ")).toBeLessThanOrEqual(4);
    // Nothing about the queue changed, so nothing about it is read again a minute later.
    clock.advance(60_000);
    const later = await walk(jobs, calls, queueName);
    expect(later.length, later.join(", ")).toBeLessThanOrEqual(4);
    expect(later).toEqual(next);
    // A node started on the existing queue reads the queue, its settings and its dead-letter
    // queue once, on its first walk.
    const restarted = node(store, clock);
    expect(await walk(restarted, calls, queueName)).toEqual(["queueGet", "jobQueueSettingsGet", "queueGet", ...next]);
    expect(await walk(restarted, calls, queueName)).toEqual(next);
    // A settings change, made on any node, is read again once (with the queue's record).
    await jobs.updateQueueSettings("", queueName, { maxAttempts: 5 });
    expect(await walk(restarted, calls, queueName)).toEqual(["queueGet", "jobQueueSettingsGet", ...next]);
    expect(first.length).toBeGreaterThan(next.length);
  });
});
