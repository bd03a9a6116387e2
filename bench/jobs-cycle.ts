/**
 * What the in-process job benches share: core's services on a store (no HTTP), and one cycle of
 * `round` submits plus one lease carrying the previous cycle's completions, as the SDK's worker
 * sends them.
 */
import { JobService, QueueService, type Store, systemClock } from "../src/core/index.js";
import { cryptoIdSource } from "../src/server/ids.js";
import { type SqliteStore, type SqliteStoreOptions, openSqliteStore } from "../src/stores/sqlite/sqlite-store.js";

/** Core's queue and job services on `store`, as the server builds them (system clock, random ids). */
export function jobServices(store: Store): { queues: QueueService; jobs: JobService } {
  const ids = cryptoIdSource();
  const queues = new QueueService({ store, clock: systemClock, ids, senderId: "bench" });
  return { queues, jobs: new JobService({ store, queues, clock: systemClock, ids, senderId: "bench" }) };
}

export type CompletionAck = { kind: "complete"; id: string; leaseId: string; output: unknown };

export interface JobsCycle {
  store: SqliteStore;
  /** Submits `round` jobs and leases as many, completing `acks` in the lease; returns the next completions. */
  cycle(acks: CompletionAck[]): Promise<CompletionAck[]>;
}

export function openJobsCycle(options: { store: SqliteStoreOptions; round: number; inputBytes: number }): JobsCycle {
  const store = openSqliteStore(options.store);
  const { jobs } = jobServices(store);
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
