/**
 * Fair sharing's flows (docs/fair-queues.md) on SQLite: message_groups rows, served least first,
 * the ungrouped messages of a queue that has groups as one more flow named ''. Core's FairRounds
 * says which flow is next; shared by SQS's fair receive (receive.ts) and job leases between
 * tenants (limited-lease.ts).
 */
import type Database from "better-sqlite3";
import { FairRounds } from "../../core/fair-rounds.js";

/** Flows (and FIFO groups) read per page: writes happen between pages. */
export const flowsPerPage = 64;

export class SqliteFairFlows {
  private readonly sql;

  constructor(db: Database.Database) {
    this.sql = {
      hasGroups: db.prepare<[number], number>("SELECT 1 FROM message_groups WHERE queue_id = ? AND group_id > '' LIMIT 1").pluck(),
      // As arrays ([group_id, served]): better-sqlite3's object rows cost more per row.
      flowsPage: db
        .prepare<[number, number, number, string], [string, number]>(
          `SELECT group_id, served FROM message_groups
           WHERE queue_id = ? AND (served > ? OR (served = ? AND group_id > ?)) ORDER BY served, group_id LIMIT ${flowsPerPage}`,
        )
        .raw(),
      // The ungrouped flow joins at the lowest count (it can't bank credit while the queue had no
      // groups). `WHERE true`: SQLite's upsert after a SELECT needs a WHERE to parse.
      ungroupedFlowJoin: db.prepare<[number, number]>(
        `INSERT INTO message_groups (queue_id, group_id, served)
         SELECT ?, '', coalesce((SELECT min(served) FROM message_groups WHERE queue_id = ? AND group_id > ''), 0) WHERE true
         ON CONFLICT (queue_id, group_id) DO UPDATE SET served = max(served, excluded.served)`,
      ),
      served: db.prepare<[number, number, string]>("UPDATE message_groups SET served = served + ? WHERE queue_id = ? AND group_id = ?"),
    };
  }

  /** Whether the queue has message groups (a job queue's tenants): its receives and leases then share it fairly. */
  hasGroups(queueId: number): boolean {
    return this.sql.hasGroups.get(queueId) !== undefined;
  }

  /** Rounds over the queue's flows for `wanted` starts; `ungroupedReady`: the ungrouped flow joins them. */
  rounds(queueId: number, wanted: number, ungroupedReady: boolean): FairRounds {
    if (ungroupedReady) this.sql.ungroupedFlowJoin.run(queueId, queueId);
    return new FairRounds(wanted, () => this.flows(queueId));
  }

  /** Adds what the rounds served to each flow's count. */
  settle(queueId: number, rounds: FairRounds): void {
    for (const [flow, count] of rounds.servedBy) this.sql.served.run(count, queueId, flow);
  }

  /** The queue's flows in least-served order, a page at a time. */
  private *flows(queueId: number): Generator<string> {
    let served = Number.MIN_SAFE_INTEGER;
    let groupId = "";
    for (;;) {
      const page = this.sql.flowsPage.all(queueId, served, served, groupId);
      for (const [flow] of page) yield flow;
      if (page.length < flowsPerPage) return;
      [groupId, served] = page[page.length - 1]!;
    }
  }
}
