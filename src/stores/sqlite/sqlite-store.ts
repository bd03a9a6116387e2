/**
 * The embedded default store: one SQLite file in WAL mode with synchronous=FULL, every write
 * through group commit. better-sqlite3 is synchronous, so reads run directly (they see only
 * committed data: writes run inside flushes, never interleaved with a request's reads).
 */
import Database from "better-sqlite3";
import { attributesFromJson, attributesToJson } from "../../core/attributes-json.js";
import type { NewMessage, StoredMessage } from "../../core/message.js";
import type { QueueConfig, QueueRecord } from "../../core/queue.js";
import type { QueueStats, ReceiptRef, Store, VisibilityChangeResult } from "../../core/store.js";
import { GroupCommitter } from "./group-commit.js";
import { migrate } from "./migrate.js";

interface QueueRow {
  id: number;
  name: string;
  config: string;
  tags: string;
  created_at_ms: number;
  updated_at_ms: number;
  purged_at_ms: number | null;
}

interface MessageRow {
  seq: number;
  queue_id: number;
  message_id: string;
  body: string;
  attributes: string | null;
  system_attributes: string | null;
  body_md5: string;
  attributes_md5: string | null;
  system_attributes_md5: string | null;
  sent_at_ms: number;
  visible_at_ms: number;
  priority: number;
  group_id: string | null;
  dedup_id: string | null;
  sender_id: string;
  receive_count: number;
  first_received_at_ms: number | null;
  receipt_token: string | null;
}

function toQueue(row: QueueRow): QueueRecord {
  return {
    id: row.id,
    name: row.name,
    config: JSON.parse(row.config) as QueueConfig,
    tags: JSON.parse(row.tags) as Record<string, string>,
    createdAtMs: row.created_at_ms,
    updatedAtMs: row.updated_at_ms,
    purgedAtMs: row.purged_at_ms ?? undefined,
  };
}

function toMessage(row: MessageRow): StoredMessage {
  return {
    seq: row.seq,
    queueId: row.queue_id,
    messageId: row.message_id,
    body: row.body,
    attributes: attributesFromJson(row.attributes),
    systemAttributes: attributesFromJson(row.system_attributes),
    bodyMd5: row.body_md5,
    attributesMd5: row.attributes_md5 ?? undefined,
    systemAttributesMd5: row.system_attributes_md5 ?? undefined,
    sentAtMs: row.sent_at_ms,
    visibleAtMs: row.visible_at_ms,
    priority: row.priority,
    groupId: row.group_id ?? undefined,
    deduplicationId: row.dedup_id ?? undefined,
    senderId: row.sender_id,
    receiveCount: row.receive_count,
    firstReceivedAtMs: row.first_received_at_ms ?? undefined,
    receiptToken: row.receipt_token ?? undefined,
  };
}

export interface SqliteStoreOptions {
  /** Path of the database file (":memory:" only for throwaway use: it is not durable). */
  filename: string;
}

export class SqliteStore implements Store {
  readonly db: Database.Database;
  readonly writes: GroupCommitter;
  private readonly sql;

