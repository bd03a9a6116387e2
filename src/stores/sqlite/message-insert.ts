/** The one INSERT of new messages, shared by SQS sends and job submits. */
import type Database from "better-sqlite3";
import { attributesToJson } from "../../core/attributes-json.js";
import { limits } from "../../core/limits.js";
import type { NewMessage } from "../../core/message.js";
import type { KeptCounts } from "./kept-counts.js";
import { type MessageContentCache, contentOf } from "./message-content-cache.js";
import type { MessageRow } from "../codecs/message-row.js";
import { checkPriority } from "./ready-order.js";
import { marks, sizedStatements } from "./sized-statements.js";

export interface MessageInserter {
  /** Inserts one message; returns its seq. */
  (queueId: number, m: NewMessage): number;
  /**
   * Inserts messages with one statement per 10 (cheaper per message than one by one);
   * returns their seqs in order.
   */
  many(queueId: number, messages: readonly NewMessage[]): number[];
  /**
   * Inserts job messages as `many` does, each body left to its job: the job row keeps the input,
   * so the message row holds '' and body_bytes, the size it counts for (readers put the body back
   * from the job: kept-bodies.ts). Every later write of the row then moves a few dozen bytes, not the input.
   */
  jobs(queueId: number, messages: readonly NewMessage[]): number[];
  /**
   * Inserts job messages already in flight, as a receive would leave them (`receive_count` 1,
   * each its receipt token, invisible until its lease ends): jobs leased in the commit that
   * submits them. One statement per 10 and one counts UPDATE, as `many`; returns their seqs in
   * order. Bodies are left to their jobs, as `jobs` does. Not remembered in the cache: they are
   * received already.
   */
  leased(queueId: number, leased: ReadonlyArray<{ message: NewMessage; lease: InsertedLease }>): number[];
  /**
   * Inserts one job message in its requirement class (core's requirements.ts). Set in the INSERT,
   * not by an UPDATE after it: a row that grows in place splits its full page, and a queue of such
   * rows ends up on half-empty pages that every lease and delete then touches twice as many of.
   * Its body is its job's input, kept in job_inputs (migration 052 says why): the row holds '' and
   * the size the body counts for.
   */
  classed(queueId: number, m: NewMessage, requirementClass: string): number;
}

export interface InsertedLease {
  visibleUntilMs: number;
  receiptToken: string;
  receivedAtMs: number;
}

const columns = `queue_id, message_id, body, attributes, system_attributes, body_md5,
    attributes_md5, system_attributes_md5, sent_at_ms, visible_at_ms, priority, group_id, dedup_id, sender_id`;
const rowMarks = `(${marks(14)})`;
const keptRowMarks = `(${marks(15)})`;
/** Rows per multi-row INSERT: SQS's batch limit, so a batch send is one statement. */
const rowsPerStatement = limits.batchEntriesMax;

/**
 * Prepares the statements once (the multi-row ones on first use). Each insert adds its messages
 * to the queue's kept counts. With a cache, each new message's content is remembered for the
 * receive that will read it.
 */
