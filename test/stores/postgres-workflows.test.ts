/**
 * The workflow cases of the conformance suite (the event log, schedules) on the PostgreSQL store,
 * a fresh database per case: until the suite runs whole on PostgreSQL, this holds its store to them.
 * Tenants and start limits are not implemented on PostgreSQL yet: refused, checked here.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultJobQueueSettings } from "../../src/core/jobs/job-settings.js";
import type { Store } from "../../src/core/store.js";
import { openPostgresStore } from "../../src/stores/postgres/open.js";
import type { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import type { ConformanceContext } from "../../src/stores/testkit/conformance-context.js";
import { registerEventLogCases } from "../../src/stores/testkit/conformance-events.js";
import { registerScheduleCases } from "../../src/stores/testkit/conformance-schedules.js";
import { T0 } from "../../src/stores/testkit/conformance-context.js";
import { jobCaseKit } from "../../src/stores/testkit/conformance-jobs-kit.js";
import { createDatabase } from "../support/postgres.js";

describe("Store conformance (workflows): postgres", () => {
  let db: Awaited<ReturnType<typeof createDatabase>>;
  let store: PostgresStore;
  const others: PostgresStore[] = [];

  beforeEach(async () => {
    db = await createDatabase();
    store = await openPostgresStore({ url: db.url, poolSize: 4 });
  });
  afterEach(async () => {
    for (const s of others.splice(0)) await s.close();
    await store.close();
    await db.drop();
  });

  const context: ConformanceContext = {
    store: (): Store => store,
    async reopen() {
      await store.close();
      return (store = await openPostgresStore({ url: db.url, poolSize: 4 }));
    },
    async another() {
      const s = await openPostgresStore({ url: db.url, poolSize: 4 });
      others.push(s);
      return s;
    },
    test: (title, fn) => it(title, fn),
  };
  registerEventLogCases(context);
  registerScheduleCases(context);

  // Not implemented on PostgreSQL yet: refused with a clear error, never ignored, and nothing written.
  describe("refused until implemented: tenant, start limits", () => {
    const kit = jobCaseKit(() => store);
    it("start limits in a queue's settings are refused, and the settings stay as they were", async () => {
      const q = await kit.makeQueue();
      for (const limit of [{ rateLimitPerSecond: 5 }, { maxRunning: 2 }, { maxRunningPerTenant: 1 }]) {
        await expect(store.jobQueueSettingsPut({ queueId: q.id, settings: { ...defaultJobQueueSettings, ...limit }, nowMs: T0 })).rejects.toMatchObject({ code: "UnsupportedOperation" });
      }
      expect(await store.jobQueueSettingsGet({ queueId: q.id })).toBeUndefined();
      await store.jobQueueSettingsPut({ queueId: q.id, settings: { ...defaultJobQueueSettings, maxAttempts: 7 }, nowMs: T0 });
      expect((await store.jobQueueSettingsGet({ queueId: q.id }))?.maxAttempts).toBe(7);
    });
    it("a submit with tenant is refused, creating no job", async () => {
      const q = await kit.makeQueue();
      const parent = (await kit.submit(q)).job;
      await expect(kit.submit(q, { tenant: "customer-42" })).rejects.toMatchObject({ code: "UnsupportedOperation" });
      expect((await store.jobList({ queueId: q.id, limit: 10 })).map((j) => j.id)).toEqual([parent.id]);
    });
  });
});
