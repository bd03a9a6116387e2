/**
 * Job dependencies, start limits and tenants on PostgreSQL across nodes: two store handles on one
 * database (two nodes), made to overlap on purpose. A third connection holds the event log's append lock, which every
 * job transition takes last and holds to commit: each node's transaction runs up to it (or up to
 * a row lock the other holds), the test sees both waiting in pg_stat_activity, then lets them go.
 * Without the store's locks, both would decide on what they read before either committed.
 */
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { JobChange, JobLeaseParams, JobLeaseResult } from "../../src/core/job-store.js";
import type { QueueRecord } from "../../src/core/queue.js";
import { eventAppendLockKey } from "../../src/stores/postgres/event-log.js";
import { openPostgresStore } from "../../src/stores/postgres/open.js";
import type { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { T0, act } from "../../src/stores/testkit/conformance-context.js";
import { jobCaseKit, leaseParamsFor } from "../../src/stores/testkit/conformance-jobs-kit.js";
import { createDatabase } from "../support/postgres.js";
import { waitFor } from "../support/wait.js";

let db: Awaited<ReturnType<typeof createDatabase>>;
let a: PostgresStore;
let b: PostgresStore;

beforeEach(async () => {
  db = await createDatabase();
  a = await openPostgresStore({ url: db.url, poolSize: 4 });
  b = await openPostgresStore({ url: db.url, poolSize: 4 });
});
afterEach(async () => {
  await a.close();
  await b.close();
  await db.drop();
});

/**
 * Runs `start` while the event log's append lock is held elsewhere, and lets go once `waiters`
 * sessions of the database wait on a lock: the operations it started overlap for certain.
 */
async function overlapping<T>(waiters: number, start: () => Promise<T>): Promise<T> {
  const holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  try {
    await holder.query("BEGIN");
    await holder.query("SELECT pg_advisory_xact_lock($1)", [eventAppendLockKey]);
    const running = start();
    running.catch(() => undefined); // awaited below
    await waitFor(
      async () => {
        const { rows } = await holder.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
        return rows[0]!.n >= waiters;
      },
      { what: `${waiters} sessions waiting on a lock` },
    );
    await holder.query("COMMIT");
    return await running;
  } finally {
    await holder.end();
  }
}

const lease = (store: PostgresStore, queue: QueueRecord, token: string, max = 1): Promise<JobLeaseResult> => jobCaseKit(() => store).lease(queue, { max, token: `${queue.id}.${token}` });

function released(change: JobChange, childId: string): boolean {
  return (change.followOn ?? []).some((f) => f.job.id === childId);
}

describe("dependencies across two nodes", () => {
  it("a child is released exactly once when its two parents succeed on two nodes at once", async () => {
    const kit = jobCaseKit(() => a);
    const q = await kit.makeQueue();
    for (let round = 0; round < 3; round++) {
      const p1 = (await kit.submit(q)).job;
      const p2 = (await kit.submit(q)).job;
      const child = (await kit.submit(q, { dependsOn: [p1.id, p2.id], onParentFailure: "fail" })).job;
      expect(child.status).toBe("waiting");
      const [l1] = (await lease(a, q, `r${round}-a-aaaaaaaa`)).leased;
      const [l2] = (await lease(b, q, `r${round}-b-aaaaaaaa`)).leased;
      expect([l1!.id, l2!.id].sort()).toEqual([p1.id, p2.id].sort());
      const done = (store: PostgresStore, id: string, token: string) => act(store, { kind: "complete", id, leaseToken: token, nowMs: T0, outputJson: '"ok"', resultTtlSeconds: 60 });
      const [c1, c2] = await overlapping(2, () => Promise.all([done(a, l1!.id, l1!.leaseToken), done(b, l2!.id, l2!.leaseToken)]));
      expect([released(c1, child.id), released(c2, child.id)].filter(Boolean)).toHaveLength(1);
      expect((await b.jobGet({ id: child.id }))!.status).toBe("queued");
      const events = (await a.jobEventList({ afterId: 0, limit: 1000, jobId: child.id })).map((e) => e.type);
      expect(events).toEqual(["job.waiting", "job.queued"]);
      const next = await lease(b, q, `r${round}-c-aaaaaaaa`);
      expect(next.leased.map((j) => j.id)).toEqual([child.id]);
      await done(b, child.id, next.leased[0]!.leaseToken);
    }
  });

  it("a child submitted on one node while its parent ends on another is not left waiting", async () => {
    const kit = jobCaseKit(() => a);
    const q = await kit.makeQueue();
    const parent = (await kit.submit(q)).job;
    const [l] = (await lease(a, q, "p-aaaaaaaa")).leased;
    const [, submitted] = await overlapping(2, () =>
      Promise.all([
        act(a, { kind: "complete", id: parent.id, leaseToken: l!.leaseToken, nowMs: T0, outputJson: '"ok"', resultTtlSeconds: 60 }),
        // Started second: the parent's end holds its row (and waits for the event lock) first.
        waitFor(async () => {
          const { rows } = await a.db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
          return rows[0]!.n >= 1;
        }).then(() => jobCaseKit(() => b).submit(q, { dependsOn: [parent.id], onParentFailure: "fail" })),
      ]),
    );
    expect(submitted.job.status).toBe("queued");
    expect((await lease(b, q, "c-aaaaaaaa")).leased.map((j) => j.id)).toEqual([submitted.job.id]);
  });
});

describe("limits and tenants across two nodes", () => {
  const limitedLease = (store: PostgresStore, queue: QueueRecord, token: string, limits: JobLeaseParams["limits"], max = 10): Promise<JobLeaseResult> =>
    store.jobLease({ ...leaseParamsFor(queue, `${queue.id}.${token}`), max, limits });

  it("maxRunning holds for two nodes leasing at once", async () => {
    const kit = jobCaseKit(() => a);
    const q = await kit.makeQueue();
    for (let i = 0; i < 10; i++) await kit.submit(q);
    const limits = { maxRunning: 3 };
    const [ra, rb] = await overlapping(2, () => Promise.all([limitedLease(a, q, "a-aaaaaaaa", limits), limitedLease(b, q, "b-aaaaaaaa", limits)]));
    expect(ra.leased.length + rb.leased.length).toBe(3);
    expect((await a.jobCountByStatus({ queueId: q.id })).running).toBe(3);
    expect([ra.limited?.by, rb.limited?.by]).toEqual(["maxRunning", "maxRunning"]);
  });

  it("rateLimitPerSecond's bucket is one for every node", async () => {
    const kit = jobCaseKit(() => a);
    const q = await kit.makeQueue();
    for (let i = 0; i < 10; i++) await kit.submit(q);
    const limits = { rateLimitPerSecond: 4 };
    const [ra, rb] = await overlapping(2, () => Promise.all([limitedLease(a, q, "a-aaaaaaaa", limits), limitedLease(b, q, "b-aaaaaaaa", limits)]));
    expect(ra.leased.length + rb.leased.length).toBe(4);
    const held = ra.leased.length === 0 ? ra : rb;
    expect(held.limited).toEqual({ by: "rateLimitPerSecond", retryAtMs: T0 + 250 });
  });

  it("two nodes leasing at once serve two tenants, not one twice", async () => {
    const kit = jobCaseKit(() => a);
    const q = await kit.makeQueue();
    for (let i = 0; i < 5; i++) await kit.submit(q, { tenant: "alpha" });
    for (let i = 0; i < 5; i++) await kit.submit(q, { tenant: "beta" });
    const [ra, rb] = await overlapping(2, () => Promise.all([lease(a, q, "a-aaaaaaaa"), lease(b, q, "b-aaaaaaaa")]));
    expect([...ra.leased, ...rb.leased].map((j) => j.tenant).sort()).toEqual(["alpha", "beta"]);
  });
});
