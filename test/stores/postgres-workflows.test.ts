/**
 * The workflow cases of the conformance suite (the event log, schedules) on the PostgreSQL store
 * again, each on a fresh database rather than emptied tables (postgres-conformance.test.ts): ids
 * and sequences start from nothing, as on a new deployment.
 */
import { afterEach, beforeEach, describe, it } from "vitest";
import type { Store } from "../../src/core/store.js";
import { openPostgresStore } from "../../src/stores/postgres/open.js";
import type { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import type { ConformanceContext } from "../../src/stores/testkit/conformance-context.js";
import { registerEventLogCases } from "../../src/stores/testkit/conformance-events.js";
import { registerScheduleCases } from "../../src/stores/testkit/conformance-schedules.js";
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
});
