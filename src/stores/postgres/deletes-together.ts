/**
 * Deletes by message alone (standard queues: any receipt of a message deletes it) that arrive in
 * one turn of the event loop, for any queues, go to the database as one DELETE: one statement and
 * one commit for all of them. Each delete gets the rows it removed; a message two of them listed
 * counts for the first, as two deletes one after the other would answer.
 */
import type { Db, NamedStatement } from "./db.js";
import { type Pending, TurnBatch } from "./turn-batch.js";

export interface DeletedRow {
  seq: number;
  receipt_token: string;
  group_id: string | null;
}

interface Delete {
  queueId: number;
  seqs: readonly number[];
}

const statement: NamedStatement = {
  name: "sluice_delete_messages_queues",
  text: `DELETE FROM messages m USING unnest($1::bigint[], $2::bigint[]) AS r (queue_id, seq)
  WHERE m.seq = r.seq AND m.queue_id = r.queue_id
  RETURNING m.seq, m.receipt_token, m.group_id`,
};

export class DeletesTogether {
  private readonly batch = new TurnBatch<Delete, DeletedRow[]>((calls) => this.write(calls));

  constructor(private readonly db: Db) {}

  /** Deletes the queue's messages with these seqs, with the other deletes of this turn; resolves with the rows it removed. */
  delete(queueId: number, seqs: readonly number[]): Promise<DeletedRow[]> {
    return this.batch.add({ queueId, seqs });
  }

  private async write(calls: Array<Pending<Delete, DeletedRow[]>>): Promise<void> {
    const { rows } = await this.db.query<DeletedRow>(statement, [calls.flatMap((c) => c.item.seqs.map(() => c.item.queueId)), calls.flatMap((c) => c.item.seqs)]);
    const removed = new Map(rows.map((r) => [r.seq, r]));
    for (const c of calls) {
      const mine: DeletedRow[] = [];
      for (const seq of c.item.seqs) {
        const row = removed.get(seq);
        if (row) {
          mine.push(row);
          removed.delete(seq);
        }
      }
      c.resolve(mine);
    }
  }
}