  constructor(options: SqliteStoreOptions) {
    this.db = new Database(options.filename);
    this.db.pragma("journal_mode = WAL");
    // FULL: the WAL is fsynced on every commit, so an acknowledged write survives power loss.
    this.db.pragma("synchronous = FULL");
    this.db.pragma("busy_timeout = 5000");
    this.db.pragma("foreign_keys = ON");
    migrate(this.db);
    this.writes = new GroupCommitter(this.db);
    const db = this.db;
    this.sql = {
      queueByName: db.prepare<[string], QueueRow>("SELECT * FROM queues WHERE name = ?"),
      queueById: db.prepare<[number], QueueRow>("SELECT * FROM queues WHERE id = ?"),
      queueInsert: db.prepare("INSERT INTO queues (name, config, tags, created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?)"),
      queueList: db.prepare<[{ after: string; prefix: string; limit: number }], QueueRow>(
        "SELECT * FROM queues WHERE name > @after AND substr(name, 1, length(@prefix)) = @prefix ORDER BY name LIMIT @limit",
      ),
      queueDelete: db.prepare("DELETE FROM queues WHERE id = ?"),
      tombstoneUpsert: db.prepare(
        "INSERT INTO queue_tombstones (name, deleted_at_ms) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET deleted_at_ms = excluded.deleted_at_ms",
      ),
      tombstoneGet: db.prepare<[string], number>("SELECT deleted_at_ms FROM queue_tombstones WHERE name = ?").pluck(),
      messagesDeleteAll: db.prepare("DELETE FROM messages WHERE queue_id = ?"),
      messageInsert: db.prepare(`INSERT INTO messages (queue_id, message_id, body, attributes, system_attributes, body_md5,
        attributes_md5, system_attributes_md5, sent_at_ms, visible_at_ms, priority, group_id, dedup_id, sender_id)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      messageReady: db.prepare<[number, number, number, number], MessageRow>(
        `SELECT * FROM messages INDEXED BY messages_ready
         WHERE queue_id = ? AND visible_at_ms <= ? AND sent_at_ms >= ?
         ORDER BY priority DESC, visible_at_ms, seq LIMIT ?`,
      ),
      messageLease: db.prepare(
        `UPDATE messages SET visible_at_ms = ?, receive_count = receive_count + 1,
           first_received_at_ms = coalesce(first_received_at_ms, ?), receipt_token = ? WHERE seq = ?`,
      ),
      messageDelete: db.prepare("DELETE FROM messages WHERE seq = ? AND queue_id = ? AND receipt_token = ?"),
      messageForReceipt: db.prepare<[number, number], Pick<MessageRow, "receipt_token" | "visible_at_ms">>(
        "SELECT receipt_token, visible_at_ms FROM messages WHERE seq = ? AND queue_id = ?",
      ),
      messageSetVisibility: db.prepare("UPDATE messages SET visible_at_ms = ? WHERE seq = ?"),
      messageNextVisible: db.prepare<[number, number], number | null>(
        "SELECT min(visible_at_ms) FROM messages WHERE queue_id = ? AND visible_at_ms > ?",
      ).pluck(),
      messageExpire: db.prepare("DELETE FROM messages WHERE queue_id = ? AND sent_at_ms < ?"),
      statsVisible: db.prepare<[number, number, number], { n: number; oldest: number | null }>(
        "SELECT count(*) AS n, min(sent_at_ms) AS oldest FROM messages WHERE queue_id = ? AND visible_at_ms <= ? AND sent_at_ms >= ?",
      ),
      statsHidden: db.prepare<[number, number, number], { inflight: number; delayed: number }>(
        `SELECT coalesce(sum(receive_count > 0), 0) AS inflight, coalesce(sum(receive_count = 0), 0) AS delayed
         FROM messages WHERE queue_id = ? AND visible_at_ms > ? AND sent_at_ms >= ?`,
      ),
    };
  }

  async queueCreate(p: { name: string; config: QueueConfig; tags: Record<string, string>; nowMs: number }): Promise<{ queue: QueueRecord; created: boolean }> {
    return this.writes.run(() => {
      const existing = this.sql.queueByName.get(p.name);
      if (existing) return { queue: toQueue(existing), created: false };
      const info = this.sql.queueInsert.run(p.name, JSON.stringify(p.config), JSON.stringify(p.tags), p.nowMs, p.nowMs);
      return { queue: toQueue(this.sql.queueById.get(Number(info.lastInsertRowid))!), created: true };
    });
  }

  async queueGet(p: { name: string }): Promise<QueueRecord | undefined> {
    const row = this.sql.queueByName.get(p.name);
    return row ? toQueue(row) : undefined;
  }

  async queueList(p: { prefix?: string; afterName?: string; limit: number }): Promise<QueueRecord[]> {
    return this.sql.queueList.all({ after: p.afterName ?? "", prefix: p.prefix ?? "", limit: p.limit }).map(toQueue);
  }

  async queueUpdate(p: { id: number; config?: QueueConfig; tags?: Record<string, string>; purgedAtMs?: number; nowMs: number }): Promise<void> {
    const sets: string[] = ["updated_at_ms = @nowMs"];
    if (p.config) sets.push("config = @config");
    if (p.tags) sets.push("tags = @tags");
    if (p.purgedAtMs !== undefined) sets.push("purged_at_ms = @purgedAtMs");
    const statement = this.db.prepare(`UPDATE queues SET ${sets.join(", ")} WHERE id = @id`);
    await this.writes.run(() =>
      statement.run({
        id: p.id,
        nowMs: p.nowMs,
        config: p.config ? JSON.stringify(p.config) : null,
        tags: p.tags ? JSON.stringify(p.tags) : null,
        purgedAtMs: p.purgedAtMs ?? null,
      }),
    );
  }

  async queueDelete(p: { id: number; nowMs: number }): Promise<void> {
    await this.writes.run(() => {
      const row = this.sql.queueById.get(p.id);
      if (!row) return;
      this.sql.messagesDeleteAll.run(p.id);
      this.sql.queueDelete.run(p.id);
      this.sql.tombstoneUpsert.run(row.name, p.nowMs);
    });
  }

  async queueDeletedAt(p: { name: string }): Promise<number | undefined> {
    return this.sql.tombstoneGet.get(p.name) ?? undefined;
  }

  async queueStats(p: { queueId: number; nowMs: number; minSentAtMs: number }): Promise<QueueStats> {
    const visible = this.sql.statsVisible.get(p.queueId, p.nowMs, p.minSentAtMs)!;
    const hidden = this.sql.statsHidden.get(p.queueId, p.nowMs, p.minSentAtMs)!;
    return { visible: visible.n, inFlight: hidden.inflight, delayed: hidden.delayed, oldestVisibleSentAtMs: visible.oldest ?? undefined };
  }

  async messageSend(p: { queueId: number; messages: NewMessage[] }): Promise<StoredMessage[]> {
    return this.writes.run(() =>
      p.messages.map((m) => {
        const info = this.sql.messageInsert.run(
          p.queueId,
          m.messageId,
          m.body,
          attributesToJson(m.attributes),
          attributesToJson(m.systemAttributes),
          m.bodyMd5,
          m.attributesMd5 ?? null,
          m.systemAttributesMd5 ?? null,
          m.sentAtMs,
          m.visibleAtMs,
          m.priority,
          m.groupId ?? null,
          m.deduplicationId ?? null,
          m.senderId,
        );
        return { ...m, seq: Number(info.lastInsertRowid), queueId: p.queueId, receiveCount: 0 };
      }),
    );
  }

  async messageReceive(p: { queueId: number; max: number; nowMs: number; visibleUntilMs: number; minSentAtMs: number; receiptToken: string }): Promise<StoredMessage[]> {
    return this.writes.run(() => {
      const rows = this.sql.messageReady.all(p.queueId, p.nowMs, p.minSentAtMs, p.max);
      return rows.map((row) => {
        this.sql.messageLease.run(p.visibleUntilMs, p.nowMs, p.receiptToken, row.seq);
        return toMessage({
          ...row,
          visible_at_ms: p.visibleUntilMs,
          receive_count: row.receive_count + 1,
          first_received_at_ms: row.first_received_at_ms ?? p.nowMs,
          receipt_token: p.receiptToken,
        });
      });
    });
  }

  async messageDelete(p: { queueId: number; receipts: ReceiptRef[] }): Promise<boolean[]> {
    return this.writes.run(() => p.receipts.map((r) => this.sql.messageDelete.run(r.seq, p.queueId, r.token).changes > 0));
  }

  async messageChangeVisibility(p: { queueId: number; nowMs: number; entries: Array<ReceiptRef & { visibleAtMs: number }> }): Promise<VisibilityChangeResult[]> {
    return this.writes.run(() =>
      p.entries.map((e): VisibilityChangeResult => {
        const row = this.sql.messageForReceipt.get(e.seq, p.queueId);
        if (!row || row.receipt_token !== e.token) return "notFound";
        if (row.visible_at_ms <= p.nowMs) return "notInFlight";
        this.sql.messageSetVisibility.run(e.visibleAtMs, e.seq);
        return "changed";
      }),
    );
  }

  async messageNextVisibleAt(p: { queueId: number; nowMs: number }): Promise<number | undefined> {
    return this.sql.messageNextVisible.get(p.queueId, p.nowMs) ?? undefined;
  }

  async messagePurge(p: { queueId: number }): Promise<number> {
    return this.writes.run(() => this.sql.messagesDeleteAll.run(p.queueId).changes);
  }

  async messageExpire(p: { queueId: number; minSentAtMs: number }): Promise<number> {
    return this.writes.run(() => this.sql.messageExpire.run(p.queueId, p.minSentAtMs).changes);
  }

  async close(): Promise<void> {
    this.writes.close();
    this.db.close();
  }
}

export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(options);
}
