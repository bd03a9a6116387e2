/**
 * The PostgreSQL store's Notifier: notices reach this node's subscribers at once, and every other
 * node through NOTIFY on one channel, heard on one LISTEN connection per node. Notices published
 * in one turn of the event loop leave together (a JSON array per NOTIFY, split below PostgreSQL's
 * 8000-byte payload limit), on the listening connection itself: in publish order, never queued
 * behind requests for a pooled connection. A job's record is left out (it can be MiBs): other
 * nodes read it; its version stays, and a job's notice older than one delivered is dropped.
 * The listening connection reconnects with backoff; notices sent while it was down are lost, so
 * on reconnect every queue's waiters are told to look again and jobs that finished meanwhile are
 * told of — a missed notice costs latency, never correctness.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import type { JobEventType } from "../../core/job.js";
import { InProcessNotifier, type NoticeListener, type Notifier, type StoreNotice } from "../../core/notifier.js";
import type { Db, Queryable } from "./db.js";

export const noticeChannel = "sluice_notices";
/** Below NOTIFY's 8000-byte limit, with room for the envelope. */
const payloadMaxBytes = 7_000;
const reconnectFirstDelayMs = 100;
const reconnectMaxDelayMs = 5_000;
/** Jobs whose latest delivered version is remembered (the most recently changed ones). */
const versionsKept = 10_000;

interface Envelope {
  /** The node that sent it: a node hears its own NOTIFYs too, and skips them. */
  from: string;
  notices: StoreNotice[];
}

export interface PostgresNotifierOptions {
  url: string;
  onError?: (err: unknown) => void;
}

