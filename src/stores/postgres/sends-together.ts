/**
 * Plain sends (no group, no deduplication id) that arrive in one turn of the event loop — from
 * many requests, for any queues — go to the database as one INSERT: one statement and one commit
 * (one WAL flush) for all of them instead of one each. Each send is answered with its own seqs
 * once that statement commits. If one of the queues was deleted meanwhile (a foreign key
 * violation fails the whole statement), each send is tried again alone, so only that queue's fail.
 */
import type { NewMessage } from "../../core/message.js";
import type { Db } from "./db.js";
import { columnArrays, insertManyQueuesStatement, insertMessages } from "./message-insert.js";
import { isForeignKeyViolation } from "./rows.js";
import { type Pending, TurnBatch } from "./turn-batch.js";

interface Send {
  queueId: number;
  messages: readonly NewMessage[];
}

export class SendsTogether {
  private readonly batch = new TurnBatch<Send, number[]>((calls) => this.write(calls));

  constructor(private readonly db: Db) {}

  /** Inserts the messages with the other sends of this turn; resolves with their seqs in order. */
  send(queueId: number, messages: readonly NewMessage[]): Promise<number[]> {
    return this.batch.add({ queueId, messages });
  }

  private async write(calls: Array<Pending<Send, number[]>>): Promise<void> {
    if (calls.length === 1) return this.alone(calls[0]!);
    const all = calls.flatMap((c) => c.item.messages);
    try {
      const queueIds = calls.flatMap((c) => c.item.messages.map(() => c.item.queueId));
      const { rows } = await this.db.query<{ seq: number; message_id: string }>(insertManyQueuesStatement, [queueIds, ...columnArrays(all)]);
      const seqOf = new Map(rows.map((r) => [r.message_id, r.seq]));
      for (const c of calls) c.resolve(c.item.messages.map((m) => seqOf.get(m.messageId)!));
    } catch (err) {
      if (!isForeignKeyViolation(err)) throw err;
      await Promise.all(calls.map((c) => this.alone(c)));
    }
  }

  private async alone(c: Pending<Send, number[]>): Promise<void> {
    try {
      c.resolve(await insertMessages(this.db, c.item.queueId, c.item.messages));
    } catch (err) {
      c.reject(err);
    }
  }
}