export function prepareMessageInsert(db: Database.Database, counts: KeptCounts, cache?: MessageContentCache): MessageInserter {
  const statementFor = sizedStatements(db, (rows) => `INSERT INTO messages (${columns}) VALUES ${Array(rows).fill(rowMarks).join(", ")}`);

  const keptStatementFor = sizedStatements(db, (rows) => `INSERT INTO messages (${columns}, body_bytes) VALUES ${Array(rows).fill(keptRowMarks).join(", ")}`);

  /**
   * Inserts up to rowsPerStatement messages; AUTOINCREMENT gives one statement's rows consecutive
   * seqs. `bodyKept`: job messages, their bodies left to their jobs (`jobs`).
   */
  const insertChunk = (queueId: number, messages: readonly NewMessage[], seqs: number[], bodyKept: boolean): void => {
    const params: unknown[] = [];
    let bytes = 0;
    for (const m of messages) {
      checkPriority(m.priority);
      const size = Buffer.byteLength(m.body);
      pushRowValues(params, queueId, rowContentOf(m, bodyKept), m.sentAtMs, m.visibleAtMs);
      if (bodyKept) params.push(size);
      bytes += size;
    }
    const last = Number((bodyKept ? keptStatementFor : statementFor)(messages.length).run(...params).lastInsertRowid);
    counts.added(queueId, messages.length, bytes);
    const first = last - messages.length + 1;
    messages.forEach((m, i) => {
      seqs.push(first + i);
      // Remembered as a receive returns it: a hit is never converted back from row columns.
      cache?.remember(first + i, contentOf(m), queueId);
    });
  };

  const inChunks = (queueId: number, messages: readonly NewMessage[], bodyKept: boolean): number[] => {
    const seqs: number[] = [];
    for (let i = 0; i < messages.length; i += rowsPerStatement) insertChunk(queueId, messages.slice(i, i + rowsPerStatement), seqs, bodyKept);
    return seqs;
  };
  const many = (queueId: number, messages: readonly NewMessage[]): number[] => inChunks(queueId, messages, false);
  const jobs = (queueId: number, messages: readonly NewMessage[]): number[] => inChunks(queueId, messages, true);
  const one = (queueId: number, m: NewMessage): number => many(queueId, [m])[0]!;

  const leasedStatementFor = sizedStatements(
    db,
    (rows) => `INSERT INTO messages (${columns}, body_bytes, receive_count, first_received_at_ms, receipt_token) VALUES ${Array(rows).fill(`(${marks(18)})`).join(", ")}`,
  );
  const leased = (queueId: number, all: ReadonlyArray<{ message: NewMessage; lease: InsertedLease }>): number[] => {
    const seqs: number[] = [];
    let bytes = 0;
    for (let i = 0; i < all.length; i += rowsPerStatement) {
      const chunk = all.slice(i, i + rowsPerStatement);
      const params: unknown[] = [];
      for (const { message: m, lease } of chunk) {
        checkPriority(m.priority);
        const size = Buffer.byteLength(m.body);
        pushRowValues(params, queueId, rowContentOf(m, true), m.sentAtMs, lease.visibleUntilMs);
        params.push(size, 1, lease.receivedAtMs, lease.receiptToken);
        bytes += size;
      }
      // One statement's rows get consecutive seqs (as insertChunk's).
      const first = Number(leasedStatementFor(chunk.length).run(...params).lastInsertRowid) - chunk.length + 1;
      for (let k = 0; k < chunk.length; k++) seqs.push(first + k);
    }
    if (all.length > 0) counts.added(queueId, all.length, bytes);
    return seqs;
  };
  const classedStatement = db.prepare(`INSERT INTO messages (${columns}, req_class, body_bytes) VALUES (${marks(16)})`);
  const classed = (queueId: number, m: NewMessage, requirementClass: string): number => {
    checkPriority(m.priority);
    const bytes = Buffer.byteLength(m.body);
    const params: unknown[] = [];
    pushRowValues(params, queueId, rowContentOf(m, true), m.sentAtMs, m.visibleAtMs);
    params.push(requirementClass, bytes);
    const seq = Number(classedStatement.run(...params).lastInsertRowid);
    counts.added(queueId, 1, bytes);
    cache?.remember(seq, contentOf(m), queueId);
    return seq;
  };
  return Object.assign(one, { many, jobs, leased, classed });
}

/** The columns an INSERT sets once, as the row holds them. */
type RowContent = Pick<
  MessageRow,
  "message_id" | "body" | "attributes" | "system_attributes" | "body_md5" | "attributes_md5" | "system_attributes_md5" | "priority" | "group_id" | "dedup_id" | "sender_id"
>;

/** Appends one row's values, in `columns` order (pushed in place: a send batch's hot path). */
function pushRowValues(out: unknown[], queueId: number, c: RowContent, sentAtMs: number, visibleAtMs: number): void {
  out.push(queueId, c.message_id, c.body, c.attributes, c.system_attributes, c.body_md5, c.attributes_md5, c.system_attributes_md5, sentAtMs, visibleAtMs, c.priority, c.group_id, c.dedup_id, c.sender_id);
}

/** `bodyKept`: the body is left to the message's job, the row holds ''. */
function rowContentOf(m: NewMessage, bodyKept = false): RowContent {
  return {
    message_id: m.messageId,
    body: bodyKept ? "" : m.body,
    attributes: attributesToJson(m.attributes),
    system_attributes: attributesToJson(m.systemAttributes),
    body_md5: m.bodyMd5,
    attributes_md5: m.attributesMd5 ?? null,
    system_attributes_md5: m.systemAttributesMd5 ?? null,
    priority: m.priority,
    group_id: m.groupId ?? null,
    dedup_id: m.deduplicationId ?? null,
    sender_id: m.senderId,
  };
}