export class PostgresNotifier implements Notifier {
  /** This node's subscribers: told of its own notices at once, of other nodes' as they arrive. */
  private readonly local = new InProcessNotifier();
  private readonly nodeId = randomUUID();
  private outbox: StoreNotice[] = [];
  private flushScheduled = false;
  /** The flush under way, if any: close() waits for it before it ends the connection it uses. */
  private flushing: Promise<void> = Promise.resolve();
  private listener: pg.Client | undefined;
  private closed = false;
  /** When the listening connection was lost (notices since then may be missed). */
  private lostAtMs: number | undefined;
  private reconnectDelayMs = reconnectFirstDelayMs;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** Bumped each time the listening connection is lost (Notifier.epoch). */
  private session = 0;
  /** The latest version delivered here, by job, in delivery order (the oldest is forgotten first). */
  private readonly jobVersions = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly options: PostgresNotifierOptions,
  ) {}

  /** Opens the listening connection (the store's open waits for it: a node that can't listen shouldn't serve). */
  async start(): Promise<void> {
    await this.listen();
  }

  /** Which listening session is up (undefined while down or catching up): notices of it are all heard. */
  get epoch(): number | undefined {
    return this.listener !== undefined && this.lostAtMs === undefined ? this.session : undefined;
  }

  publish(notice: StoreNotice): void {
    // This node's own notices go out as core publishes them; their versions are remembered.
    this.isLatest(notice);
    this.local.publish(notice);
    if (this.closed) return;
    const remote: StoreNotice =
      notice.kind === "jobChanged" && notice.job !== undefined ? { kind: "jobChanged", jobId: notice.jobId, events: notice.events, atMs: notice.atMs, version: notice.version } : notice;
    this.outbox.push(remote);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      // After the flush in flight, never beside it: one connection runs one query at a time.
      setImmediate(() => void (this.flushing = this.flushing.then(() => this.flush())));
    }
  }

  subscribe(listener: NoticeListener): () => void {
    return this.local.subscribe(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    await this.flushing;
    await this.flush();
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
  }

  /**
   * False for a job's notice no newer than one already delivered (and remembers the version of one
   * that is): two nodes' NOTIFYs about one job can arrive in either order, and a stream told of
   * the later change must not hear of the earlier one after it.
   */
  private isLatest(notice: StoreNotice): boolean {
    if (notice.kind !== "jobChanged" || notice.version === undefined) return true;
    const delivered = this.jobVersions.get(notice.jobId);
    if (delivered !== undefined && notice.version <= delivered) return false;
    this.jobVersions.delete(notice.jobId);
    this.jobVersions.set(notice.jobId, notice.version);
    if (this.jobVersions.size > versionsKept) this.jobVersions.delete(this.jobVersions.keys().next().value!);
    return true;
  }

  /** Sends what this turn published, as few NOTIFYs as the size limit allows, in one statement. */
  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const notices = this.outbox;
    this.outbox = [];
    if (notices.length === 0) return;
    const payloads: string[] = [];
    let chunk: StoreNotice[] = [];
    let size = 0;
    for (const n of notices) {
      const bytes = Buffer.byteLength(JSON.stringify(n));
      if (chunk.length > 0 && size + bytes > payloadMaxBytes) {
        payloads.push(JSON.stringify({ from: this.nodeId, notices: chunk } satisfies Envelope));
        chunk = [];
        size = 0;
      }
      chunk.push(n);
      size += bytes + 1;
    }
    payloads.push(JSON.stringify({ from: this.nodeId, notices: chunk } satisfies Envelope));
    try {
      // The pool only while the listening connection is being made again.
      const via: Queryable = this.listener ?? this.db;
      await via.query("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", [noticeChannel, payloads]);
    } catch (err) {
      // Other nodes' waiters fall back to their own timers; the write itself is committed.
      this.options.onError?.(err);
    }
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.url });
    client.on("notification", (msg) => {
      if (msg.channel !== noticeChannel || msg.payload === undefined) return;
      let envelope: Envelope;
      try {
        envelope = JSON.parse(msg.payload) as Envelope;
      } catch {
        return; // not ours
      }
      if (envelope.from === this.nodeId) return;
      for (const notice of envelope.notices) if (this.isLatest(notice)) this.local.publish(notice);
    });
    const lost = (err?: unknown): void => {
      if (this.listener !== client) return;
      this.listener = undefined;
      this.session++;
      this.lostAtMs ??= Date.now();
      if (err !== undefined) this.options.onError?.(err);
      client.end().catch(() => undefined);
      this.scheduleReconnect();
    };
    client.on("error", lost);
    client.on("end", () => lost());
    await client.connect();
    // This connection's transactions are NOTIFYs, hints: none needs to wait for a WAL flush.
    await client.query("SET synchronous_commit = off");
    await client.query(`LISTEN ${noticeChannel}`);
    if (this.closed) {
      await client.end();
      return;
    }
    this.listener = client;
    this.reconnectDelayMs = reconnectFirstDelayMs;
    if (this.lostAtMs !== undefined) {
      const since = this.lostAtMs;
      this.lostAtMs = undefined;
      await this.catchUp(since).catch((err: unknown) => this.options.onError?.(err));
    }
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer !== undefined) return;
    const delayMs = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(reconnectMaxDelayMs, delayMs * 2);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.listen().catch((err: unknown) => {
        this.options.onError?.(err);
        this.scheduleReconnect();
      });
    }, delayMs);
    this.reconnectTimer.unref();
  }

  /**
   * What may have been missed while not listening: every queue's waiters look again (and cached
   * queue records go), and jobs that finished since are told of, so held waits end.
   */
  private async catchUp(sinceMs: number): Promise<void> {
    const { rows: queues } = await this.db.query<{ id: number; name: string }>("SELECT id, name FROM queues");
    for (const q of queues) this.local.publish({ kind: "queueChanged", queueId: q.id, queueName: q.name });
    const { rows: jobs } = await this.db.query<{ id: string; status: string; finished_at_ms: number }>(
      "SELECT id, status, finished_at_ms FROM jobs WHERE finished_at_ms >= $1 AND status IN ('succeeded', 'failed', 'canceled')",
      [sinceMs - 1_000],
    );
    for (const j of jobs) this.local.publish({ kind: "jobChanged", jobId: j.id, events: [`job.${j.status}` as JobEventType], atMs: j.finished_at_ms });
  }
}
