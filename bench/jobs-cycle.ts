/**
 * The in-process job lifecycle the jobs benches share: core's services on a SQLite store (no
 * HTTP), and one cycle of `round` submits plus one lease carrying the previous cycle's
 * completions, as the SDK's worker sends them.
 */
import { JobService, QueueService, systemClock } from "../src/core/index.js";
import { cryptoIdSource } from "../src/server/ids.js";
import { type SqliteStore, type SqliteStoreOptions, openSqliteStore } from "../src/stores/sqlite/sqlite-store.js";

export type CompletionAck = { kind: "complete"; id: string; leaseId: string; output: unknown };

export interface JobsCycle {
  store: SqliteStore;
  /** Submits `round` jobs and leases as many, completing `acks` in the lease; returns the next completions. */
  cycle(acks: CompletionAck[]): Promise<CompletionAck[]>;
}

export function openJobsCycle(options: { store: SqliteStoreOptions; round: number; inputBytes: number }): JobsCycle {
  const store = openSqliteStore(options.store);
  const ids = cryptoIdSource();
  const queues = new QueueService({ store, clock: systemClock, ids, senderId: "bench" });
  const jobs = new JobService({ store, queues, clock: systemClock, ids, senderId: "bench" });
  const input = "x".repeat(options.inputBytes);
  return {
    store,
    async cycle(acks) {
      const submits = Array.from({ length: options.round }, () => jobs.submit("", "q", { input }));
      const { leased } = await jobs.leaseWithAcks("", "q", { max: options.round }, acks);
      await Promise.all(submits);
      return leased.map((j) => ({ kind: "complete", id: j.id, leaseId: j.leaseToken!, output: { ok: true } }));
    },
  };
}
